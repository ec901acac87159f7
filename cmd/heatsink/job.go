package main

import (
	"errors"
	"fmt"
	"io"

	"github.com/heatsink-hpc/heatsink/tune"
	"github.com/heatsink-hpc/heatsink/workloads"
)

// jobOptions resolves the job: a built-in workload with its parameters
// resolved from every layer (workloads.Resolve, whose notes say which
// --set overrode a --tuned value), or a command found on PATH.
func jobOptions(job tune.Job, notes io.Writer) (workloads.Options, error) {
	var o workloads.Options
	workload, args := job.Workload, job.Command
	switch {
	case workload != "" && len(args) > 0:
		return o, fmt.Errorf("give either --workload %s or a command, not both", workload)
	case workload == "" && len(args) == 0:
		return o, errors.New("nothing to run: give --workload NAME (see heatsink workloads) or a command after --")
	case workload == "" && len(job.Layers) > 0:
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
	v, ns, err := workloads.Resolve(w, job.Layers...)
	if err != nil {
		return o, err
	}
	for _, n := range ns {
		fmt.Fprintf(notes, "heatsink: %s\n", n)
	}
	o.Workload, o.Params = w, v
	return o, nil
}
