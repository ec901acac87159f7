package main

import (
	"fmt"

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
// recording (node.SurveyPlan.AnalysisScale): heatsink report on the
// directory reads the same factor from run.json.
func surveyAnalysisOptions(p node.SurveyPlan) analysis.Options {
	return analysis.DefaultOptions().Scaled(p.AnalysisScale())
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
