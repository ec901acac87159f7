package buildinfo

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"
)

func TestFromBuildInfo(t *testing.T) {
	stamped := &debug.BuildInfo{
		GoVersion: "go1.26.8",
		Main:      debug.Module{Path: "github.com/heatsink-hpc/heatsink", Version: "v0.0.0-20261124203951-f1d4629c0a1b+dirty"},
		Settings: []debug.BuildSetting{
			{Key: "GOOS", Value: "linux"}, {Key: "GOARCH", Value: "arm64"},
			{Key: "vcs", Value: "git"}, {Key: "vcs.revision", Value: "f1d4629c0a1b"},
			{Key: "vcs.time", Value: "2026-11-24T20:39:51Z"}, {Key: "vcs.modified", Value: "true"},
		},
	}
	for _, tc := range []struct {
		name       string
		bi         *debug.BuildInfo
		ver, rev   string
		wantLine   []string
		wantValues map[string]string
	}{
		{"git checkout with changes", stamped, "", "",
			[]string{"heatsink v0.0.0-20261124203951-f1d4629c0a1b+dirty", "revision f1d4629c0a1b", "modified", "go1.26.8 linux/arm64"},
			map[string]string{"revision": "f1d4629c0a1b", "vcs_modified": "true", "vcs_time": "2026-11-24T20:39:51Z"}},
		{"-ldflags overrides", stamped, "v0.4.0", "0123abcd", []string{"heatsink v0.4.0 (revision 0123abcd)"},
			map[string]string{"heatsink": "v0.4.0", "revision": "0123abcd", "vcs_modified": "false"}},
		{"no build info", nil, "", "", []string{"heatsink (devel) (no VCS revision:"}, map[string]string{"heatsink": "(devel)"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			i := FromBuildInfo(tc.bi, tc.ver, tc.rev)
			for _, w := range tc.wantLine {
				if !strings.Contains(i.String(), w) {
					t.Errorf("%q lacks %q", i.String(), w)
				}
			}
			v := i.Versions()
			for k, w := range tc.wantValues {
				if v[k] != w {
					t.Errorf("versions[%s] = %q, want %q (%v)", k, v[k], w, v)
				}
			}
		})
	}
}

// A binary built by go build in a git checkout knows its commit, and
// -ldflags -X replaces what it knows. The checkout is a fresh repository
// holding this package under its real import path, so the -X names are
// the ones the README documents. (A linked git worktree is not stamped at
// all: Go looks for a .git directory, golang/go#58218.)
func TestABinaryBuiltFromGitKnowsItsRevision(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	repo := t.TempDir()
	src, err := os.ReadFile("buildinfo.go")
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]string{
		"go.mod":                 "module github.com/heatsink-hpc/heatsink\n\ngo 1.26\n",
		"buildinfo/buildinfo.go": string(src),
		"cmd/probe/main.go":      "package main\n\nimport (\n\t\"fmt\"\n\n\t\"github.com/heatsink-hpc/heatsink/buildinfo\"\n)\n\nfunc main() { fmt.Println(buildinfo.Read()) }\n",
	}
	for name, text := range files {
		path := filepath.Join(repo, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	git := func(args ...string) string {
		cmd := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@example.org"}, args...)...)
		cmd.Dir = repo
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	git("init", "-q")
	git("add", "-A")
	git("commit", "-qm", "probe")
	head := git("rev-parse", "HEAD")
	build := func(flags ...string) string {
		bin := filepath.Join(t.TempDir(), "probe")
		// -buildvcs=true: a GOFLAGS=-buildvcs=false in the environment
		// would otherwise hide what a plain go build does in a clone.
		args := append(append([]string{"build", "-buildvcs=true", "-o", bin}, flags...), "./cmd/probe")
		cmd := exec.Command("go", args...)
		cmd.Dir = repo
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("go %v: %v\n%s", args, err, out)
		}
		out, err := exec.Command(bin).Output()
		if err != nil {
			t.Fatal(err)
		}
		return string(out)
	}
	if out := build(); !strings.Contains(out, "revision "+head) || strings.Contains(out, "modified") {
		t.Errorf("clean checkout: %q, want revision %s, unmodified", out, head)
	}
	if err := os.WriteFile(filepath.Join(repo, "NOTES"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if out := build(); !strings.Contains(out, "revision "+head+", modified") {
		t.Errorf("changed checkout: %q, want it marked modified", out)
	}
	out := build("-ldflags", "-X github.com/heatsink-hpc/heatsink/buildinfo.version=v9.9.9 -X github.com/heatsink-hpc/heatsink/buildinfo.revision=feedface")
	if !strings.HasPrefix(out, "heatsink v9.9.9 (revision feedface)") {
		t.Errorf("with -ldflags: %q", out)
	}
}
