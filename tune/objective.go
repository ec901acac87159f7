package tune

import (
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"

	"github.com/heatsink-hpc/heatsink/rundir"
)

// Objective is what an evaluation measures, from its run's measured
// iterations (all but the first).
type Objective struct {
	Spec     string
	Maximize bool
	kind     string // runtime, energy, metric, re, json
	metric   string
	re       *regexp.Regexp
	path     []string
}

// ParseObjective parses --objective:
//
//	runtime_s              mean runtime of the measured iterations (minimised)
//	energy_per_work        energy (NVML, RAPL) per unit of the work the
//	                       workload reports, or per iteration of a command
//	max:METRIC, min:METRIC a metric the workload reports (tokens_per_s)
//	max:re:REGEXP          the first group of the REGEXP's matches in the
//	                       command's output, one per iteration, in order
//	min:json:a.b           a number at a path in the JSON lines the command prints
func ParseObjective(s string) (Objective, error) {
	o := Objective{Spec: s}
	switch s {
	case "runtime_s", "":
		o.Spec, o.kind = "runtime_s", "runtime"
		return o, nil
	case "energy_per_work":
		o.kind = "energy"
		return o, nil
	}
	dir, rest, ok := strings.Cut(s, ":")
	if !ok || (dir != "min" && dir != "max") || rest == "" {
		return o, fmt.Errorf("--objective %q: want runtime_s, energy_per_work, or min:/max: followed by a metric, re:REGEXP or json:PATH", s)
	}
	o.Maximize = dir == "max"
	switch {
	case strings.HasPrefix(rest, "re:"):
		re, err := regexp.Compile(rest[3:])
		if err != nil {
			return o, fmt.Errorf("--objective %q: %w", s, err)
		}
		if re.NumSubexp() < 1 {
			return o, fmt.Errorf("--objective %q: the regular expression needs a group around the number", s)
		}
		o.kind, o.re = "re", re
	case strings.HasPrefix(rest, "json:"):
		o.kind, o.path = "json", strings.Split(rest[5:], ".")
	default:
		o.kind, o.metric = "metric", rest
	}
	return o, nil
}

// NeedsOutput says the objective reads the command's output.
func (o Objective) NeedsOutput() bool { return o.kind == "re" || o.kind == "json" }

// measure computes the objective from the measured iterations, the
// command's output, and the thermal record.
func (o Objective) measure(its []rundir.Iteration, nIts int, stdout string, th Thermal) (float64, error) {
	switch o.kind {
	case "runtime":
		s := 0.0
		for _, it := range its {
			s += it.RuntimeS
		}
		return s / float64(len(its)), nil
	case "energy":
		if math.IsNaN(th.EnergyJ) {
			return math.NaN(), fmt.Errorf("energy_per_work: no energy counter covered the measured iterations (NVML or RAPL, and iterations longer than the sampling interval)")
		}
		work := 0.0
		for _, it := range its {
			w := 1.0
			for k, v := range it.Metrics {
				if strings.HasPrefix(k, "work_") {
					w = v
				}
			}
			work += w
		}
		return th.EnergyJ / work, nil
	case "metric":
		s := 0.0
		for _, it := range its {
			v, ok := it.Metrics[o.metric]
			if !ok {
				return math.NaN(), fmt.Errorf("iteration %d reported no metric %q", it.N, o.metric)
			}
			s += v
		}
		return s / float64(len(its)), nil
	}
	vals, err := o.fromOutput(stdout)
	if err != nil {
		return math.NaN(), err
	}
	// One value per iteration, in order: the measured ones are the last.
	if len(vals) < nIts {
		return math.NaN(), fmt.Errorf("objective %s: %d values in the output of %d iterations", o.Spec, len(vals), nIts)
	}
	vals = vals[len(vals)-len(its):]
	s := 0.0
	for _, v := range vals {
		s += v
	}
	return s / float64(len(vals)), nil
}

func (o Objective) fromOutput(out string) ([]float64, error) {
	var vals []float64
	if o.kind == "re" {
		for _, m := range o.re.FindAllStringSubmatch(out, -1) {
			v, err := strconv.ParseFloat(m[1], 64)
			if err != nil {
				return nil, fmt.Errorf("objective %s: %q is not a number", o.Spec, m[1])
			}
			vals = append(vals, v)
		}
		return vals, nil
	}
	for _, line := range strings.Split(out, "\n") {
		line = strings.TrimSpace(line)
		if !strings.HasPrefix(line, "{") {
			continue
		}
		var doc any
		if json.Unmarshal([]byte(line), &doc) != nil {
			continue
		}
		for _, k := range o.path {
			m, ok := doc.(map[string]any)
			if !ok {
				doc = nil
				break
			}
			doc = m[k]
		}
		if v, ok := doc.(float64); ok {
			vals = append(vals, v)
		}
	}
	return vals, nil
}
