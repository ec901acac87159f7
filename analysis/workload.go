package analysis

import (
	"fmt"
	"math"
	"slices"
	"strings"
)

// WorkloadResult is what the job itself reported during the load: each
// per-iteration metric summarised, and how the first tenth of the load
// compares with the last (a GPU that throttles as it heats shows it here).
type WorkloadResult struct {
	Name       string `json:"name"`
	Iterations int    `json:"iterations"`
	// Failed iterations ended with an error or a non-zero exit status (a
	// built-in workload's failed verification among them); they are left
	// out of the metric summaries.
	Failed  int             `json:"failed"`
	Metrics []MetricSummary `json:"metrics"`
	// Throughput names the metric drawn over time: flop_per_s or
	// triad_bytes_per_s when reported, else the first _per_s metric, else
	// runtime_s.
	Throughput string `json:"throughput,omitempty"`
	// Timeline is each successful iteration's end (s since the run's start)
	// and its throughput metric, for the figure; not part of the JSON.
	Timeline    []IterationValue `json:"-"`
	NotComputed string           `json:"not_computed,omitempty"`
}

// MetricSummary is one per-iteration metric over the load's successful
// iterations. First10 and Last10 are the means of the first and last tenth
// of them (at least one iteration each); ChangePct is last against first.
type MetricSummary struct {
	Name      string   `json:"name"`
	N         int      `json:"n"`
	Median    float64  `json:"median"`
	Min       float64  `json:"min"`
	Max       float64  `json:"max"`
	First10   *float64 `json:"first_10pct_mean"`
	Last10    *float64 `json:"last_10pct_mean"`
	ChangePct *float64 `json:"change_pct"`
}

// IterationValue is one iteration's metric at the time it ended, and the
// GPU it ran on where the run says (rundir.Iteration's Device).
type IterationValue struct {
	AtS   float64
	Value float64
	GPU   string
}

// Workload summarises the iterations run.json records. With fewer than
// two successful iterations the first/last comparison is not made.
func Workload(r *Run) WorkloadResult {
	w := r.Meta.Workload
	if w == nil {
		return WorkloadResult{NotComputed: "run.json records no workload (a run of collect, or an import without one)"}
	}
	res := WorkloadResult{Name: w.Name, Iterations: len(w.Iterations), Metrics: []MetricSummary{}}
	if len(w.Iterations) == 0 {
		res.NotComputed = "the workload recorded no iteration"
		return res
	}
	values := map[string][]float64{}
	var ends []float64
	for _, it := range w.Iterations {
		if it.ExitStatus != 0 || it.Error != "" {
			res.Failed++
			continue
		}
		ends = append(ends, it.End.Sub(r.Start).Seconds())
		if it.RuntimeS > 0 {
			values["runtime_s"] = append(values["runtime_s"], it.RuntimeS)
		}
		for k, v := range it.Metrics {
			if !math.IsNaN(v) && !math.IsInf(v, 0) {
				values[k] = append(values[k], v)
			}
		}
	}
	if len(ends) == 0 {
		res.NotComputed = fmt.Sprintf("all %d iterations failed", res.Iterations)
		return res
	}
	names := slices.Sorted(func(yield func(string) bool) {
		for k := range values {
			if !yield(k) {
				return
			}
		}
	})
	for _, k := range names {
		res.Metrics = append(res.Metrics, summariseMetric(k, values[k]))
		if res.Throughput == "" && strings.HasSuffix(k, "_per_s") {
			res.Throughput = k
		}
	}
	// The headline rate when a workload reports several: BabelStream's is
	// the triad.
	for _, k := range []string{"flop_per_s", "triad_bytes_per_s"} {
		if len(values[k]) > 0 {
			res.Throughput = k
			break
		}
	}
	if res.Throughput == "" && len(values["runtime_s"]) > 0 {
		res.Throughput = "runtime_s"
	}
	i := 0
	for _, it := range w.Iterations {
		if it.ExitStatus != 0 || it.Error != "" {
			continue
		}
		v, ok := it.Metrics[res.Throughput]
		if res.Throughput == "runtime_s" {
			v, ok = it.RuntimeS, it.RuntimeS > 0
		}
		if ok && !math.IsNaN(v) && !math.IsInf(v, 0) {
			res.Timeline = append(res.Timeline, IterationValue{AtS: ends[i], Value: v, GPU: it.Device})
		}
		i++
	}
	return res
}

// summariseMetric takes values in iteration order.
func summariseMetric(name string, v []float64) MetricSummary {
	s := MetricSummary{Name: name, N: len(v)}
	sorted := slices.Clone(v)
	slices.Sort(sorted)
	s.Min, s.Max = sorted[0], sorted[len(sorted)-1]
	if n := len(sorted); n%2 == 1 {
		s.Median = sorted[n/2]
	} else {
		s.Median = (sorted[n/2-1] + sorted[n/2]) / 2
	}
	if len(v) >= 2 {
		k := max(1, int(math.Round(0.1*float64(len(v)))))
		first, last := mean(v[:k]), mean(v[len(v)-k:])
		s.First10, s.Last10 = ptr(first), ptr(last)
		if first != 0 {
			s.ChangePct = ptr(100 * (last - first) / math.Abs(first))
		}
	}
	return s
}

func mean(v []float64) float64 {
	sum := 0.0
	for _, x := range v {
		sum += x
	}
	return sum / float64(len(v))
}

// HostSeries picks what the host source recorded of the machine as a
// whole: CPU utilisation (all CPUs), memory used and the 1-minute load.
func HostSeries(r *Run) []*Series {
	var out []*Series
	for _, want := range []struct{ measurement, field, tag, value string }{
		{"cpu", "usage_pct", "cpu", "total"},
		{"mem", "used_bytes", "", ""},
		{"load", "load1", "", ""},
	} {
		for _, s := range r.Series {
			if s.Measurement == want.measurement && s.Field == want.field && (want.tag == "" || s.Tag(want.tag) == want.value) && len(s.T) > 0 {
				out = append(out, s)
				break
			}
		}
	}
	return out
}
