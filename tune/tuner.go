package tune

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Options are a tuning run's: what `heatsink tune` hands over.
type Options struct {
	Space     *Space
	Task      Task
	Methods   []string // gc, random, tpe, default; each gets the same budget and seed
	Budget    int      // 0: the copula's estimate (30 when it is indeterminate)
	Seed      uint64
	Fit       FitOptions
	Sources   []Observation
	Evaluator Evaluator
	Maximize  bool
	Out       string    // report.json and report.md are written here
	Log       io.Writer // progress, live
	// RunArgs is how `heatsink run` takes the recommended configuration
	// back (its --workload or command, with {name} placeholders); Values of
	// the recommendation are filled in.
	RunArgs []string
	// Parallel is how many evaluations run at once (SearchParallel); 0 or
	// 1 is one at a time. The Evaluator must then be safe for concurrent use.
	Parallel int
}

// Tune estimates the budget, runs every method, and writes the report.
func Tune(ctx context.Context, o Options) (*Report, error) {
	if o.Log == nil {
		o.Log = io.Discard
	}
	if err := checkTask(o.Space, o.Task); err != nil {
		return nil, err
	}
	for _, m := range o.Methods {
		if m != "gc" && m != "random" && m != "tpe" && m != "default" {
			return nil, fmt.Errorf("--method %q: want gc, random, tpe or default", m)
		}
	}
	rep := &Report{Space: o.Space.Name, Task: o.Task, Maximize: o.Maximize, Seed: o.Seed, Sources: len(o.Sources)}
	budget := o.Budget
	if budget == 0 && len(o.Sources) == 0 {
		return nil, fmt.Errorf("--budget auto is the copula's estimate, which needs source evaluations (--sources DIR); give --budget N")
	}
	needGC := budget == 0
	for _, m := range o.Methods {
		needGC = needGC || m == "gc"
	}
	if needGC {
		b, err := estimate(o)
		if err != nil {
			return nil, err
		}
		rep.Budget = &b
		fmt.Fprintln(o.Log, "heatsink tune:", b)
		if budget == 0 {
			budget = b.K
			if !b.Determinate {
				budget = 30
				fmt.Fprintln(o.Log, "heatsink tune: spending 30 evaluations, the chapter's fixed budget")
			}
			if f := AutoFloor(o.Space, o.Fit.GC, b.Space); budget < f {
				fmt.Fprintf(o.Log, "heatsink tune: spending %d evaluations, not %d: the copula reaches %d configurations and eq. 5.1 assumes %d of them ideal; %d is its first samples and one step in each parameter\n",
					f, budget, b.Reachable, b.IdealGC, f)
				budget = f
			}
		}
	}
	rep.BudgetUsed = budget
	for _, name := range o.Methods {
		if name == "gc" {
			rep.GC = o.Fit.GC.String()
		}
		m, err := newMethod(name, o)
		if err != nil {
			return rep, err
		}
		progress := func(it Iteration) {
			fmt.Fprintf(o.Log, "%s %3d/%d  %s  -> %s  best %s\n", name, it.N, budget, format(it.Values), result(it.Result), num(it.Best))
		}
		var tr Trace
		if o.Parallel > 1 {
			tr, err = SearchParallel(ctx, o.Space, o.Task, m, o.Evaluator, budget, o.Parallel, o.Maximize, progress)
		} else {
			tr, err = Search(ctx, o.Space, o.Task, m, o.Evaluator, budget, o.Maximize, progress)
		}
		rep.Traces = append(rep.Traces, tr)
		if errors.Is(err, ErrExhausted) {
			fmt.Fprintf(o.Log, "heatsink tune: %s stopped after %d evaluations: %v\n", name, len(tr.Iterations), err)
			continue
		}
		if err != nil {
			rep.finish(o)
			return rep, err
		}
	}
	return rep, rep.finish(o)
}

func checkTask(s *Space, t Task) error {
	for _, f := range s.Task {
		if _, ok := t[f.Name]; !ok {
			return fmt.Errorf("the task needs a value for %s: give --task %s=VALUE", f.Name, f.Name)
		}
	}
	for k := range t {
		found := false
		for _, f := range s.Task {
			found = found || f.Name == k
		}
		if !found {
			return fmt.Errorf("--task %s: the space has no task feature %s", k, k)
		}
	}
	return nil
}

// estimate is eq. 5.1 for the copula fitted on the sources.
func estimate(o Options) (Budget, error) {
	if len(o.Sources) == 0 {
		return Budget{}, fmt.Errorf("the copula needs source evaluations: give --sources DIR (earlier tuning runs of this space and objective)")
	}
	c, err := Fit(o.Space, o.Sources, FitOptions{Quantile: o.Fit.Quantile, Maximize: o.Maximize, GC: o.Fit.GC})
	if err != nil {
		return Budget{}, err
	}
	smp, err := c.Condition(o.Task, o.Seed^0x5bd1e995)
	if err != nil {
		return Budget{}, err
	}
	size := int(math.Min(o.Space.Size(), 2e6))
	if o.Space.Size() <= 2e6 && len(o.Space.Constraints) > 0 {
		size = 0
		o.Space.Enumerate(o.Task, func(Config) bool { size++; return true })
	}
	return EstimateBudget(size, smp.Reachable(size), BudgetOptions{})
}

func newMethod(name string, o Options) (Method, error) {
	switch name {
	case "gc":
		return NewCopulaMethod(o.Space, o.Sources, o.Task, FitOptions{Quantile: o.Fit.Quantile, Maximize: o.Maximize, GC: o.Fit.GC}, o.Seed)
	case "random":
		return NewRandomMethod(o.Space, o.Task, o.Seed), nil
	case "tpe":
		return NewTPEMethod(o.Space, o.Task, o.Maximize, o.Seed)
	case "default":
		return NewDefaultMethod(o.Space), nil
	}
	return nil, fmt.Errorf("--method %q: want gc, random, tpe or default", name)
}

func format(v map[string]string) string {
	var parts []string
	for k, x := range v {
		parts = append(parts, k+"="+x)
	}
	sortStrings(parts)
	return strings.Join(parts, " ")
}

func result(r Result) string {
	if r.Violation != "" {
		return num(r.Objective) + " VIOLATION " + r.Violation
	}
	return num(r.Objective)
}

func num(x float64) string {
	if math.IsNaN(x) {
		return "-"
	}
	return fmt.Sprintf("%.6g", x)
}

func writeJSON(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Errorf("encode %s: %w", path, err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}

// ParseTask parses --task name=number values.
func ParseTask(kvs []string) (Task, error) {
	t := Task{}
	for _, kv := range kvs {
		k, v, ok := strings.Cut(kv, "=")
		x, err := strconv.ParseFloat(v, 64)
		if !ok || err != nil || k == "" {
			return nil, fmt.Errorf("--task %q: want name=number", kv)
		}
		t[k] = x
	}
	return t, nil
}

// AutoFloor is the least budget --budget auto spends: the GC's first
// GCOptions.Local samples and one neighbourhood step in each parameter (at
// most the space's size feasible configurations). Eq. 5.1 assumes
// ⌈5 %⌉ of the space ideal within the copula's reach; where few sources
// make that reach a handful of configurations, it assumes nearly all of
// them ideal and answers 1 or 2 evaluations (the full-w2v run from
// 6 source evaluations: the copula reached 2 of 30, the budget was 1;
// TestAutoBudgetFromSixSourcesSpendsASampleAndAStepPerParameter).
func AutoFloor(s *Space, g GCOptions, size int) int {
	g = g.withDefaults()
	f := len(s.Params)
	if g.Local > 0 {
		f += g.Local
	}
	return min(f, size)
}

// ParseBudget parses --budget: a positive number, or auto (0).
func ParseBudget(s string) (int, error) {
	if s == "auto" {
		return 0, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 {
		return 0, fmt.Errorf("--budget %q: want a positive number or auto", s)
	}
	return n, nil
}
