package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// The shells' completion scripts ask the binary itself (`heatsink
// __complete ARGS... PARTIAL`); what it answers is what Tab offers. The
// candidates are asked for here as bash, zsh and fish ask for them, in a
// directory holding run directories and others.
func TestCompletionOffersWorkloadsSetKeysAndRunDirs(t *testing.T) {
	bin := heatsinkBinary(t)
	dir := t.TempDir()
	for _, d := range []string{"run1", "fleet/node01", "fleet/node02", "notes", ".hidden-run"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, d := range []string{"run1", "fleet/node01", "fleet/node02", ".hidden-run"} {
		if err := os.WriteFile(filepath.Join(dir, d, "run.json"), []byte("{}\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		args       []string
		want       []string // exactly these candidates, in this order
		directives string   // the directive line's number
	}{
		{[]string{"run", "--workload", ""}, []string{"cpu-stream", "dgemm", "ezlda", "full-w2v", "ri", "stream"}, ":4"},
		{[]string{"run", "--workload", "d"}, []string{"dgemm"}, ":4"},
		{[]string{"survey", "--workload", "cpu"}, []string{"cpu-stream"}, ":4"},
		{[]string{"run", "--workload", "dgemm", "--set", ""}, []string{"device=", "n=", "impl=", "alpha=", "beta=", "reps=", "samples=", "seed="}, ":6"},
		{[]string{"run", "--workload", "dgemm", "--set", "impl="}, []string{"impl=auto", "impl=cublas", "impl=builtin"}, ":4"},
		{[]string{"run", "--set", ""}, nil, ":4"},
		{[]string{"report", ""}, []string{"run1", "fleet/"}, ":6"},
		{[]string{"report", "fleet/"}, []string{"fleet/node01", "fleet/node02"}, ":4"},
		{[]string{"report", "fleet/node01", "fleet/"}, []string{"fleet/node02"}, ":4"},
		{[]string{"compare", "r"}, []string{"run1"}, ":4"},
	}
	for _, tt := range tests {
		name := strings.Join(tt.args, " ")
		cmd := exec.Command(bin, append([]string{"__complete"}, tt.args...)...)
		cmd.Dir = dir
		out, err := cmd.Output()
		if err != nil {
			t.Errorf("heatsink __complete %s: %v", name, err)
			continue
		}
		lines := strings.Split(strings.TrimSpace(string(out)), "\n")
		directive := lines[len(lines)-1]
		var got []string
		for _, l := range lines[:len(lines)-1] {
			if strings.HasPrefix(l, "_activeHelp_") {
				continue
			}
			cand, _, _ := strings.Cut(l, "\t")
			got = append(got, cand)
		}
		if !slices.Equal(got, tt.want) || directive != tt.directives {
			t.Errorf("heatsink __complete %s:\ngot  %q %s\nwant %q %s", name, got, directive, tt.want, tt.directives)
		}
	}
}
