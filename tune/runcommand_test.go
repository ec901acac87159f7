package tune

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// The recommended command line, pasted into a shell, must give the shell
// back the very arguments the tuner ran: a real sh splits it here.
func TestRunCommandLineSurvivesAShell(t *testing.T) {
	for _, args := range [][]string{
		{"--workload", "dgemm", "--set", "n=8192"},
		{"--", "sh", "-c", "echo score: $((3*4+2)); sleep 0.4"},
		{"--", "./bench", "it's", `a "quoted" word`, "tab\there", "*.c", "a|b&c;d", "(x)", "{p}"},
		{"--", "echo", "`id`", `back\slash`, "~", "#x", "[ab]", "!", "", "new\nline", "x=~"},
	} {
		line := (&Report{RunCommand: args}).RunCommandLine()
		out, err := exec.Command("sh", "-c", `printf '%s\0' `+line).Output()
		if err != nil {
			t.Fatalf("sh -c printf %s: %v", line, err)
		}
		got := strings.Split(strings.TrimSuffix(string(out), "\x00"), "\x00")
		if !slices.Equal(got, args) {
			t.Errorf("%q: a shell reads %q, want %q", line, got, args)
		}
	}
}
