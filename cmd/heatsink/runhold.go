package main

import (
	"errors"
	"fmt"
	"time"

	"github.com/heatsink-hpc/heatsink/hold"
	"github.com/heatsink-hpc/heatsink/node"
	"github.com/spf13/pflag"
)

func addHoldFlags(f *pflag.FlagSet, rf *runFlags) {
	f.StringVar(&rf.hold, "hold", "", "hold a component at or under a set point by pacing the job over the load: gpu_core<=65, gpu_mem:1<=80, cpu_package<=85, coolant<=45")
	f.Float64Var(&rf.duty, "duty", -1, "with --hold, run the job at this fixed duty (0 to 1) instead of the controller's, judged against the set point: the yardstick for the hold")
	f.DurationVar(&rf.holdPeriod, "hold-period", 0, "with --hold, the duty cycle's period (default: from the model: 10ms for a built-in workload on a GPU, 50ms for a command, docs/hold.md)")
	f.StringVar(&rf.holdModel, "hold-model", "", "with --hold, the earlier run directory of this job to take the component's model from (default: the newest beside --out)")
}

// holdOptions reads --hold and --hold-model; nil without --hold.
func holdOptions(rf *runFlags) (*node.HoldOptions, error) {
	if rf.hold == "" {
		if rf.holdModel != "" || rf.duty != -1 || rf.holdPeriod != 0 {
			return nil, errHoldModelAlone
		}
		return nil, nil
	}
	t, err := hold.ParseTarget(rf.hold)
	if err != nil {
		return nil, err
	}
	if rf.holdPeriod < 0 || (rf.holdPeriod > 0 && rf.holdPeriod < time.Millisecond) {
		return nil, fmt.Errorf("--hold-period %v: a period is 1ms or more", rf.holdPeriod)
	}
	ho := &node.HoldOptions{Target: t, ModelFrom: rf.holdModel, Period: rf.holdPeriod}
	if rf.duty != -1 {
		if !(rf.duty >= 0 && rf.duty <= 1) {
			return nil, fmt.Errorf("--duty %v: a duty is from 0 (paused) to 1 (free)", rf.duty)
		}
		ho.FixedDuty = &rf.duty
	}
	return ho, nil
}

var errHoldModelAlone = errors.New("--hold-model, --hold-period and --duty go with --hold: give --hold too")

const holdLong = `

With --hold COMPONENT<=SET_C (gpu_core<=65, gpu_mem:1<=80, cpu_package<=85,
coolant<=45), a controller paces the job over the load so that the hottest
such component settles at the set point, never runs much above it, and runs
free below it. It acts on the job only, never on a card's settings: a
command's process group is stopped and continued (SIGSTOP/SIGCONT) with a
duty cycle, a built-in workload waits between kernel launches or passes. Its
model (idle, the fast and slow rise, τ) is heatsink's load fit of an earlier
run of the same job on this node: --hold-model DIR, or the newest finished
run beside --out; it is refined as the job runs. With no model, or one the
plant contradicts, it holds with the plain pause (stopped above the set
point, free a degree under it) and says so. Each tick's reading, set point,
duty and mode are hold points, and run.json's hold records the model and how
well the set point was held (docs/hold.md).`
