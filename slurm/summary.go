package slurm

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/heatsink-hpc/heatsink/analysis"
	"github.com/heatsink-hpc/heatsink/point"
	"github.com/heatsink-hpc/heatsink/point/schema"
)

// Summary is a job's thermal summary: per component its idle reference,
// peak and heat interval, and the energy each GPU and each node used while
// the job ran. Times (_at_s) are seconds since the job's start. A number
// that could not be computed is absent, with the reason beside it.
type Summary struct {
	Job      string    `json:"job"`
	Run      string    `json:"run,omitempty"`
	Name     string    `json:"name,omitempty"`
	Nodes    []string  `json:"nodes"`
	Start    time.Time `json:"start"`
	End      time.Time `json:"end"`
	RuntimeS float64   `json:"runtime_s"`
	// BaselineS is the idle stretch before the job the idle means are taken
	// over (the run's baseline phase, or the readings before the job).
	BaselineS   float64            `json:"baseline_s"`
	Components  []ComponentSummary `json:"components"`
	GPUs        []Energy           `json:"gpus"`
	NodeEnergy  []NodeEnergy       `json:"node_energy"`
	Definitions map[string]string  `json:"definitions"`
	Notes       []string           `json:"notes,omitempty"`
}

// ComponentSummary is one temperature over the job.
type ComponentSummary struct {
	Host              string            `json:"host"`
	ID                string            `json:"id"`
	Kind              string            `json:"kind"`
	Name              string            `json:"name,omitempty"`
	IdleMeanC         *float64          `json:"idle_mean_c"`
	PeakC             *float64          `json:"peak_c"`
	PeakAtS           *float64          `json:"peak_at_s"`
	HeatIntervalSPerC *float64          `json:"heat_interval_s_per_c"`
	NotComputed       map[string]string `json:"not_computed,omitempty"`
}

// Energy is one GPU's energy over the job, and how long it throttled.
type Energy struct {
	Host        string   `json:"host"`
	GPU         string   `json:"gpu"`
	UUID        string   `json:"uuid,omitempty"`
	EnergyJ     *float64 `json:"energy_j"`
	Method      string   `json:"method,omitempty"`
	NotComputed string   `json:"not_computed,omitempty"`
	// ThermalThrottleS and PowerThrottleS are the seconds of the job NVML
	// reported the GPU slowed for heat (throttle_thermal) or held to its
	// power cap (throttle_power); absent where the GPU reports neither.
	ThermalThrottleS *float64 `json:"thermal_throttle_s,omitempty"`
	PowerThrottleS   *float64 `json:"power_throttle_s,omitempty"`
	// Fingerprint is the GPU's thermal fingerprint where the job's load
	// allows one; else FingerprintNotComputed says why.
	Fingerprint            *GPUFingerprint `json:"fingerprint,omitempty"`
	FingerprintNotComputed string          `json:"fingerprint_not_computed,omitempty"`
	// SharedWith are the other jobs whose tags the GPU's points carried
	// too (MIG instances of one GPU): its energy is then the GPU's, in
	// the node's shared_gpu_energy_j and no job's energy_j.
	SharedWith []string `json:"shared_with,omitempty"`
}

// NodeEnergy is one node's measured energy over the job: the job's GPUs
// and the node's CPU packages (RAPL), the parts a node reports itself.
// While other jobs shared the node, the CPU packages' energy is theirs as
// much as this job's: it is left at node level (SharedCPUEnergyJ, with
// the jobs in SharedWith), in no job's energy_j, so that summing the
// jobs' energy_j counts nothing twice.
type NodeEnergy struct {
	Host             string   `json:"host"`
	EnergyJ          *float64 `json:"energy_j"`
	GPUEnergyJ       *float64 `json:"gpu_energy_j"`
	CPUEnergyJ       *float64 `json:"cpu_energy_j"`
	SharedCPUEnergyJ *float64 `json:"shared_cpu_energy_j,omitempty"`
	SharedWith       []string `json:"shared_with,omitempty"`
	// SharedGPUEnergyJ is the energy of the job's GPUs other jobs held
	// parts of (Energy.SharedWith), in no job's energy_j.
	SharedGPUEnergyJ *float64 `json:"shared_gpu_energy_j,omitempty"`
	Parts            []string `json:"parts,omitempty"`
	NotComputed      string   `json:"not_computed,omitempty"`
}

// Span is the job being summarised.
type Span struct {
	Job, Run, Name string
	Nodes          []string
	Start, End     time.Time
	// Held is, per node, what the job held there (see GatherJob); a node
	// absent, or a nil map, is not known: all its GPUs count, its CPU
	// energy is the job's.
	Held map[string]Holding
}

// ownsGPU reports whether the job held GPU index gpu of host.
func (j Span) ownsGPU(host, gpu string) bool {
	h, ok := j.Held[host]
	return !ok || slices.Contains(h.GPUs, gpu)
}

// Summarize computes the summary of the job over a run loaded by
// analysis.Load whose run.json has the job as its load phase (and, for
// idle means and heat intervals, a baseline before it). Readings of hosts
// other than the job's nodes are left out.
func Summarize(run *analysis.Run, o analysis.Options, job Span) *Summary {
	s := &Summary{Job: job.Job, Run: job.Run, Name: job.Name, Nodes: job.Nodes, Start: job.Start, End: job.End,
		RuntimeS: job.End.Sub(job.Start).Seconds(), Definitions: definitions()}
	onNode := func(host string) bool { return len(job.Nodes) == 0 || slices.Contains(job.Nodes, host) }
	rep := analysis.Analyze(run, o)
	if b := rep.Phases.Baseline; b != nil {
		s.BaselineS = b.Duration()
	}
	s.Notes = append(s.Notes, rep.Notes...)
	if why := rep.NotComputed["phases"]; why != "" {
		s.Notes = append(s.Notes, why)
	}
	from := job.Start.Sub(run.Start).Seconds()
	to := job.End.Sub(run.Start).Seconds()
	for _, c := range rep.Components {
		if !onNode(c.Host) {
			continue
		}
		if gpu, ok := gpuOf(c.ID); ok && strings.HasPrefix(c.Kind, "gpu") && !job.ownsGPU(c.Host, gpu) {
			continue // another job's GPU
		}
		cs := ComponentSummary{Host: c.Host, ID: strings.TrimPrefix(c.ID, c.Host+"/"), Kind: c.Kind, Name: c.Name,
			IdleMeanC: c.IdleMeanC, PeakC: c.LoadPeakC, HeatIntervalSPerC: c.HeatIntervalSPerC, NotComputed: map[string]string{}}
		if c.LoadPeakAtS != nil {
			cs.PeakAtS = ptr(*c.LoadPeakAtS - from)
		}
		for json, key := range map[string]string{schema.FieldIdleMeanC: "idle_mean_c", schema.FieldPeakC: "load_peak_c", schema.FieldHeatIntervalSPerC: "heat_interval_s_per_c"} {
			if why, ok := c.NotComputed[key]; ok {
				cs.NotComputed[json] = why
			}
		}
		if len(cs.NotComputed) == 0 {
			cs.NotComputed = nil
		}
		s.Components = append(s.Components, cs)
	}

	maxGap := rep.Options.MaxGapS
	nodes := map[string]*NodeEnergy{}
	node := func(host string) *NodeEnergy {
		if n, ok := nodes[host]; ok {
			return n
		}
		n := &NodeEnergy{Host: host}
		nodes[host] = n
		return n
	}
	for _, h := range job.Nodes {
		node(h)
	}
	add := func(p **float64, v float64) {
		if *p == nil {
			*p = ptr(0)
		}
		**p += v
	}
	fps, noFP := jobFingerprints(run, o, from, to)
	for _, sr := range run.Find(schema.GPU, schema.FieldTempC, nil) {
		host := sr.Tag(schema.TagHost)
		if !onNode(host) || !job.ownsGPU(host, sr.Tag(schema.TagGPU)) {
			continue
		}
		e := Energy{Host: host, GPU: sr.Tag(schema.TagGPU), UUID: sr.Tag(schema.TagUUID)}
		e.Fingerprint, e.FingerprintNotComputed = fps[host+"\x00"+e.GPU], noFP[host+"\x00"+e.GPU]
		if e.Fingerprint == nil && e.FingerprintNotComputed == "" {
			e.FingerprintNotComputed = noEpisode
		}
		match := func(x *analysis.Series) bool { return x.Tag(schema.TagHost) == host && x.Tag(schema.TagGPU) == e.GPU }
		for _, f := range []struct {
			field string
			out   **float64
		}{{schema.FieldThrottleThermal, &e.ThermalThrottleS}, {schema.FieldThrottlePower, &e.PowerThrottleS}} {
			if sr := run.Find(schema.GPU, f.field, match); len(sr) > 0 {
				*f.out = ptr(timeSet(sr[0], from, to, maxGap))
			}
		}
		v, method, err := energy(run.Find(schema.GPU, schema.FieldEnergyJ, match), run.Find(schema.GPU, schema.FieldPowerW, match), from, to, maxGap)
		if err != nil {
			e.NotComputed = err.Error()
		} else {
			e.EnergyJ, e.Method = ptr(v), method
			n := node(host)
			if others := job.Held[host].SharedGPUs[e.GPU]; len(others) > 0 {
				e.SharedWith = others
				add(&n.SharedGPUEnergyJ, v)
			} else {
				add(&n.GPUEnergyJ, v)
				add(&n.EnergyJ, v)
				n.Parts = append(n.Parts, "gpu "+e.GPU)
			}
		}
		s.GPUs = append(s.GPUs, e)
	}
	for _, sr := range run.Find(schema.RAPL, schema.FieldEnergyJ, nil) {
		host, zone, id := sr.Tag(schema.TagHost), sr.Tag(schema.TagZone), sr.Tag(schema.TagZoneID)
		// Top-level zones only (intel-rapl:N, not its subzones intel-rapl:N:M,
		// which the package already counts), and not psys, the whole
		// platform, which would count the packages twice.
		if !onNode(host) || strings.Count(id, ":") != 1 || zone == "psys" {
			continue
		}
		match := func(x *analysis.Series) bool { return x.Tag(schema.TagHost) == host && x.Tag(schema.TagZoneID) == id }
		v, _, err := energy([]*analysis.Series{sr}, run.Find(schema.RAPL, schema.FieldPowerW, match), from, to, maxGap)
		n := node(host)
		if err != nil {
			s.Notes = append(s.Notes, fmt.Sprintf("%s rapl %s: %v", host, zone, err))
			continue
		}
		if others := job.Held[host].SharedWith; len(others) > 0 {
			add(&n.SharedCPUEnergyJ, v)
			n.SharedWith = others
			continue
		}
		add(&n.CPUEnergyJ, v)
		add(&n.EnergyJ, v)
		n.Parts = append(n.Parts, "rapl "+zone)
	}
	for _, h := range slices.Sorted(maps.Keys(nodes)) {
		n := nodes[h]
		if held, ok := job.Held[h]; ok && len(held.GPUs) == len(held.SharedGPUs) {
			// It held no GPU of its own there (none, or only parts).
			if n.GPUEnergyJ == nil {
				n.GPUEnergyJ = ptr(0)
			}
			if n.EnergyJ == nil {
				n.EnergyJ = ptr(0)
			}
		}
		if n.SharedGPUEnergyJ != nil {
			s.Notes = append(s.Notes, fmt.Sprintf("%s: %.0f J of GPUs other jobs held parts of (MIG) are shared and counted in no job's energy_j", h, *n.SharedGPUEnergyJ))
		}
		if n.EnergyJ == nil && n.SharedCPUEnergyJ == nil && n.SharedGPUEnergyJ == nil {
			n.NotComputed = "the node recorded neither GPU energy nor RAPL energy over the job"
		}
		if n.SharedCPUEnergyJ != nil {
			s.Notes = append(s.Notes, fmt.Sprintf("%s: the CPU packages' %.0f J are shared with jobs %s and counted in no job's energy_j",
				h, *n.SharedCPUEnergyJ, strings.Join(n.SharedWith, ",")))
		}
		s.NodeEnergy = append(s.NodeEnergy, *n)
	}
	return s
}

// energy is the energy over [from, to]: the difference of the energy
// counter at both ends when it has readings within maxGap of each and did
// not go backwards (a reset), else the trapezoid integral of power.
func energy(counter, power []*analysis.Series, from, to, maxGap float64) (float64, string, error) {
	var why []string
	for _, c := range counter {
		t, v := analysis.Finite(c.T, c.V)
		a, errA := valueAt(t, v, from, maxGap)
		b, errB := valueAt(t, v, to, maxGap)
		switch {
		case errA != nil:
			why = append(why, "energy counter at the start: "+errA.Error())
		case errB != nil:
			why = append(why, "energy counter at the end: "+errB.Error())
		case b < a:
			why = append(why, "the energy counter went backwards (reset)")
		default:
			return b - a, "energy counter difference", nil
		}
	}
	for _, p := range power {
		t, v := analysis.Finite(p.T, p.V)
		in, err := analysis.Integrate(t, v, from, to, maxGap)
		if err != nil {
			why = append(why, "power integral: "+err.Error())
			continue
		}
		if in.GapS > 0.1*(to-from) {
			why = append(why, fmt.Sprintf("power integral: %.0f s of the %.0f s job without readings", in.GapS, to-from))
			continue
		}
		return in.Value, "power integral (trapezoid)", nil
	}
	if len(why) == 0 {
		return 0, "", fmt.Errorf("no energy counter and no power readings")
	}
	return 0, "", fmt.Errorf("%s", strings.Join(why, "; "))
}

// timeSet is the time within [from, to] a 0/1 series was 1: each reading
// holds until the next one, if that comes within maxGap (a longer gap
// counts nothing).
func timeSet(sr *analysis.Series, from, to, maxGap float64) float64 {
	t, v := analysis.Finite(sr.T, sr.V)
	var s float64
	for i := 0; i+1 < len(t); i++ {
		if v[i] == 0 || t[i+1]-t[i] > maxGap {
			continue
		}
		a, b := max(t[i], from), min(t[i+1], to)
		if b > a {
			s += b - a
		}
	}
	return s
}

// valueAt interpolates a counter linearly at x between the readings around
// it, which must lie within maxGap of x.
func valueAt(t, v []float64, x, maxGap float64) (float64, error) {
	i, _ := slices.BinarySearch(t, x)
	switch {
	case len(t) == 0:
		return 0, fmt.Errorf("no readings")
	case i < len(t) && t[i] == x:
		return v[i], nil
	case i == 0:
		if t[0]-x > maxGap {
			return 0, fmt.Errorf("first reading %.1f s after", t[0]-x)
		}
		return v[0], nil
	case i == len(t):
		if x-t[i-1] > maxGap {
			return 0, fmt.Errorf("last reading %.1f s before", x-t[i-1])
		}
		return v[i-1], nil
	}
	if t[i]-t[i-1] > maxGap {
		return 0, fmt.Errorf("no reading for %.1f s around it", t[i]-t[i-1])
	}
	return v[i-1] + (x-t[i-1])/(t[i]-t[i-1])*(v[i]-v[i-1]), nil
}

func ptr(v float64) *float64 { return &v }

// gpuOf returns the GPU index of a GPU component id (gpu_core:0).
func gpuOf(id string) (string, bool) {
	_, idx, ok := strings.Cut(id, ":")
	return idx, ok
}

func definitions() map[string]string {
	return map[string]string{
		schema.FieldIdleMeanC:         "mean over the baseline before the job (the run's baseline phase, or the readings before the job's start)",
		schema.FieldPeakC:             "highest reading while the job ran; peak_at_s is when, in seconds since the job's start",
		schema.FieldHeatIntervalSPerC: "(t_peak - load start) / (peak - idle mean), the reference study's heat-accumulation interval, as heatsink report computes it; refused for a rise under the minimum",
		"fingerprint":                 fingerprintDefinition,
		schema.FieldEnergyJ:           "per GPU the NVML energy counter's increase over the job (the power integral where the counter is missing), for the GPUs the job held (its agent's job tags, from SLURM_JOB_GPUS); per node the sum of those GPUs and, on a node no other job shared, its top-level RAPL zones (CPU packages and DRAM, psys excluded); on a shared node the RAPL energy is shared_cpu_energy_j, the node's, in no job's energy_j",
	}
}

// Points renders the summary as job_summary points stamped at the job's
// end: one per component (with its GPU's energy on gpu_core components)
// and one per node (component node).
func (s *Summary) Points() []point.Point {
	var out []point.Point
	gpuEnergy := map[string]float64{}
	gpus := map[string]Energy{}
	for _, g := range s.GPUs {
		if g.EnergyJ != nil {
			gpuEnergy[g.Host+"\x00gpu_core:"+g.GPU] = *g.EnergyJ
		}
		gpus[g.Host+"\x00gpu_core:"+g.GPU] = g
	}
	base := func(host, component, kind string) point.Point {
		p := point.New(schema.JobSummary, s.End)
		p.AddTag(schema.TagJob, s.Job).AddTag(schema.TagRun, s.Run).AddTag(schema.TagHost, host).AddTag(schema.TagComponent, component).AddTag(schema.TagKind, kind)
		p.AddFloat(schema.FieldRuntimeS, s.RuntimeS)
		return p
	}
	addOpt := func(p *point.Point, key string, v *float64) {
		if v != nil && !math.IsNaN(*v) && !math.IsInf(*v, 0) {
			p.AddFloat(key, *v)
		}
	}
	for _, c := range s.Components {
		p := base(c.Host, c.ID, c.Kind)
		addOpt(&p, schema.FieldPeakC, c.PeakC)
		addOpt(&p, schema.FieldPeakAtS, c.PeakAtS)
		addOpt(&p, schema.FieldIdleMeanC, c.IdleMeanC)
		addOpt(&p, schema.FieldHeatIntervalSPerC, c.HeatIntervalSPerC)
		if e, ok := gpuEnergy[c.Host+"\x00"+c.ID]; ok {
			p.AddFloat(schema.FieldEnergyJ, e)
		}
		if g, ok := gpus[c.Host+"\x00"+c.ID]; ok {
			addOpt(&p, schema.FieldThermalThrottleS, g.ThermalThrottleS)
			addOpt(&p, schema.FieldPowerThrottleS, g.PowerThrottleS)
		}
		out = append(out, p)
	}
	for _, n := range s.NodeEnergy {
		p := base(n.Host, "node", "node")
		addOpt(&p, schema.FieldEnergyJ, n.EnergyJ)
		addOpt(&p, schema.FieldGPUEnergyJ, n.GPUEnergyJ)
		addOpt(&p, schema.FieldCPUEnergyJ, n.CPUEnergyJ)
		out = append(out, p)
	}
	return out
}
