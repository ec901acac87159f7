package tune

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"strings"
)

// Experiment is the chapter's protocol against a ground-truth table: source
// evaluations of the source tasks (a random search replayed from the
// table), then each method on each target task with the same budget and
// seeds, every evaluation replayed from the table.
type Experiment struct {
	Space       *Space
	Table       *Table
	Sources     []Task
	SourceEvals int // per source task
	SourceSeed  uint64
	Targets     []NamedTask
	Budget      int
	Seeds       []uint64
	Maximize    bool
	Fit         FitOptions
	Checkpoints []int // report the best after this many evaluations (1, 3, 10, 30)
}

// NamedTask is a task with a label (SM, ML, XL).
type NamedTask struct {
	Name string
	Task Task
}

// TargetResult is every method's outcome on one target task.
type TargetResult struct {
	Target  NamedTask
	Optimum float64 // the brute-forced best
	Top1    float64 // the worst objective still in the top 1 %
	Budget  Budget  // the copula's, estimated before evaluating
	Methods []MethodResult
}

// MethodResult is one method's outcome on a target over the seeds.
type MethodResult struct {
	Method string
	Traces []Trace
	// BestRatio[i] is the mean over seeds of the best objective after
	// Checkpoints[i] evaluations divided by the optimum (for a runtime, 1 is
	// optimal and larger is worse; for a throughput, smaller is worse).
	BestRatio []float64
	// MeanRatio is the mean over seeds of the mean objective of all
	// evaluations, divided by the optimum.
	MeanRatio float64
	// Top1InBudget counts the seeds that reached the top 1 % within the
	// copula's budget (for every method, at the same number of evaluations).
	Top1InBudget int
	// Within5InBudget counts the seeds whose best within the budget is
	// within 5 % of the optimum.
	Within5InBudget int
}

// Run runs the experiment.
func (x *Experiment) Run(ctx context.Context) ([]TargetResult, error) {
	var sources []Observation
	for i, t := range x.Sources {
		sources = append(sources, x.Table.Sample(t, x.SourceEvals, x.SourceSeed+uint64(i))...)
	}
	var out []TargetResult
	for _, tg := range x.Targets {
		size := 0
		x.Space.Enumerate(tg.Task, func(Config) bool { size++; return true })
		ranked := x.Table.Ranked(tg.Task, x.Maximize)
		if len(ranked) == 0 {
			return nil, fmt.Errorf("target %s: no ground truth in the table", tg.Name)
		}
		tr := TargetResult{Target: tg, Optimum: ranked[0], Top1: ranked[int(math.Ceil(0.01*float64(len(ranked))))-1]}
		gc, err := Fit(x.Space, sources, x.Fit)
		if err != nil {
			return nil, err
		}
		smp, err := gc.Condition(tg.Task, 0xb0d9e7)
		if err != nil {
			return nil, err
		}
		if tr.Budget, err = EstimateBudget(size, smp.Reachable(size), BudgetOptions{}); err != nil {
			return nil, err
		}
		for _, name := range []string{"gc", "random", "tpe", "default"} {
			mr, err := x.method(ctx, name, sources, tg, tr)
			if err != nil {
				return nil, fmt.Errorf("target %s, %s: %w", tg.Name, name, err)
			}
			tr.Methods = append(tr.Methods, mr)
		}
		out = append(out, tr)
	}
	return out, nil
}

func (x *Experiment) method(ctx context.Context, name string, sources []Observation, tg NamedTask, tr TargetResult) (MethodResult, error) {
	mr := MethodResult{Method: name, BestRatio: make([]float64, len(x.Checkpoints))}
	seeds := x.Seeds
	if name == "default" {
		seeds = seeds[:1] // deterministic: one evaluation
	}
	k := tr.Budget.K
	if !tr.Budget.Determinate {
		k = x.Budget
	}
	for _, seed := range seeds {
		var m Method
		var err error
		switch name {
		case "gc":
			m, err = NewCopulaMethod(x.Space, sources, tg.Task, x.Fit, seed)
		case "random":
			m = NewRandomMethod(x.Space, tg.Task, seed)
		case "tpe":
			m, err = NewTPEMethod(x.Space, tg.Task, x.Maximize, seed)
		case "default":
			m = NewDefaultMethod(x.Space)
		}
		if err != nil {
			return mr, err
		}
		trace, err := Search(ctx, x.Space, tg.Task, m, x.Table, x.Budget, x.Maximize, nil)
		if err != nil && !errors.Is(err, ErrExhausted) {
			return mr, err
		}
		mr.Traces = append(mr.Traces, trace)
		for i, n := range x.Checkpoints {
			mr.BestRatio[i] += trace.BestAfter(n) / tr.Optimum / float64(len(seeds))
		}
		mr.MeanRatio += trace.Mean() / tr.Optimum / float64(len(seeds))
		b := trace.BestAfter(k)
		if !better(tr.Top1, b, x.Maximize) {
			mr.Top1InBudget++
		}
		if r := b / tr.Optimum; (x.Maximize && r >= 1/1.05) || (!x.Maximize && r <= 1.05) {
			mr.Within5InBudget++
		}
	}
	return mr, nil
}

// WriteComparison prints the experiment's table in Markdown.
func WriteComparison(w io.Writer, x *Experiment, res []TargetResult) {
	var cp []string
	for _, n := range x.Checkpoints {
		cp = append(cp, fmt.Sprintf("best@%d", n))
	}
	fmt.Fprintf(w, "| target | method | %s | mean of all | top-1%% within budget | within 5%% within budget |\n", strings.Join(cp, " | "))
	fmt.Fprintf(w, "|---|---|%s---|---|---|\n", strings.Repeat("---|", len(cp)))
	for _, tr := range res {
		for _, m := range tr.Methods {
			var cells []string
			for _, r := range m.BestRatio {
				cells = append(cells, fmt.Sprintf("%.3f", r))
			}
			fmt.Fprintf(w, "| %s | %s | %s | %.3f | %d/%d | %d/%d |\n", tr.Target.Name, m.Method,
				strings.Join(cells, " | "), m.MeanRatio, m.Top1InBudget, len(m.Traces), m.Within5InBudget, len(m.Traces))
		}
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "| target | task | optimum | top-1% threshold | GC budget |")
	fmt.Fprintln(w, "|---|---|---|---|---|")
	for _, tr := range res {
		fmt.Fprintf(w, "| %s | %v | %.6g | %.6g | %s |\n", tr.Target.Name, tr.Target.Task, tr.Optimum, tr.Top1, tr.Budget)
	}
}
