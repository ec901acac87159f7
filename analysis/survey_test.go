package analysis

import (
	"encoding/json"
	"math"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/heatsink-hpc/heatsink/point"
	"github.com/heatsink-hpc/heatsink/point/schema"
	"github.com/heatsink-hpc/heatsink/rundir"
)

// surveyNode plants what a survey records on a 4-GPU node: a 300 s idle
// baseline, each GPU alone for 300 s with 600 s (8 τ) of cooldown after it, so that
// no GPU starts its turn still warm from its neighbour's, then
// all four together for 300 s and a 300 s cooldown. GPU 1 is 30 % worse
// cooled than the others (7.4 °C at equal power) and GPU 2 heats GPU 3 by
// 0.025 °C/W; rCore0 is GPU 0's core °C/W (0.040 like the healthy ones).
func surveyNode(rCore0 float64) plantedNode {
	n := plantedNode{idleW: 70, loadW: 690, endS: 4500,
		rCore: []float64{rCore0, 0.052, 0.040, 0.040}, rMem: []float64{0.030, 0.030, 0.030, 0.030},
		tau:    []float64{70, 80, 70, 75},
		couple: [][]float64{{0, 0, 0, 0}, {0, 0, 0, 0}, {0, 0, 0, 0.025}, {0, 0, 0, 0}},
	}
	for g := range 4 {
		at := 300 + 900*float64(g)
		n.loads = append(n.loads, [3]float64{float64(g), at, at + 300})
	}
	for g := range 4 {
		n.loads = append(n.loads, [3]float64{float64(g), 3900, 4200})
	}
	return n
}

// surveyFlops is each planted GPU's DGEMM rate: GPU 3 runs 12 % slower
// than the others at the same power (a clock held back), while its
// cooling is as good as theirs.
var surveyFlops = []float64{52e12, 52.5e12, 51.5e12, 46e12}

// surveyOf records n with the phases heatsink survey writes in run.json
// (names the analysis does not take for baseline, load and cooldown, so it
// finds the episodes in each GPU's power) and judges it.
func surveyOf(t *testing.T, n plantedNode, against *Survey) Survey {
	t.Helper()
	r := surveyRecording(t, n)
	return JudgeSurveyRun(r, Analyze(r, DefaultOptions()), against, DefaultSurveyRule())
}

// surveyRecording records n as heatsink survey does.
func surveyRecording(t *testing.T, n plantedNode) *Run {
	t.Helper()
	b := newRun(t)
	phase := func(name string, from, to float64) {
		end := b.at(to)
		b.meta.Phases = append(b.meta.Phases, rundir.Phase{Name: name, Start: b.at(from), End: &end})
	}
	phase("survey_baseline", 0, 300)
	for _, l := range n.loads[:4] {
		g := strconv.Itoa(int(l[0]))
		phase("alone:"+g, l[1], l[2])
		phase("return:"+g, l[2], l[2]+600)
	}
	phase("together", 3900, 4200)
	phase("survey_cooldown", 4200, 4500)
	// Each GPU's own job iterates every 1.1 s while it is loaded, as
	// heatsink survey records it (the GPU in each iteration).
	b.meta.Workload = &rundir.Workload{Name: "dgemm"}
	for _, l := range n.loads {
		g := int(l[0])
		for at := l[1] + 1.1; at <= l[2]; at += 1.1 {
			b.meta.Workload.Iterations = append(b.meta.Workload.Iterations, rundir.Iteration{N: len(b.meta.Workload.Iterations) + 1,
				Start: b.at(at - 1.1), End: b.at(at), RuntimeS: 1.1, Metrics: map[string]float64{"flop_per_s": surveyFlops[g]}, Device: strconv.Itoa(g)})
		}
	}
	n.write(b)
	return b.done()
}

// flagKeys names each flag by kind, GPU and component, sorted.
func flagKeys(s Survey) []string {
	var out []string
	for _, f := range s.Flags {
		k := f.Kind + " " + f.Component
		if f.Neighbour != "" {
			k += "→" + f.Neighbour
		}
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

func TestSurveyFlagsThePlantedGPUsAndNothingElse(t *testing.T) {
	first := surveyOf(t, surveyNode(0.040), nil)
	if len(first.GPUs) != 4 {
		t.Fatalf("%d GPUs, want 4", len(first.GPUs))
	}
	for _, g := range first.GPUs {
		if g.UUID != "GPU-"+g.Index || g.Model == "" || g.AloneCore == nil || g.AloneMem == nil || g.TogetherCore == nil {
			t.Errorf("GPU %s: uuid %q model %q alone %v/%v together %v", g.Index, g.UUID, g.Model, g.AloneCore != nil, g.AloneMem != nil, g.TogetherCore != nil)
			continue
		}
		if len(g.TogetherCore.NeighboursLoaded) != 3 {
			t.Errorf("GPU %s together with %v, want the 3 others", g.Index, g.TogetherCore.NeighboursLoaded)
		}
	}
	want := []string{"neighbour gpu_core:2→3", "peers gpu_core:1"}
	if got := flagKeys(first); !slices.Equal(got, want) {
		t.Errorf("flags %q, want %q", got, want)
		for _, f := range first.Flags {
			t.Log(f.Reason)
		}
	}
	if first.Status != "flagged" || first.ExitCode() != 1 {
		t.Errorf("status %s, exit %d", first.Status, first.ExitCode())
	}
	if first.NotComputed["drift"] == "" {
		t.Error("no earlier survey, yet drift not said to be not computed")
	}

	// The same node later: GPU 0's cooling lost 15 % (3.7 °C at its
	// power): under the peer rule's 20 %, over the drift rule's 10 %.
	later := surveyOf(t, surveyNode(0.046), &first)
	want = []string{"drift gpu_core:0", "neighbour gpu_core:2→3", "peers gpu_core:1"}
	if got := flagKeys(later); !slices.Equal(got, want) {
		t.Errorf("flags %q, want %q", got, want)
		for _, f := range later.Flags {
			t.Log(f.Reason)
		}
	}
	for _, f := range later.Flags {
		if f.Kind == "drift" && (!strings.Contains(f.Reason, "GPU-0") || f.Reference > 0.0415 || f.Value < 0.044) {
			t.Errorf("drift: %s", f.Reason)
		}
	}
	if later.Against != first.RunID || later.NotComputed["drift"] != "" {
		t.Errorf("against %q, drift not computed: %q", later.Against, later.NotComputed["drift"])
	}
}

// The real 4×H100 node is healthy: its spread (GPU 3's memory 19 % below
// the median at robust z −5.4, the 2→3 neighbour heating of 0.0104 °C/W)
// is what the rule's thresholds were chosen beyond.
func TestSurveyFlagsNothingOnTheHealthyRealNode(t *testing.T) {
	hs, smi, _ := h100x4(t)
	for _, rep := range []*Report{hs, smi} {
		s := JudgeSurvey(rep, nil, DefaultSurveyRule())
		if len(s.GPUs) != 4 {
			t.Errorf("%d GPUs, want 4", len(s.GPUs))
		}
		for _, f := range s.Flags {
			t.Errorf("false flag: %s", f.Reason)
		}
		if s.ExitCode() != 0 {
			t.Errorf("exit %d on a healthy node", s.ExitCode())
		}
	}
}

func TestSurveyOfARecordingWithoutGPUsCannotJudge(t *testing.T) {
	b := newRun(t)
	b.phases(60, 60, 60)
	for s := range 180 {
		b.write(hwmonPoint(b.at(float64(s)), "platform_coretemp_0", "temp1", "Package id 0", "cpu", 40))
	}
	s := JudgeSurvey(Analyze(b.done(), DefaultOptions()), nil, DefaultSurveyRule())
	if s.ExitCode() != 2 || s.NotComputed["gpus"] == "" {
		t.Errorf("exit %d, not computed %q", s.ExitCode(), s.NotComputed["gpus"])
	}
}

// Every GPU's throughput per watt is its own job's over its own power,
// alone and together (not the four GPUs' summed power), and the ranks put
// first the GPU to look at: GPU 1 for its cooling, GPU 3 for its rate.
func TestSurveyGivesEachGPUItsThroughputAndRank(t *testing.T) {
	s := surveyOf(t, surveyNode(0.040), nil)
	for i, g := range s.GPUs {
		want := surveyFlops[i] / 690
		for name, fp := range map[string]*Fingerprint{"alone": g.AloneCore, "together": g.TogetherCore} {
			if fp == nil || fp.ThroughputPerW == nil || math.Abs(*fp.ThroughputPerW/want-1) > 0.03 || fp.ThroughputMetric != "flop_per_s" {
				t.Errorf("GPU %s %s: throughput per watt %v, want %.4g flop_per_s/W (±3 %%)", g.Index, name, fp, want)
			}
		}
		if g.Rank == nil || g.Rank.Of != 4 || g.Rank.Core == nil || g.Rank.Mem == nil || g.Rank.ThroughputPerW == nil {
			t.Fatalf("GPU %s rank %+v", g.Index, g.Rank)
		}
	}
	r1, r3 := s.GPUs[1].Rank, s.GPUs[3].Rank
	if *r1.Core != 1 || r1.CoreZ == nil || *r1.CoreZ < 3.5 {
		t.Errorf("GPU 1 (30 %% worse cooled): core rank %d z %v, want 1 and z ≥ 3.5", *r1.Core, r1.CoreZ)
	}
	if *r3.ThroughputPerW != 1 || r3.ThroughputPerWZ == nil || *r3.ThroughputPerWZ > -3.5 {
		t.Errorf("GPU 3 (12 %% slower): throughput rank %d z %v, want 1 and z ≤ −3.5", *r3.ThroughputPerW, r3.ThroughputPerWZ)
	}
	var text strings.Builder
	if err := s.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	out := text.String()
	for _, want := range []string{"GPU-1", "1/4, +", "flagged: GPU 1 of node1 core", "throughput: flop_per_s per watt"} {
		if !strings.Contains(out, want) {
			t.Errorf("text output lacks %q:\n%s", want, out)
		}
	}
	// Throughput per watt alone and together, as 75.4 G, not 7.54e+10.
	if strings.Contains(out, "e+") || !regexp.MustCompile(`\d G, \d+(\.\d+)? G`).MatchString(out) {
		t.Errorf("throughput per watt not in SI prefixes:\n%s", out)
	}
	t.Logf("\n%s", out)

	// The runtime-on-temperature regression of a GPU takes its own
	// iterations only.
	rep := Analyze(surveyRecording(t, surveyNode(0.040)), DefaultOptions())
	checked := 0
	for _, sr := range rep.Slowdown {
		if !strings.HasPrefix(sr.Component, "gpu_") {
			continue
		}
		checked++
		// 272 iterations per 300 s load, two loads (alone, together) per GPU.
		if sr.N < 540 || sr.N > 546 {
			t.Errorf("%s regressed on %d iterations, want its own GPU's 544", sr.Component, sr.N)
		}
	}
	if checked != 8 {
		t.Errorf("%d GPU components in the slowdown regressions, want 8 (4 cores, 4 memories)", checked)
	}
}

// The last survey of each GPU comes back from its survey_gpu points (as
// InfluxDB returns them) and judges drift as its survey.json does: the
// latest point of each UUID wins, whichever survey it came from.
func TestSurveyPointsGiveBackTheLastSurveyOfEachGPU(t *testing.T) {
	older := surveyOf(t, surveyNode(0.060), nil)
	first := surveyOf(t, surveyNode(0.040), nil)
	older.RunID, first.RunID = "older", "first"
	at := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	var ps []point.Point
	for i, s := range []Survey{first, older} { // the older one stamped earlier, read back after
		p, err := SurveyPoints(s, at.Add(-time.Duration(i)*time.Hour))
		if err != nil {
			t.Fatal(err)
		}
		ps = append(ps, p...)
	}
	// One GPU only in the older survey: its last survey is that one.
	ps[len(ps)-1].Tags = nil
	ps[len(ps)-1].AddTag(schema.TagRun, "older").AddTag(schema.TagUUID, "GPU-9")
	var g SurveyGPU
	g.UUID, g.Index = "GPU-9", "9"
	b, _ := json.Marshal(g)
	ps[len(ps)-1].Fields = nil
	ps[len(ps)-1].AddString(schema.FieldRecord, string(b))
	last, err := LastSurveys(ps, "test")
	if err != nil {
		t.Fatal(err)
	}
	if len(last.GPUs) != 5 || last.RunID != "first,older" {
		t.Fatalf("%d GPUs from runs %q, want the 4 of the first and GPU-9 of the older", len(last.GPUs), last.RunID)
	}
	if !reflect.DeepEqual(last.GPUs[0], first.GPUs[0]) {
		t.Errorf("GPU-0 came back as\n%+v\nwant\n%+v", last.GPUs[0], first.GPUs[0])
	}
	later := surveyOf(t, surveyNode(0.046), last)
	if got := flagKeys(later); !slices.Contains(got, "drift gpu_core:0") {
		t.Errorf("flags %q: drift of GPU 0 against its last survey from points not found", got)
	}
	ps[0].Fields = nil
	ps[0].AddString(schema.FieldRecord, "{not json")
	if _, err := LastSurveys(ps, "influx"); err == nil || !strings.Contains(err.Error(), "influx: survey_gpu of run first, GPU GPU-0") {
		t.Errorf("a bad record: %v", err)
	}
	if s, err := LastSurveys(nil, "influx"); s != nil || err != nil {
		t.Errorf("no points: %v, %v", s, err)
	}
}

// Another process on GPU 3 at 250 W (a job at low duty) from GPU 0's turn
// through its return: the survey did not load GPU 3 then, so GPU 3 is
// flagged for it with the phases named; the healthy node of the other
// tests, judged the same way, has no such flag.
func TestSurveyFlagsALoadThatIsNotTheSurveys(t *testing.T) {
	n := surveyNode(0.040)
	n.extra = [][4]float64{{3, 250, 1150, 250}}
	s := surveyOf(t, n, nil)
	var foreign []SurveyFlag
	for _, f := range s.Flags {
		if f.Kind == "foreign_load" {
			foreign = append(foreign, f)
		}
	}
	if len(foreign) != 1 || foreign[0].GPU != "3" || !strings.Contains(foreign[0].Reason, "during alone:0, return:0") ||
		math.Abs(foreign[0].Value-250) > 10 || math.Abs(foreign[0].Reference-70) > 10 {
		t.Errorf("foreign-load flags %+v, want GPU 3 at 250 W against 70 W during alone:0 and return:0", foreign)
	}
	if s.ExitCode() != 1 {
		t.Errorf("exit %d", s.ExitCode())
	}
	clean := surveyOf(t, surveyNode(0.040), nil)
	if clean.NotComputed["foreign_load"] != "" {
		t.Errorf("not computed on a survey: %s", clean.NotComputed["foreign_load"])
	}
	for _, f := range clean.Flags {
		if f.Kind == "foreign_load" {
			t.Errorf("false flag: %s", f.Reason)
		}
	}
}
