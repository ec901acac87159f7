package alerts_test

import (
	"slices"
	"sync"
	"testing"

	"github.com/heatsink-hpc/heatsink/configs"
)

// holdJob is a job that can be held: it records the holds asked of it.
type holdJob struct {
	groupJob
	mu    sync.Mutex
	holds []string
}

func (j *holdJob) Hold(target string) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.holds = append(j.holds, target)
	return nil
}

func (j *holdJob) asked() []string {
	j.mu.Lock()
	defer j.mu.Unlock()
	return slices.Clone(j.holds)
}

// TestHoldActionSwitchesTheHoldOnWhenItsRuleFires: hold:TARGET asks the job
// to hold when the rule fires, once per firing, records a guard_hold event,
// and clearing does not switch it off (the hold keeps the component under
// the condition that fired).
func TestHoldActionSwitchesTheHoldOnWhenItsRuleFires(t *testing.T) {
	job := &holdJob{}
	src := &gpuSource{}
	src.set(70)
	rec := runGuard(t, `
alerts:
  rules:
    - {name: gpu_warm, measurement: gpu, field: temp_c,
       threshold: {op: ">=", value: 80, margin: 2}, actions: ["hold:gpu_core<=75"]}`, src, job)
	src.settle(t, 3)
	if got := job.asked(); len(got) != 0 {
		t.Fatalf("held before the rule fired: %q", got)
	}
	src.set(82)
	waitFor(t, "the hold", func() bool { return len(job.asked()) == 1 })
	src.set(70)
	src.settle(t, 5)
	if got := job.asked(); !slices.Equal(got, []string{"gpu_core<=75"}) {
		t.Errorf("holds asked %q", got)
	}
	if got := job.done(); len(got) != 0 {
		t.Errorf("the hold action paused or resumed the job itself: %q", got)
	}
	if !slices.Contains(rec.kinds(), "guard_hold") {
		t.Errorf("events %q have no guard_hold", rec.kinds())
	}
}

// TestHoldActionNeedsItsTarget: hold alone is refused at load.
func TestHoldActionNeedsItsTarget(t *testing.T) {
	for _, a := range []string{"hold", "hold:gpu_core"} {
		_, err := configs.Parse("rules.yaml", []byte(`
alerts:
  rules:
    - {name: r, measurement: gpu, field: temp_c, threshold: {op: ">=", value: 80}, actions: ["`+a+`"]}`))
		if err == nil {
			t.Errorf("action %q accepted", a)
		}
	}
}
