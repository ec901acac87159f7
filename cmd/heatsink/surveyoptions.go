package main

import (
	"fmt"
	"time"

	"github.com/heatsink-hpc/heatsink/analysis"
	"github.com/heatsink-hpc/heatsink/node"
	"github.com/spf13/pflag"
)

const surveyFleetLong = `

With --launcher slurm --nodes N, survey allocates N nodes and surveys each
at once (a job step per node running this binary's survey with the same
flags, --config with {node} replaced by the node's name) into
DIR/nodes/<node>, so DIR must be on a filesystem every node shares. It then
judges the fleet: DIR/survey.json ranks every GPU of every node with its
robust z against the fleet's like GPUs, the node's verdicts and flags, and
the fleet's (the same peer rule across nodes; --against an earlier fleet's
or node's DIR finds drift by UUID). Exit status 2 also when a node failed;
it is named, and the others are judged.`

// surveyFleetFlags are heatsink survey's flags for a fleet.
type surveyFleetFlags struct {
	launcher, partition string
	nodes               int
}

// addSurveyFleetFlags adds the flags of a fleet survey and the plan's
// waits after each load.
func addSurveyFleetFlags(f *pflag.FlagSet, sf *surveyFlags) {
	f.DurationVar(&sf.plan.MinReturn, "min-return", sf.plan.MinReturn, "shortest wait after a load (the next GPU's episode needs a baseline; a GPU's loads closer than the episode rule's bridge join)")
	f.DurationVar(&sf.plan.Hold, "hold", sf.plan.Hold, "how long every GPU must stay back at baseline to end a wait")
	f.StringVar(&sf.fleet.launcher, "launcher", "", "slurm: survey every node of an allocation at once and judge the fleet")
	f.IntVar(&sf.fleet.nodes, "nodes", 1, "with --launcher slurm: how many nodes to allocate")
	f.StringVar(&sf.fleet.partition, "partition", "", "with --launcher slurm: the partition to allocate from")
}

// surveyAnalysisOptions are the report's options for the survey's own
// recording: its episode rule and durations scaled down where the plan's
// loads or returns are shorter than the 40 s the default rule is made
// for (its shortest load of 30 s and bridge of 30 s), so that a survey of
// short loads on a plant of short τ is judged on its own time scale. The
// default plan's shortest load (30 s, what an 8-GPU node's five-minute
// budget comes to) makes it three quarters: episodes of 22.5 s or more.
func surveyAnalysisOptions(p node.SurveyPlan) analysis.Options {
	load := p.MinLoad
	if p.Load > 0 {
		load = p.Load
	}
	const made = 40 * time.Second
	f := min(load.Seconds(), p.MinReturn.Seconds()) / made.Seconds()
	return analysis.DefaultOptions().Scaled(f)
}

// readAgainst reads the earlier survey of --against (a node's or a
// fleet's survey.json); nil without one.
func readAgainst(dir string) (*analysis.Survey, error) {
	if dir == "" {
		return nil, nil
	}
	a, err := analysis.ReadSurvey(dir)
	if err != nil {
		return nil, fmt.Errorf("--against: %w", err)
	}
	return &a, nil
}
