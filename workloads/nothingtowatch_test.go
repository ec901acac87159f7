package workloads

import (
	"context"
	"strings"
	"testing"
	"time"
)

// On a machine with no watched temperature (a VM), the nominal wait and an
// auto cooldown end at once and say why, instead of holding for nothing.
func TestWaitsWithNothingToWatchEndAtOnceWithTheReason(t *testing.T) {
	cfg := testConfig()
	cfg.Hold = 20 * time.Second // far longer than the test may take
	h := &heater{p: newPlant(40, 40, 70, time.Second), step: 100 * time.Millisecond}
	r := newTestRunner(t, Options{Workload: h, Config: cfg,
		Protocol: Protocol{Baseline: 300 * time.Millisecond, WaitNominal: true, Load: 300 * time.Millisecond, CooldownAuto: true}})
	g := newRig(t, r, 100*time.Millisecond) // no source: nothing to watch
	start := time.Now()
	out, run := g.run(t, context.Background(), r)
	if out.Status != StatusComplete {
		t.Fatalf("outcome %+v", out)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("run took %v; with nothing to watch the waits should not hold", d)
	}
	for _, name := range []string{PhaseWaitNominal, PhaseCooldown} {
		ph, ok := run.Meta.PhaseNamed(name)
		if !ok || ph.End == nil {
			t.Fatalf("no finished %s phase: %+v", name, run.Meta.Phases)
		}
		if d := ph.End.Sub(ph.Start); d > time.Second {
			t.Errorf("%s lasted %v", name, d)
		}
	}
	var said int
	for _, e := range events(run, "phase_end") {
		if msg, _ := e.Field("message"); strings.Contains(msg.StringV(), "no watched temperature to wait for") {
			said++
		}
	}
	if said != 2 {
		t.Errorf("%d phase ends say there was no watched temperature, want 2 (wait and cooldown)", said)
	}
}
