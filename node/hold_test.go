package node

import (
	"testing"

	"github.com/heatsink-hpc/heatsink/hold"
)

// TestHoldModelFromARealH100Run: the model --hold takes from an earlier run
// is heatsink's own load fit of it. On the recorded H100 DGEMM run (39 °C
// idle, 57 °C a second into the load, 69 °C at the end) it is a fast jump of
// most of the rise and a slow part with τ of some seconds.
func TestHoldModelFromARealH100Run(t *testing.T) {
	tg, err := hold.ParseTarget("gpu_core<=57")
	if err != nil {
		t.Fatal(err)
	}
	m, err := ModelFromRun("../analysis/testdata/h100-dgemm", tg)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%+v", m)
	if m.BaseC < 38 || m.BaseC > 42 || m.RiseC() < 25 || m.RiseC() > 33 || m.FastC < 12 || m.TauS < 5 || m.TauS > 60 {
		t.Errorf("model %+v is not the recording's (idle ~39-41 °C, rise ~29 °C, a jump of ~17 °C, τ of seconds)", m)
	}
	if _, err := ModelFromRun("../analysis/testdata/h100-dgemm", hold.Target{Component: "coolant", SetC: 40}); err == nil {
		t.Error("a model of a coolant from a run without a tank")
	}
}
