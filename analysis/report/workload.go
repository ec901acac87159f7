package report

import (
	"fmt"
	"math"
	"strings"

	"github.com/heatsink-hpc/heatsink/analysis"
)

// workloadSection is what the job reported of itself: every per-iteration
// metric's spread and how the end of the load compares with its start.
func workloadSection(rep *analysis.Report) section {
	w := rep.Workload
	s := section{Title: "Workload"}
	if len(w.Metrics) == 0 {
		why := w.NotComputed
		if why == "" {
			why = "the run records no workload metrics"
		}
		s.Paras = append(s.Paras, "Not computed: "+why+".")
		return s
	}
	s.Title = fmt.Sprintf("Workload: %s, %d iterations", orDash(w.Name), w.Iterations)
	if w.Failed > 0 {
		s.Title += fmt.Sprintf(", %d failed (left out below)", w.Failed)
	}
	s.Table = &table{Head: []string{"metric", "n", "median", "min", "max", "first 10 %", "last 10 %", "change %"}}
	for _, m := range w.Metrics {
		change := dash
		if m.ChangePct != nil {
			change = fmt.Sprintf("%+.1f %%", *m.ChangePct)
		}
		s.Table.Rows = append(s.Table.Rows, []string{m.Name, fmt.Sprint(m.N), metricValue(m.Name, m.Median),
			metricValue(m.Name, m.Min), metricValue(m.Name, m.Max), metricPtr(m.Name, m.First10), metricPtr(m.Name, m.Last10), change})
	}
	s.Paras = append(s.Paras, "First and last 10 %: the mean of the first and last tenth of the successful iterations (at least one each); change is last against first.")
	return s
}

func metricPtr(name string, v *float64) string {
	if v == nil {
		return dash
	}
	return metricValue(name, *v)
}

// metricValue prints a metric with an SI prefix where its unit counts
// things per second (5.31 T flop_per_s is easier to read than 5.31e+12).
func metricValue(name string, v float64) string {
	if math.IsNaN(v) {
		return dash
	}
	if strings.HasSuffix(name, "_per_s") {
		return analysis.SI(v)
	}
	a := math.Abs(v)
	switch {
	case a == 0:
		return "0"
	case a >= 1e6 || a < 1e-3:
		return fmt.Sprintf("%.3g", v)
	case a >= 100:
		return fmt.Sprintf("%.0f", v)
	}
	return fmt.Sprintf("%.3g", v)
}

// workloadComparison sets each workload metric's median side by side,
// with its change against the reference run: what two runs of the same
// job on a VM differ in when there is no temperature to compare.
func workloadComparison(cmp *analysis.Comparison) (section, bool) {
	s := section{Title: "Workload"}
	if len(cmp.Workload) == 0 {
		return s, false
	}
	s.Table = &table{Head: []string{"metric"}}
	for i, l := range cmp.Labels {
		s.Table.Head = append(s.Table.Head, l+" median")
		if i > 0 {
			s.Table.Head = append(s.Table.Head, l+" change %")
		}
	}
	for _, mc := range cmp.Workload {
		row := []string{mc.Metric}
		for i := range cmp.Labels {
			v := dash
			if mc.Medians[i] != nil {
				v = metricValue(mc.Metric, *mc.Medians[i])
			}
			row = append(row, v)
			if i > 0 {
				ch := dash
				if mc.ChangePct[i] != nil {
					ch = fmt.Sprintf("%+.1f %%", *mc.ChangePct[i])
				} else {
					s.List = append(s.List, mc.Text(cmp.Labels, i))
				}
				row = append(row, ch)
			}
		}
		s.Table.Rows = append(s.Table.Rows, row)
	}
	var names []string
	for i, l := range cmp.Labels {
		if len(cmp.Workload) > 0 {
			names = append(names, fmt.Sprintf("%s %s", l, orDash(cmp.Workload[0].Workloads[i])))
		}
	}
	s.Paras = append(s.Paras, "Median over each run's successful iterations during the load ("+strings.Join(names, ", ")+"); change against "+cmp.Labels[0]+".")
	return s, true
}
