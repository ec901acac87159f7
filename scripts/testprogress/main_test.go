package main

import (
	"bytes"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"
)

// Real go test -json output of testdata/suite (a module with a passing, a
// failing, a slow and a test-less package) read as scripts/test.sh pipes
// it: a line per package as go test prints it, the failing test's output
// under its FAIL line and nothing of the passing ones, the slow package
// named while it runs, the closing counts and exit status 1.
func TestProgressOfARealSuite(t *testing.T) {
	cmd := exec.Command("go", "test", "-json", "-count=1", "./...")
	cmd.Dir = "testdata/suite"
	cmd.Env = append(cmd.Environ(), "GOWORK=off", "GOFLAGS=")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	code := run(stdout, &out, 200*time.Millisecond)
	if err := cmd.Wait(); err == nil {
		t.Error("go test of the suite succeeded; its fails package must fail")
	}
	log := out.String()
	if code != 1 {
		t.Errorf("exit status %d with a failing package, want 1", code)
	}
	for _, want := range []string{
		`(?m)^ok  \tsuite/passes\t[0-9.]+s$`,
		`(?m)^ok  \tsuite/slow\t[0-9.]+s$`,
		`(?m)^\?   \tsuite/notests\t\[no test files\]$`,
		`(?m)^FAIL\tsuite/fails\t[0-9.]+s\n(    \| .*\n)*    \| .*want 2, got 3`,
		`(?m)^\.\.\. running: .*suite/slow \(`,
		`(?m)^FAILED packages: suite/fails$`,
		`(?m)^tests: 4 passed, 2 failed, 1 skipped$`,
	} {
		if !regexp.MustCompile(want).MatchString(log) {
			t.Errorf("the log lacks %s:\n%s", want, log)
		}
	}
	for _, absent := range []string{"a passing test's log", "quiet when it passes", "=== RUN"} {
		if strings.Contains(log, absent) {
			t.Errorf("the log shows %q, output of tests that passed:\n%s", absent, log)
		}
	}
}
