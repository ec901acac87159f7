package tune

import (
	"context"
	"math"
	"strings"
	"testing"
)

// synthetic is a runtime over the syr2k space whose best tiles grow with n
// (log2 tile ~ n/40) and which prefers packing A: a family of tasks with
// structure that transfers, for which every configuration is known.
func synthetic(t testing.TB) (*Space, *Table) {
	s, err := LoadSpace("testdata/syr2k.yaml")
	if err != nil {
		t.Fatal(err)
	}
	tab := NewTable(s)
	for _, n := range []float64{60, 90, 120, 150, 180, 240} {
		s.Enumerate(nil, func(c Config) bool {
			y := 1.0
			for j := 0; j < 3; j++ {
				d := float64(c[j]) - (n/40 - 0.5 + float64(j)*0.3)
				y += 0.1 * d * d
			}
			y += 0.3*float64(c[3]) + 0.4*float64(1-c[4])
			y *= 1 + 0.02*math.Sin(float64(7*c[0]+13*c[1]+17*c[2]+c[5]))
			tab.Add(Task{"n": n}, c, y)
			return true
		})
	}
	return s, tab
}

func TestGCTransfersWhereTheStructureDoes(t *testing.T) {
	s, tab := synthetic(t)
	x := &Experiment{
		Space: s, Table: tab, SourceEvals: 200, SourceSeed: 1,
		Sources: []Task{{"n": 60}, {"n": 120}, {"n": 180}},
		Targets: []NamedTask{{"SM", Task{"n": 90}}, {"ML", Task{"n": 150}}, {"XL", Task{"n": 240}}},
		Budget:  30, Seeds: []uint64{1, 2, 3}, Checkpoints: []int{1, 3, 10, 30},
	}
	res, err := x.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var sb strings.Builder
	WriteComparison(&sb, x, res)
	t.Log("\n" + sb.String())
	top1 := map[string]int{}
	for _, tr := range res {
		ratio := map[string]float64{}
		for _, m := range tr.Methods {
			ratio[m.Method] = m.MeanRatio
			top1[m.Method] += m.Top1InBudget
			for i := 1; i < len(m.BestRatio); i++ {
				if m.BestRatio[i] > m.BestRatio[i-1]+1e-12 {
					t.Errorf("%s %s: best-so-far got worse: %v", tr.Target.Name, m.Method, m.BestRatio)
				}
			}
		}
		if ratio["gc"] >= ratio["random"] || ratio["gc"] >= ratio["tpe"] {
			t.Errorf("%s: GC's mean evaluation %.3f is no better than random's %.3f and TPE's %.3f",
				tr.Target.Name, ratio["gc"], ratio["random"], ratio["tpe"])
		}
	}
	// 9 searches (3 targets x 3 seeds): the copula's budget is meant to hold
	// a top-1 % configuration with probability 0.95; random and TPE, given
	// the same number of evaluations, are not.
	if top1["gc"] < 6 || top1["gc"] <= top1["random"] || top1["gc"] <= top1["tpe"] {
		t.Errorf("top-1%% within the copula's budget: %v searches of 9", top1)
	}
}

func TestMethodsNeverRepeatAConfiguration(t *testing.T) {
	s, tab := synthetic(t)
	task := Task{"n": 150}
	tpe, err := NewTPEMethod(s, task, false, 4)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range []Method{NewRandomMethod(s, task, 4), tpe} {
		tr, err := Search(context.Background(), s, task, m, tab, 60, false, nil)
		if err != nil {
			t.Fatal(err)
		}
		seen := map[string]bool{}
		for _, it := range tr.Iterations {
			if seen[it.Config.Key()] {
				t.Errorf("%s proposed %v twice", m.Name(), it.Values)
			}
			seen[it.Config.Key()] = true
		}
		if len(tr.Iterations) != 60 {
			t.Errorf("%s: %d evaluations, want 60", m.Name(), len(tr.Iterations))
		}
	}
}

// violating fails every evaluation of a configuration with interchange.
type violating struct{ *Table }

func (v violating) Evaluate(ctx context.Context, t Task, c Config) (Result, error) {
	r, err := v.Table.Evaluate(ctx, t, c)
	if c[3] == 1 {
		r.Objective, r.Violation = 0, "thermal throttling"
	}
	return r, err
}

func TestAViolationNeverCountsAsBest(t *testing.T) {
	s, tab := synthetic(t)
	task := Task{"n": 90}
	tr, err := Search(context.Background(), s, task, NewRandomMethod(s, task, 2), violating{tab}, 40, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	violations := 0
	for _, it := range tr.Iterations {
		if it.Result.Violation != "" {
			violations++
		}
		if it.Best == 0 {
			t.Fatalf("iteration %d: best is a violating evaluation's 0", it.N)
		}
	}
	if violations == 0 {
		t.Fatal("no evaluation violated: the test proves nothing")
	}
}
