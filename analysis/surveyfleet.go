package analysis

import (
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"
)

// FleetNode is one node of a fleet survey: where its survey is and how it
// ended.
type FleetNode struct {
	Host string `json:"host"`
	// Dir is the node's survey run directory, relative to the fleet's.
	Dir   string `json:"dir"`
	RunID string `json:"run_id,omitempty"`
	// Status is the node survey's own: "clean", "flagged", or "failed"
	// with Error saying why (its survey did not run, or left nothing
	// that could be judged).
	Status   string `json:"status"`
	ExitCode int    `json:"exit_code"`
	Error    string `json:"error,omitempty"`
}

// FleetGPU is one GPU of the fleet: its node survey's entry (host, index,
// UUID, model, fingerprints), its place among every like GPU of the fleet
// and its node's verdicts on it.
type FleetGPU struct {
	SurveyGPU
	// FleetRank orders the fleet's GPUs by core thermal resistance alone,
	// 1 the highest °C/W (the worst cooled); FleetMemRank by memory's.
	// Nil without that fingerprint.
	FleetRank    *int `json:"fleet_rank"`
	FleetMemRank *int `json:"fleet_mem_rank"`
	// FleetRobustZ and FleetMemRobustZ are (value − median) /
	// (1.4826 · MAD) against the other like GPUs of the fleet, without
	// this one, as the peer rule judges; nil when the others agree
	// exactly (MAD 0) or there are fewer than two.
	FleetRobustZ    *float64 `json:"fleet_robust_z"`
	FleetMemRobustZ *float64 `json:"fleet_mem_robust_z"`
	// NodeVerdicts are its node's verdicts on it (against its node's
	// like GPUs only).
	NodeVerdicts []Verdict `json:"node_verdicts"`
}

// FleetFlag is a finding of the rule and where it was judged: "fleet"
// (against every like GPU of the fleet, or against the earlier survey of
// the same UUID) or "node" (within its node: neighbour heating, and peers
// on a node with three or more like GPUs).
type FleetFlag struct {
	SurveyFlag
	Scope string `json:"scope"`
}

// FleetSurvey is the survey.json of `heatsink survey --launcher slurm`:
// every GPU of every node, judged by the node rule within its node and
// against the fleet. Its gpus hold the single-node fields, so an earlier
// fleet's survey.json serves --against as a node's does.
type FleetSurvey struct {
	Schema int    `json:"schema"`
	Kind   string `json:"kind"`
	RunID  string `json:"run_id"`
	// SlurmJob is the allocation the node surveys ran in.
	SlurmJob string      `json:"slurm_job,omitempty"`
	Against  string      `json:"against,omitempty"`
	Rule     SurveyRule  `json:"rule"`
	RuleText string      `json:"rule_text"`
	Nodes    []FleetNode `json:"nodes"`
	GPUs     []FleetGPU  `json:"gpus"`
	// Coupling is every node's neighbour-heating matrix; Verdicts are the
	// fleet's: every GPU against the like GPUs of every node.
	Coupling []Coupling  `json:"coupling"`
	Verdicts []Verdict   `json:"verdicts"`
	Flags    []FleetFlag `json:"flags"`
	// Status is "clean", "flagged", or "incomplete" when a node failed
	// (the others are judged all the same).
	Status      string            `json:"status"`
	NotComputed map[string]string `json:"not_computed,omitempty"`
}

// FleetInput is one node's survey for JudgeFleet: its recording's report,
// or the error that left it without one. Run, where given, is the
// recording itself, for the checks that read its phases (foreign_load).
type FleetInput struct {
	Node   FleetNode
	Report *Report
	Run    *Run
	Err    error
}

// JudgeFleet judges the node surveys of a fleet: each node by the node
// rule (its survey.json's verdicts and flags), then every GPU against the
// like GPUs of the whole fleet (peer rule, leave-one-out), and, given an
// earlier survey (a fleet's or a node's), each GPU against its own past
// by UUID wherever it now sits.
func JudgeFleet(runID string, nodes []FleetInput, against *Survey, rule SurveyRule) FleetSurvey {
	f := FleetSurvey{Schema: SurveySchema, Kind: "fleet", RunID: runID, Rule: rule, RuleText: rule.Text(),
		Coupling: []Coupling{}, Verdicts: []Verdict{}, Flags: []FleetFlag{}, NotComputed: map[string]string{}}
	var reps []*Report
	var all []SurveyGPU
	nodeVerdicts := map[string][]Verdict{}
	for _, in := range nodes {
		n := in.Node
		if in.Err != nil || in.Report == nil {
			n.Status = "failed"
			if in.Err != nil {
				n.Error = in.Err.Error()
			}
			f.Nodes = append(f.Nodes, n)
			continue
		}
		s := JudgeSurvey(in.Report, nil, rule)
		if in.Run != nil {
			s = JudgeSurveyRun(in.Run, in.Report, nil, rule)
		}
		n.RunID = s.RunID
		if len(s.GPUs) == 0 {
			n.Status, n.Error = "failed", "no GPU could be judged: "+s.NotComputed["gpus"]
			f.Nodes = append(f.Nodes, n)
			continue
		}
		n.Status = s.Status
		f.Nodes = append(f.Nodes, n)
		reps = append(reps, in.Report)
		all = append(all, s.GPUs...)
		f.Coupling = append(f.Coupling, s.Coupling...)
		for _, v := range s.Verdicts {
			nodeVerdicts[v.Host+"/"+v.GPU] = append(nodeVerdicts[v.Host+"/"+v.GPU], v)
		}
		for _, fl := range s.Flags {
			f.Flags = append(f.Flags, FleetFlag{fl, "node"})
		}
	}
	f.Verdicts = Verdicts(reps, nil)
	for _, fl := range peerFlags(all, f.Verdicts, rule) {
		f.Flags = append(f.Flags, FleetFlag{fl, "fleet"})
	}
	if against != nil {
		f.Against = against.RunID
		flags, why := driftFlags(all, against.GPUs, rule)
		for _, fl := range flags {
			f.Flags = append(f.Flags, FleetFlag{fl, "fleet"})
		}
		if why != "" {
			f.NotComputed["drift"] = why
		}
	} else {
		f.NotComputed["drift"] = "no earlier survey given (--against)"
	}
	f.GPUs = fleetGPUs(all, f.Verdicts, nodeVerdicts)
	if len(f.GPUs) == 0 {
		f.NotComputed["gpus"] = "no node's survey had a GPU that could be judged"
	}
	f.Status = "clean"
	switch {
	case slices.ContainsFunc(f.Nodes, func(n FleetNode) bool { return n.Status == "failed" }) || len(f.GPUs) == 0:
		f.Status = "incomplete"
	case len(f.Flags) > 0:
		f.Status = "flagged"
	}
	return f
}

// fleetGPUs ranks every GPU and places it among the fleet's like GPUs.
func fleetGPUs(all []SurveyGPU, fleet []Verdict, nodeVerdicts map[string][]Verdict) []FleetGPU {
	out := make([]FleetGPU, len(all))
	for i, g := range all {
		out[i] = FleetGPU{SurveyGPU: g, NodeVerdicts: nodeVerdicts[g.Host+"/"+g.Index]}
		if out[i].NodeVerdicts == nil {
			out[i].NodeVerdicts = []Verdict{}
		}
		out[i].FleetRobustZ = leaveOneOutZ(fleet, g, KindGPUCore)
		out[i].FleetMemRobustZ = leaveOneOutZ(fleet, g, KindGPUMem)
	}
	rank := func(kind string, set func(g *FleetGPU, r int)) {
		var idx []int
		for i, g := range out {
			if fp := g.aloneOf(kind); fp != nil && fp.ThermalResistanceCPerW != nil {
				idx = append(idx, i)
			}
		}
		slices.SortStableFunc(idx, func(a, b int) int {
			return cmp.Compare(*out[b].aloneOf(kind).ThermalResistanceCPerW, *out[a].aloneOf(kind).ThermalResistanceCPerW)
		})
		for r, i := range idx {
			set(&out[i], r+1)
		}
	}
	rank(KindGPUCore, func(g *FleetGPU, r int) { g.FleetRank = &r })
	rank(KindGPUMem, func(g *FleetGPU, r int) { g.FleetMemRank = &r })
	slices.SortStableFunc(out, func(a, b FleetGPU) int {
		ra, rb := math.MaxInt, math.MaxInt
		if a.FleetRank != nil {
			ra = *a.FleetRank
		}
		if b.FleetRank != nil {
			rb = *b.FleetRank
		}
		return cmp.Compare(ra, rb)
	})
	return out
}

// leaveOneOutZ is g's robust z on a kind's thermal resistance against the
// other GPUs of its like group in the fleet's verdicts, as peerFlags
// judges it.
func leaveOneOutZ(vs []Verdict, g SurveyGPU, kind string) *float64 {
	i := slices.IndexFunc(vs, func(v Verdict) bool {
		return v.Metric == "thermal_resistance_c_per_w" && kindOf(v.Component) == kind && v.Host == g.Host && v.GPU == g.Index
	})
	if i < 0 {
		return nil
	}
	me := vs[i]
	var others []float64
	for j, v := range vs {
		if j != i && v.Metric == me.Metric && kindOf(v.Component) == kind && v.Peers == me.Peers && v.PeerMedian == me.PeerMedian {
			others = append(others, v.Value)
		}
	}
	if len(others) < 2 {
		return nil
	}
	med := median(others)
	md := mad(others, med)
	if md == 0 {
		return nil
	}
	z := (me.Value - med) / (madSigma * md)
	return &z
}

// ExitCode is the fleet survey's exit status: 2 when a node failed or
// nothing could be judged (the rest is judged all the same), 1 when
// anything is flagged anywhere, else 0.
func (f FleetSurvey) ExitCode() int {
	switch f.Status {
	case "incomplete":
		return 2
	case "flagged":
		return 1
	}
	return 0
}

// WriteFleetSurvey writes f as DIR/survey.json.
func WriteFleetSurvey(dir string, f FleetSurvey) error {
	b, err := json.MarshalIndent(f, "", "  ")
	if err != nil {
		return fmt.Errorf("encode the fleet's %s: %w", SurveyFile, err)
	}
	path := filepath.Join(dir, SurveyFile)
	if err := os.WriteFile(path, append(b, '\n'), 0o644); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// WriteFleetTable writes the fleet's GPUs ranked by core °C/W, with their
// fleet z-scores and flags, then the failed nodes and every flag's reason.
func WriteFleetTable(w io.Writer, f FleetSurvey) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "rank\thost\tgpu\tuuid\tmodel\tcore °C/W\tz fleet\tmem °C/W\tz fleet\tτ s\tload W\tflags")
	for _, g := range f.GPUs {
		var kinds []string
		for _, fl := range f.Flags {
			if fl.Host == g.Host && fl.GPU == g.Index {
				kinds = append(kinds, fl.Kind+"("+fl.Scope+")")
			}
		}
		c, m := g.AloneCore, g.AloneMem
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", intOr(g.FleetRank), g.Host, g.Index, g.UUID, g.Model,
			fpNum(c, func(fp *Fingerprint) *float64 { return fp.ThermalResistanceCPerW }, 4), floatOr(g.FleetRobustZ, 1),
			fpNum(m, func(fp *Fingerprint) *float64 { return fp.ThermalResistanceCPerW }, 4), floatOr(g.FleetMemRobustZ, 1),
			fpNum(c, func(fp *Fingerprint) *float64 { return fp.TauS }, 1), fpNum(c, func(fp *Fingerprint) *float64 { return fp.PowerW }, 0),
			cmp.Or(strings.Join(kinds, ","), "-"))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, n := range f.Nodes {
		if n.Status == "failed" {
			fmt.Fprintf(w, "node %s failed: %s\n", n.Host, n.Error)
		}
	}
	for _, fl := range f.Flags {
		fmt.Fprintf(w, "flagged (%s): %s\n", fl.Scope, fl.Reason)
	}
	_, err := fmt.Fprintf(w, "fleet survey %s: %d nodes, %d GPUs, %s\n", f.RunID, len(f.Nodes), len(f.GPUs), f.Status)
	return err
}

func intOr(p *int) string {
	if p == nil {
		return "-"
	}
	return fmt.Sprint(*p)
}

func floatOr(p *float64, prec int) string {
	if p == nil {
		return "-"
	}
	return fmt.Sprintf("%.*f", prec, *p)
}

func fpNum(fp *Fingerprint, get func(*Fingerprint) *float64, prec int) string {
	if fp == nil {
		return "-"
	}
	return floatOr(get(fp), prec)
}
