package alerts

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/heatsink-hpc/heatsink/configs/secret"
)

// command runs a program per alert, in its own process group so that a
// timeout kills whatever it started too.
type command struct {
	name    string
	argv    []string
	timeout time.Duration
	dropEnv []string
	q       *queue
}

func newCommand(name string, c Command, dropEnv []string) *command {
	t := c.Timeout
	if t == 0 {
		t = defaultCommandTimeout
	}
	return &command{name: name, argv: c.Argv, timeout: t, dropEnv: dropEnv}
}

// maxOutput is how much of a failing command's output is logged.
const maxOutput = 2048

func (c *command) run(ctx context.Context, a *alert) error {
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, c.argv[0], c.argv[1:]...)
	cmd.Env = append(secret.Environ(os.Environ(), c.dropEnv), a.env()...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = time.Second
	var out headBuffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return fmt.Errorf("%s: killed after its %v timeout", c.argv[0], c.timeout)
	}
	if err != nil {
		if o := strings.TrimSpace(string(out.b)); o != "" {
			return fmt.Errorf("%s: %w: %s", c.argv[0], err, o)
		}
		return fmt.Errorf("%s: %w", c.argv[0], err)
	}
	return nil
}

// env is the alert as HEATSINK_ALERT_* variables; each tag also appears as
// HEATSINK_ALERT_TAG_<KEY> (upper case).
func (a *alert) env() []string {
	f := func(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
	env := []string{
		"HEATSINK_ALERT_RULE=" + a.Rule,
		"HEATSINK_ALERT_STATE=" + a.State,
		"HEATSINK_ALERT_SEVERITY=" + a.Severity,
		"HEATSINK_ALERT_MEASUREMENT=" + a.Measurement,
		"HEATSINK_ALERT_FIELD=" + a.Field,
		"HEATSINK_ALERT_SERIES=" + a.Series,
		"HEATSINK_ALERT_MESSAGE=" + a.Message,
		"HEATSINK_ALERT_TIME=" + a.Time.UTC().Format(time.RFC3339Nano),
		"HEATSINK_ALERT_STARTS_AT=" + a.StartsAt.UTC().Format(time.RFC3339Nano),
	}
	if a.HasValue {
		env = append(env, "HEATSINK_ALERT_VALUE="+f(a.Value), "HEATSINK_ALERT_THRESHOLD="+f(a.Threshold))
	}
	for _, t := range a.Tags {
		env = append(env, "HEATSINK_ALERT_TAG_"+strings.ToUpper(t.Key)+"="+t.Value)
	}
	return env
}

// headBuffer keeps the first maxOutput bytes written to it.
type headBuffer struct{ b []byte }

func (t *headBuffer) Write(p []byte) (int, error) {
	if room := maxOutput - len(t.b); room > 0 {
		t.b = append(t.b, p[:min(room, len(p))]...)
	}
	return len(p), nil
}
