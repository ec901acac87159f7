package tune

import (
	"context"
	"errors"
	"math"
	"strings"
	"sync"
	"testing"
	"time"
)

// gate replays the table, but no evaluation returns until want of them
// have been in flight together (or a second has passed, so a search that
// never gets there still ends): it shows how many the search runs at once.
type gate struct {
	*Table
	want int

	mu       sync.Mutex
	inFlight int
	most     int
	full     chan struct{}
	opened   bool
}

func (g *gate) Evaluate(ctx context.Context, t Task, c Config) (Result, error) {
	g.mu.Lock()
	g.inFlight++
	g.most = max(g.most, g.inFlight)
	if g.inFlight == g.want && !g.opened {
		g.opened = true
		close(g.full)
	}
	full := g.full
	g.mu.Unlock()
	select {
	case <-full:
	case <-time.After(time.Second):
	}
	g.mu.Lock()
	g.inFlight--
	g.mu.Unlock()
	return g.Table.Evaluate(ctx, t, c)
}

func TestSearchParallelRunsNAtOnceAndSeesEveryResult(t *testing.T) {
	s, tab := synthetic(t)
	task := Task{"n": 150}
	var sources []Observation
	for i, n := range []float64{60, 120, 180} {
		sources = append(sources, tab.Sample(Task{"n": n}, 100, uint64(i))...)
	}
	for _, tc := range []struct {
		name             string
		budget, parallel int
	}{
		{"gc", 6, 3},
		{"random", 7, 3}, // the last batch is one short
		{"tpe", 8, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, err := newMethod(tc.name, Options{Space: s, Task: task, Sources: sources, Seed: 3, Fit: FitOptions{Quantile: 0.3}})
			if err != nil {
				t.Fatal(err)
			}
			g := &gate{Table: tab, want: tc.parallel, full: make(chan struct{})}
			var seen []Iteration
			tr, err := SearchParallel(context.Background(), s, task, m, g, tc.budget, tc.parallel, false, func(it Iteration) { seen = append(seen, it) })
			if err != nil {
				t.Fatal(err)
			}
			if g.most != tc.parallel {
				t.Errorf("at most %d evaluations ran at once, want %d", g.most, tc.parallel)
			}
			if len(tr.Iterations) != tc.budget || len(seen) != tc.budget {
				t.Fatalf("%d iterations, %d reported, want %d", len(tr.Iterations), len(seen), tc.budget)
			}
			keys := map[string]bool{}
			best := math.Inf(1)
			for i, it := range tr.Iterations {
				if keys[it.Config.Key()] {
					t.Errorf("%v proposed twice", it.Values)
				}
				keys[it.Config.Key()] = true
				want, _ := tab.Evaluate(context.Background(), task, it.Config)
				if it.N != i+1 || it.Result.Objective != want.Objective {
					t.Errorf("iteration %d: n %d objective %v, want %v", i, it.N, it.Result.Objective, want.Objective)
				}
				best = math.Min(best, it.Result.Objective)
				if it.Best != best {
					t.Errorf("iteration %d: best so far %v, want %v", it.N, it.Best, best)
				}
			}
		})
	}
}

// failing fails outright every evaluation of a configuration with interchange.
type failing struct{ *Table }

func (f failing) Evaluate(ctx context.Context, t Task, c Config) (Result, error) {
	if c[3] == 1 {
		return Result{}, errors.New("srun: node lost")
	}
	return f.Table.Evaluate(ctx, t, c)
}

func TestSearchParallelStopsAtAFailureAndKeepsWhatRan(t *testing.T) {
	s, tab := synthetic(t)
	task := Task{"n": 90}
	tr, err := SearchParallel(context.Background(), s, task, NewRandomMethod(s, task, 2), failing{tab}, 40, 3, false, nil)
	if err == nil || !strings.Contains(err.Error(), "node lost") || len(tr.Iterations) >= 40 {
		t.Fatalf("err %v after %d iterations: a failed evaluation must stop the search", err, len(tr.Iterations))
	}
	for _, it := range tr.Iterations {
		if it.Config[3] == 1 {
			t.Errorf("a failed evaluation was recorded: %v", it.Values)
		}
	}
	if _, err := SearchParallel(context.Background(), s, task, NewRandomMethod(s, task, 2), tab, 4, 0, false, nil); err == nil {
		t.Error("parallel 0 accepted")
	}
}
