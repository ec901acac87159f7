package main

import (
	"fmt"

	"github.com/heatsink-hpc/heatsink/node"
	"github.com/heatsink-hpc/heatsink/tune"
	"github.com/heatsink-hpc/heatsink/workloads"
)

// surveyLoad is the load of each step: the built-in workload (dgemm when
// neither it nor a command is given) or the command.
func surveyLoad(sf *surveyFlags, args []string) (node.SurveyLoad, *node.SurveyIterations, error) {
	name := sf.workload
	if name == "" && len(args) == 0 {
		name = "dgemm"
	}
	job, err := tune.TunedJob("", name, sf.sets, args)
	if err != nil {
		return nil, nil, err
	}
	if len(args) > 0 {
		if name != "" {
			return nil, nil, fmt.Errorf("give either --workload %s or a command, not both", name)
		}
		return node.SurveyCommand(args)
	}
	w, err := workloads.Find(builtinWorkloads(), job.Workload)
	if err != nil {
		return nil, nil, err
	}
	return node.SurveyWorkload(w, job.Layers)
}
