package workloads

import (
	"context"
	"testing"
	"time"
)

// Progress follows the run: each phase with its plan, iterations and the
// last iteration's metrics during the load, nothing once it is over.
func TestProgressFollowsTheRun(t *testing.T) {
	pl := newPlant(40, 40, 70, time.Second)
	h := &heater{p: pl, step: 100 * time.Millisecond}
	r := newTestRunner(t, Options{Workload: h, Config: testConfig(),
		Protocol: Protocol{Baseline: 400 * time.Millisecond, Load: 600 * time.Millisecond, Cooldown: 300 * time.Millisecond}})
	g := newRig(t, r, 100*time.Millisecond, thermalSource{pl})
	seen := map[string]Progress{}
	done := make(chan struct{})
	go func() {
		defer close(done)
		g.run(t, context.Background(), r)
	}()
	for running := true; running; {
		select {
		case <-done:
			running = false
		case <-time.After(20 * time.Millisecond):
			if p := r.Progress(); p.Phase != "" {
				seen[p.Phase] = p
			}
		}
	}
	if b := seen[PhaseBaseline]; b.Planned != 400*time.Millisecond || b.Elapsed <= 0 {
		t.Errorf("baseline %+v", b)
	}
	if l := seen[PhaseLoad]; l.Planned != 600*time.Millisecond || l.Iterations == 0 || l.Metrics["runtime_s"] <= 0 {
		t.Errorf("load %+v", l)
	}
	if _, ok := seen[PhaseCooldown]; !ok {
		t.Errorf("no cooldown seen: %v", seen)
	}
	if p := r.Progress(); p.Phase != "" || p.Iterations == 0 {
		t.Errorf("after the run: %+v", p)
	}
}
