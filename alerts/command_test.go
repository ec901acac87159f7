package alerts_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/heatsink-hpc/heatsink/alerts"
	"github.com/heatsink-hpc/heatsink/point"
)

func TestCommandGetsTheAlertInItsEnvironment(t *testing.T) {
	out := filepath.Join(t.TempDir(), "alerts.log")
	cfg := parseRules(t, `
alerts:
  commands:
    note:
      argv: [sh, -c, 'echo "$HEATSINK_ALERT_STATE $HEATSINK_ALERT_RULE $HEATSINK_ALERT_SEVERITY $HEATSINK_ALERT_VALUE $HEATSINK_ALERT_THRESHOLD gpu=$HEATSINK_ALERT_TAG_GPU" >> "$1"', sh, `+out+`]
  rules:
    - {name: gpu_hot, severity: critical, measurement: gpu, field: temp_c,
       threshold: {op: ">=", value: slowdown_c - 5}, actions: ["command:note"]}`)
	e, err := alerts.NewEngine(cfg, alerts.Options{Logger: quietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	e.Write([]point.Point{gpu(1, f{"temp_c", 88.0}, f{"slowdown_c", 90.0})})
	waitFor(t, "the firing's command", func() bool { b, _ := os.ReadFile(out); return len(b) > 0 })
	e.Write([]point.Point{gpu(1, f{"temp_c", 70.0})})
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	want := "firing gpu_hot critical 88 85 gpu=1\ncleared gpu_hot critical 70 85 gpu=1\n"
	if string(b) != want {
		t.Errorf("command saw\n%s\nwant\n%s", b, want)
	}
}

func TestCommandIsKilledAtItsTimeout(t *testing.T) {
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "pid")
	// The shell's child sleeps on: the whole group must go.
	cfg := parseRules(t, `
alerts:
  commands:
    hang: {argv: [sh, -c, 'sleep 60 & echo $! > `+pidFile+`; wait'], timeout: 300ms}
  rules:
    - {name: hot, measurement: gpu, field: temp_c, threshold: {op: ">", value: 85}, actions: ["command:hang"]}`)
	e, err := alerts.NewEngine(cfg, alerts.Options{Logger: quietLogger(), CloseTimeout: 20 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	e.Write([]point.Point{gpu(0, f{"temp_c", 88.0})})
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("the command ran %v past its 300ms timeout", d)
	}
	b, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	pid := strings.TrimSpace(string(b))
	waitFor(t, "the command's child to die", func() bool {
		st, err := os.ReadFile("/proc/" + pid + "/stat")
		return err != nil || strings.Contains(string(st), ") Z ")
	})
}

// An alert command does not see the secrets heatsink read from its own
// environment (Options.DropEnv), and does see the rest of it.
func TestCommandDoesNotInheritTheSecretsHeatsinkRead(t *testing.T) {
	t.Setenv("HS_TEST_TOKEN", "hunter2")
	t.Setenv("HS_TEST_OTHER", "kept")
	out := filepath.Join(t.TempDir(), "env.log")
	cfg := parseRules(t, `
alerts:
  commands:
    note:
      argv: [sh, -c, 'echo "${HS_TEST_TOKEN-unset} $HS_TEST_OTHER" >> "$1"', sh, `+out+`]
  rules:
    - {name: gpu_hot, severity: critical, measurement: gpu, field: temp_c,
       threshold: {op: ">=", value: 80}, actions: ["command:note"]}`)
	e, err := alerts.NewEngine(cfg, alerts.Options{Logger: quietLogger(), DropEnv: []string{"HS_TEST_TOKEN"}})
	if err != nil {
		t.Fatal(err)
	}
	e.Write([]point.Point{gpu(1, f{"temp_c", 88.0})})
	waitFor(t, "the firing's command", func() bool { b, _ := os.ReadFile(out); return len(b) > 0 })
	e.Close()
	if b, _ := os.ReadFile(out); string(b) != "unset kept\n" {
		t.Errorf("the command saw %q, want %q", b, "unset kept\n")
	}
}
