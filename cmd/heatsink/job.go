package main

import (
	"errors"
	"fmt"

	"github.com/heatsink-hpc/heatsink/workloads"
)

// jobOptions resolves the job: a built-in workload with validated
// parameters, or a command found on PATH.
func jobOptions(workload string, sets, args []string) (workloads.Options, error) {
	var o workloads.Options
	switch {
	case workload != "" && len(args) > 0:
		return o, fmt.Errorf("give either --workload %s or a command, not both", workload)
	case workload == "" && len(args) == 0:
		return o, errors.New("nothing to run: give --workload NAME (see heatsink workloads) or a command after --")
	case workload == "" && len(sets) > 0:
		return o, errors.New("--set applies to a built-in workload: give --workload NAME")
	}
	if len(args) > 0 {
		c, err := workloads.NewCommand(args)
		if err != nil {
			return o, err
		}
		o.Command = c
		return o, nil
	}
	w, err := workloads.Find(builtinWorkloads(), workload)
	if err != nil {
		return o, err
	}
	set, err := workloads.ParseSet(sets)
	if err != nil {
		return o, err
	}
	v, err := workloads.ParseValues(w.Params(), set)
	if err != nil {
		return o, fmt.Errorf("workload %s: %w", w.Name(), err)
	}
	o.Workload, o.Params = w, v
	return o, nil
}
