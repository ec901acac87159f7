package tune

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// Report is a tuning run's outcome: each method's evaluations, its
// best-so-far curve, and the recommended configuration.
type Report struct {
	Space      string   `json:"space"`
	Task       Task     `json:"task"`
	Maximize   bool     `json:"maximize"`
	Seed       uint64   `json:"seed"`
	Sources    int      `json:"source_evaluations"`
	Budget     *Budget  `json:"budget,omitempty"`
	GC         string   `json:"gc,omitempty"` // the copula's variant (--gc), when gc ran
	BudgetUsed int      `json:"budget_used"`
	Traces     []Trace  `json:"-"`
	Curves     []Curve  `json:"methods"`
	Best       *Pick    `json:"recommended,omitempty"`
	RunCommand []string `json:"run_command,omitempty"`
}

// Curve is one method's evaluations and best-so-far.
type Curve struct {
	Method      string      `json:"method"`
	Evaluations []Evaluated `json:"evaluations"`
}

// Evaluated is one evaluation as reported.
type Evaluated struct {
	N         int                `json:"n"`
	Values    map[string]string  `json:"values"`
	Objective *float64           `json:"objective,omitempty"`
	BestSoFar *float64           `json:"best_so_far,omitempty"`
	Violation string             `json:"violation,omitempty"`
	Metrics   map[string]float64 `json:"metrics,omitempty"`
	Run       string             `json:"run,omitempty"`
	Node      string             `json:"node,omitempty"` // where a --launcher slurm evaluation ran
}

// Pick is the recommended configuration.
type Pick struct {
	Method    string            `json:"method"`
	Values    map[string]string `json:"values"`
	Objective float64           `json:"objective"`
	Run       string            `json:"run,omitempty"`
}

func ptr(x float64) *float64 {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return nil
	}
	return &x
}

func (r *Report) finish(o Options) error {
	r.Curves = nil
	for _, tr := range r.Traces {
		c := Curve{Method: tr.Method}
		for _, it := range tr.Iterations {
			c.Evaluations = append(c.Evaluations, Evaluated{N: it.N, Values: it.Values, Objective: ptr(it.Result.Objective),
				BestSoFar: ptr(it.Best), Violation: it.Result.Violation, Metrics: finite(it.Result.Metrics), Run: it.Result.Run,
				Node: nodeOf(it.Result.Run)})
			res := it.Result
			if res.Violation == "" && !math.IsNaN(res.Objective) && (r.Best == nil || better(res.Objective, r.Best.Objective, r.Maximize)) {
				r.Best = &Pick{Method: tr.Method, Values: it.Values, Objective: res.Objective, Run: res.Run}
			}
		}
		r.Curves = append(r.Curves, c)
	}
	if r.Best != nil && len(o.RunArgs) > 0 {
		vals := map[string]string{}
		for k, v := range r.Best.Values {
			vals[k] = v
		}
		for k, v := range r.Task {
			vals[k] = strconv.FormatFloat(v, 'f', -1, 64)
		}
		if args, err := Substitute(o.RunArgs, vals); err == nil {
			r.RunCommand = args
		}
	}
	if o.Out == "" {
		return nil
	}
	if err := writeJSON(filepath.Join(o.Out, "report.json"), r); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(o.Out, "report.md"), []byte(r.Markdown()), 0o644); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(o.Out, "report.html"), []byte(r.HTML()), 0o644); err != nil {
		return err
	}
	if r.Best == nil || len(r.RunCommand) == 0 {
		return nil
	}
	b, err := bestOf(r, r.RunCommand)
	if err != nil {
		return err
	}
	return b.write(filepath.Join(o.Out, TunedFile))
}

// nodeOf is the node an evaluation's tune.json names, "" if none: the
// report shows where each evaluation of a --launcher slurm run ran.
func nodeOf(run string) string {
	if run == "" {
		return ""
	}
	var rec Record
	if readJSON(filepath.Join(run, RecordFile), &rec) != nil {
		return ""
	}
	return rec.Node
}

func finite(m map[string]float64) map[string]float64 {
	out := map[string]float64{}
	for k, v := range m {
		if !math.IsNaN(v) && !math.IsInf(v, 0) {
			out[k] = v
		}
	}
	return out
}

// Markdown is the report as text: the budget, the best-so-far curve of
// every method side by side, and the recommendation.
func (r *Report) Markdown() string {
	var b strings.Builder
	dir := "smaller is better"
	if r.Maximize {
		dir = "larger is better"
	}
	fmt.Fprintf(&b, "# heatsink tune: %s, task %s\n\n", r.Space, format(taskValues(r.Task)))
	fmt.Fprintf(&b, "%d source evaluations; %d evaluations per method, seed %d; objective: %s.\n\n", r.Sources, r.BudgetUsed, r.Seed, dir)
	if r.Budget != nil {
		fmt.Fprintf(&b, "GC %s.\n\n", r.Budget)
	}
	if r.GC != "" {
		fmt.Fprintf(&b, "GC variant: --gc %s.\n\n", r.GC)
	}
	b.WriteString("## Best so far\n\n| evaluation |")
	for _, c := range r.Curves {
		b.WriteString(" " + c.Method + " |")
	}
	b.WriteString("\n|---|" + strings.Repeat("---|", len(r.Curves)) + "\n")
	for n := 1; n <= r.BudgetUsed; n++ {
		fmt.Fprintf(&b, "| %d |", n)
		for _, c := range r.Curves {
			cell := ""
			if n <= len(c.Evaluations) && c.Evaluations[n-1].BestSoFar != nil {
				cell = fmt.Sprintf("%.6g", *c.Evaluations[n-1].BestSoFar)
			}
			b.WriteString(" " + cell + " |")
		}
		b.WriteString("\n")
	}
	for _, c := range r.Curves {
		nodes := false
		for _, e := range c.Evaluations {
			nodes = nodes || e.Node != ""
		}
		head, rule := "| n | configuration | objective | peak °C | energy J | violation |", "|---|---|---|---|---|---|"
		if nodes {
			head, rule = head+" node |", rule+"---|"
		}
		fmt.Fprintf(&b, "\n## %s evaluations\n\n%s\n%s\n", c.Method, head, rule)
		for _, e := range c.Evaluations {
			obj := "-"
			if e.Objective != nil {
				obj = fmt.Sprintf("%.6g", *e.Objective)
			}
			fmt.Fprintf(&b, "| %d | %s | %s | %s | %s | %s |", e.N, format(e.Values), obj, metric(e.Metrics, "peak_temp_c"), metric(e.Metrics, "energy_j"), e.Violation)
			if nodes {
				b.WriteString(" " + e.Node + " |")
			}
			b.WriteString("\n")
		}
	}
	b.WriteString("\n## Recommended\n\n")
	if r.Best == nil {
		b.WriteString("none: no evaluation succeeded within the constraints.\n")
		return b.String()
	}
	fmt.Fprintf(&b, "%s (found by %s): objective %.6g", format(r.Best.Values), r.Best.Method, r.Best.Objective)
	if r.Best.Run != "" {
		fmt.Fprintf(&b, ", run %s", r.Best.Run)
	}
	b.WriteString("\n")
	if len(r.RunCommand) > 0 {
		fmt.Fprintf(&b, "\n    heatsink run %s\n\nor, from %s in this directory: `heatsink run --tuned DIR`\n", r.RunCommandLine(), TunedFile)
	}
	return b.String()
}

func metric(m map[string]float64, k string) string {
	if v, ok := m[k]; ok {
		return fmt.Sprintf("%.1f", v)
	}
	return "-"
}

func taskValues(t Task) map[string]string {
	m := map[string]string{}
	for k, v := range t {
		m[k] = strconv.FormatFloat(v, 'f', -1, 64)
	}
	return m
}

// RunCommandLine is RunCommand as a shell would need it typed: arguments
// with spaces or shell metacharacters single-quoted.
func (r *Report) RunCommandLine() string { return strings.Join(quoteAll(r.RunCommand), " ") }

func quoteAll(args []string) []string {
	out := make([]string, len(args))
	for i, a := range args {
		// Anything but the characters no POSIX shell treats specially is
		// single-quoted: inside quotes only ' itself needs escaping.
		if a == "" || strings.IndexFunc(a, func(r rune) bool { return !shellSafe(r) }) >= 0 {
			a = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		}
		out[i] = a
	}
	return out
}

func shellSafe(r rune) bool {
	return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("_@%+=:,./-", r)
}

func sortStrings(s []string) { sort.Strings(s) }
