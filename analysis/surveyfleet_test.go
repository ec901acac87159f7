package analysis

import (
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
)

// fleetFlagKeys names each flag by scope, kind and component, sorted.
func fleetFlagKeys(f FleetSurvey) []string {
	var out []string
	for _, fl := range f.Flags {
		k := fl.Scope + " " + fl.Kind + " " + fl.Component
		if fl.Neighbour != "" {
			k += "→" + fl.Neighbour
		}
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// The planted 4-GPU node of surveyNode in a fleet with a node whose survey
// failed: the node is named, the other judged (its own flags at node
// scope, GPU 1 again against the fleet), every GPU ranked, exit 2. The
// fleet's survey.json read back as an earlier survey finds GPU 0's drift
// by UUID.
func TestJudgeFleetJudgesTheNodesThatRanAndNamesTheOneThatFailed(t *testing.T) {
	in := func(n plantedNode) []FleetInput {
		b := newRun(t)
		n.write(b)
		return []FleetInput{
			{Node: FleetNode{Host: "node1", Dir: "nodes/node1", ExitCode: 1}, Report: Analyze(b.done(), DefaultOptions())},
			{Node: FleetNode{Host: "node2", Dir: "nodes/node2", ExitCode: 2}, Err: errors.New("its survey exited 2: nothing to survey")},
		}
	}
	first := JudgeFleet("f1", in(surveyNode(0.040)), nil, DefaultSurveyRule())
	want := []string{"fleet peers gpu_core:1", "node neighbour gpu_core:2→3", "node peers gpu_core:1"}
	if got := fleetFlagKeys(first); !slices.Equal(got, want) {
		t.Errorf("flags %q, want %q", got, want)
	}
	if first.Status != "incomplete" || first.ExitCode() != 2 {
		t.Errorf("status %s exit %d, want incomplete and 2: a node failed", first.Status, first.ExitCode())
	}
	if n := first.Nodes[1]; n.Host != "node2" || n.Status != "failed" || !strings.Contains(n.Error, "nothing to survey") {
		t.Errorf("failed node: %+v", n)
	}
	if n := first.Nodes[0]; n.Status != "flagged" || n.RunID == "" {
		t.Errorf("judged node: %+v", n)
	}
	if len(first.GPUs) != 4 {
		t.Fatalf("%d GPUs, want 4", len(first.GPUs))
	}
	for i, g := range first.GPUs {
		if g.FleetRank == nil || *g.FleetRank != i+1 || g.FleetMemRank == nil || len(g.NodeVerdicts) == 0 {
			t.Errorf("GPU %s at place %d: rank %v mem rank %v, %d node verdicts", g.Index, i+1, g.FleetRank, g.FleetMemRank, len(g.NodeVerdicts))
		}
	}
	if g := first.GPUs[0]; g.Index != "1" || g.FleetRobustZ == nil || *g.FleetRobustZ < 3.5 {
		t.Errorf("first ranked: GPU %s z %v, want GPU 1 (0.052 °C/W) with z ≥ 3.5", g.Index, g.FleetRobustZ)
	}
	if first.NotComputed["drift"] == "" {
		t.Error("no earlier survey, yet drift not said to be not computed")
	}

	b, err := json.Marshal(first)
	if err != nil {
		t.Fatal(err)
	}
	var earlier Survey
	if err := json.Unmarshal(b, &earlier); err != nil || earlier.RunID != "f1" || len(earlier.GPUs) != 4 || earlier.GPUs[0].UUID == "" {
		t.Fatalf("the fleet's survey.json as an earlier survey: %v, %+v", err, earlier.GPUs)
	}
	later := JudgeFleet("f2", in(surveyNode(0.046)), &earlier, DefaultSurveyRule())
	want = []string{"fleet drift gpu_core:0", "fleet peers gpu_core:1", "node neighbour gpu_core:2→3", "node peers gpu_core:1"}
	if got := fleetFlagKeys(later); !slices.Equal(got, want) || later.Against != "f1" {
		t.Errorf("flags %q against %q, want %q against f1", got, later.Against, want)
	}
}

func TestJudgeFleetWithNothingJudgedIsIncomplete(t *testing.T) {
	f := JudgeFleet("f", []FleetInput{{Node: FleetNode{Host: "n1"}, Err: errors.New("srun on n1: no such node")}}, nil, DefaultSurveyRule())
	if f.ExitCode() != 2 || f.NotComputed["gpus"] == "" || len(f.GPUs) != 0 || f.Nodes[0].Error != "srun on n1: no such node" {
		t.Errorf("exit %d, not computed %q, nodes %+v", f.ExitCode(), f.NotComputed["gpus"], f.Nodes)
	}
}

// A node whose GPU 3 another process used during GPU 0's turn: judged in
// the fleet from its recording, it carries the node's foreign_load flag as
// its own survey.json does.
func TestJudgeFleetFlagsAForeignLoadOnANode(t *testing.T) {
	n := surveyNode(0.040)
	n.extra = [][4]float64{{3, 250, 1150, 250}}
	r := surveyRecording(t, n)
	f := JudgeFleet("f", []FleetInput{{Node: FleetNode{Host: "node1", Dir: "nodes/node1", ExitCode: 1}, Report: Analyze(r, DefaultOptions()), Run: r}}, nil, DefaultSurveyRule())
	if got := fleetFlagKeys(f); !slices.Contains(got, "node foreign_load gpu_core:3") {
		t.Errorf("flags %q: no foreign load on GPU 3", got)
	}
}
