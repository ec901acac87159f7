package analysis

import (
	"fmt"
	"math"
)

// MetricComparison is one workload metric across runs: each run's median
// over its successful iterations and its change against the reference
// (the first run). A run that did not report the metric has nil there.
type MetricComparison struct {
	Metric string `json:"metric"`
	// Workloads names each run's workload, in the runs' order.
	Workloads []string   `json:"workloads"`
	Medians   []*float64 `json:"medians"`
	N         []int      `json:"n"`
	// ChangePct is each run's median against the reference's, in %;
	// nil for the reference itself and where either median is missing or
	// the reference's is zero.
	ChangePct []*float64 `json:"change_pct"`
}

// compareWorkloads sets the workload metrics of reports side by side, in
// the order they first appear. A VM has no temperature to compare, but a
// cpu-stream run's bandwidth is still a result two runs differ in.
func compareWorkloads(reports []*Report) []MetricComparison {
	var order []string
	seen := map[string]bool{}
	for _, r := range reports {
		for _, m := range r.Workload.Metrics {
			if !seen[m.Name] {
				seen[m.Name] = true
				order = append(order, m.Name)
			}
		}
	}
	out := []MetricComparison{}
	for _, name := range order {
		mc := MetricComparison{Metric: name}
		for _, r := range reports {
			mc.Workloads = append(mc.Workloads, r.Workload.Name)
			var med *float64
			n := 0
			for _, m := range r.Workload.Metrics {
				if m.Name == name {
					med, n = ptr(m.Median), m.N
				}
			}
			mc.Medians, mc.N = append(mc.Medians, med), append(mc.N, n)
		}
		ref := mc.Medians[0]
		for i, m := range mc.Medians {
			var ch *float64
			if i > 0 && ref != nil && m != nil && *ref != 0 && !math.IsNaN(*ref) {
				ch = ptr(100 * (*m - *ref) / math.Abs(*ref))
			}
			mc.ChangePct = append(mc.ChangePct, ch)
		}
		out = append(out, mc)
	}
	return out
}

// Text says how the metric changed in run i against the reference.
func (mc MetricComparison) Text(labels []string, i int) string {
	switch {
	case mc.ChangePct[i] != nil:
		return fmt.Sprintf("%s: median %+.1f %% in %s against %s", mc.Metric, *mc.ChangePct[i], labels[i], labels[0])
	case mc.Medians[0] == nil:
		return fmt.Sprintf("%s: not compared: %s did not report it", mc.Metric, labels[0])
	case mc.Medians[i] == nil:
		return fmt.Sprintf("%s: not compared: %s did not report it", mc.Metric, labels[i])
	}
	return fmt.Sprintf("%s: not compared: the median in %s is 0", mc.Metric, labels[0])
}
