package main

import (
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/heatsink-hpc/heatsink/node"
	"github.com/heatsink-hpc/heatsink/tune"
	"github.com/heatsink-hpc/heatsink/workloads"
	"github.com/spf13/cobra"
)

// surveyLoad is the load of each step: the built-in workload (dgemm when
// neither it nor a command is given), in a process of its own per GPU and
// step (heatsink survey-load; --load-in-process keeps it in this one), or
// the command.
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
	if sf.loadInProcess {
		return node.SurveyWorkload(w, job.Layers)
	}
	exe, err := os.Executable()
	if err != nil {
		return nil, nil, fmt.Errorf("find this binary to run each load in: %w (--load-in-process runs them in this process)", err)
	}
	argv := func(gpu string) []string {
		a := []string{exe, "survey-load", "--device", gpu, "--workload", job.Workload}
		for _, s := range sf.sets {
			a = append(a, "--set", s)
		}
		return a
	}
	return node.SurveyWorkloadProcess(w, job.Layers, argv, os.Stderr)
}

// newSurveyLoadCmd is the process heatsink survey runs for one GPU's load:
// the built-in workload on that GPU until SIGTERM or the end of stdin (the
// survey died), each finished iteration a JSON line on stdout
// (node.SurveyIterationLine).
func newSurveyLoadCmd() *cobra.Command {
	var gpu, name string
	var sets []string
	cmd := &cobra.Command{
		Use:    "survey-load --device N --workload NAME [--set key=value]...",
		Short:  "One GPU's load of heatsink survey, until SIGTERM or the end of stdin (run by survey)",
		Hidden: true,
		Args:   cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			job, err := tune.TunedJob("", name, sets, nil)
			if err != nil {
				return err
			}
			w, err := workloads.Find(builtinWorkloads(), job.Workload)
			if err != nil {
				return err
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			return node.ServeSurveyLoad(ctx, w, job.Layers, gpu, cmd.InOrStdin(), cmd.OutOrStdout())
		},
	}
	f := cmd.Flags()
	f.StringVar(&gpu, "device", "", "the GPU's index")
	f.StringVar(&name, "workload", "", "built-in workload")
	f.StringArrayVar(&sets, "set", nil, "workload parameter key=value (repeatable)")
	cmd.MarkFlagRequired("device")
	cmd.MarkFlagRequired("workload")
	return cmd
}
