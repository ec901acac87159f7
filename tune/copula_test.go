package tune

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"gonum.org/v1/gonum/stat"
)

// gaussianSpace is a task feature t and an integer parameter x wide enough
// that rounding to integers barely disturbs a Gaussian.
func gaussianSpace(t testing.TB) *Space {
	s, err := ParseSpace("g.yaml", []byte(`
task:
  - {name: t, min: -8, max: 8}
params:
  - {name: x, type: int, min: -1000, max: 1000}
`))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// bivariate draws n (t, x) pairs with t ~ N(0,1), x ~ N(0, sx²), corr rho.
func bivariate(n int, rho, sx float64, seed uint64) []Observation {
	r := rand.New(rand.NewPCG(seed, 1))
	obs := make([]Observation, n)
	for i := range obs {
		a, b := r.NormFloat64(), r.NormFloat64()
		tv := a
		x := sx * (rho*a + math.Sqrt(1-rho*rho)*b)
		obs[i] = Observation{Task: Task{"t": tv}, Config: Config{int(math.Round(x)) + 1000}, Objective: float64(i)}
	}
	return obs
}

func TestCopulaRecoversTheCorrelationOfAGaussian(t *testing.T) {
	s := gaussianSpace(t)
	for _, rho := range []float64{-0.6, 0, 0.8} {
		c, err := Fit(s, bivariate(4000, rho, 100, 7), FitOptions{Quantile: 1})
		if err != nil {
			t.Fatal(err)
		}
		got, err := c.Correlation("t", "x")
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(got-rho) > 0.04 {
			t.Errorf("rho %g: fitted correlation %.3f", rho, got)
		}
	}
}

func TestConditionalSamplesHaveTheConditionalMoments(t *testing.T) {
	// x | t ~ N(rho*sx*t, sx²(1-rho²)): for rho 0.8, sx 100, t = 1 that is
	// mean 80, standard deviation 60.
	s := gaussianSpace(t)
	c, err := Fit(s, bivariate(4000, 0.8, 100, 11), FitOptions{Quantile: 1})
	if err != nil {
		t.Fatal(err)
	}
	smp, err := c.Condition(Task{"t": 1}, 3)
	if err != nil {
		t.Fatal(err)
	}
	xs := make([]float64, 20000)
	for i := range xs {
		xs[i] = float64(smp.Draw()[0] - 1000)
	}
	mean, std := stat.MeanStdDev(xs, nil)
	if math.Abs(mean-80) > 4 || math.Abs(std-60) > 4 {
		t.Errorf("x | t=1: mean %.1f std %.1f, want 80 and 60", mean, std)
	}
}

func TestFitKeepsTheBestQuantile(t *testing.T) {
	obs := []Observation{{Objective: 5}, {Objective: 1}, {Objective: 4}, {Objective: 2}, {Objective: 3}}
	if got := Best(obs, 0.4, false); len(got) != 2 || got[0].Objective != 1 || got[1].Objective != 2 {
		t.Errorf("best 40%% minimising: %+v", got)
	}
	if got := Best(obs, 0.2, true); len(got) != 1 || got[0].Objective != 5 {
		t.Errorf("best 20%% maximising: %+v", got)
	}
}

func TestCategoriesAreOrderedByFrequencyAndUnseenOnesNeverDrawn(t *testing.T) {
	s, err := LoadSpace("testdata/kinds.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var obs []Observation
	// layout: cols 6 times, rows 3 times, blocked never.
	for i, l := range []int{1, 1, 0, 1, 1, 0, 1, 1, 0} {
		obs = append(obs, Observation{Task: Task{"tokens": float64(1000 + i)}, Config: Config{i % 4, i % 3, l, i % 2}})
	}
	c, err := Fit(s, obs, FitOptions{Quantile: 1})
	if err != nil {
		t.Fatal(err)
	}
	m := c.marginals[1+2].(*categorical)
	if len(m.order) != 2 || m.order[0] != 1 || m.order[1] != 0 {
		t.Fatalf("order %v, want cols then rows", m.order)
	}
	smp, err := c.Condition(Task{"tokens": 1004}, 1)
	if err != nil {
		t.Fatal(err)
	}
	count := map[int]int{}
	for i := 0; i < 3000; i++ {
		count[smp.Draw()[2]]++
	}
	if count[2] != 0 {
		t.Errorf("blocked, never observed, drawn %d times", count[2])
	}
	if share := float64(count[1]) / 3000; math.Abs(share-2.0/3) > 0.05 {
		t.Errorf("cols drawn %.2f of the time, want about 2/3", share)
	}
}

func TestUniqueRejectsDuplicatesAndInfeasibleButNeverTheTask(t *testing.T) {
	s, err := LoadSpace("testdata/kinds.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var obs []Observation
	r := rand.New(rand.NewPCG(5, 5))
	for i := 0; i < 60; i++ {
		cfg := Config{r.IntN(4), r.IntN(3), r.IntN(3), r.IntN(2)}
		obs = append(obs, Observation{Task: Task{"tokens": float64(100 * (1 + i%3))}, Config: cfg, Objective: r.Float64()})
	}
	c, err := Fit(s, obs, FitOptions{Quantile: 1})
	if err != nil {
		t.Fatal(err)
	}
	smp, err := c.Condition(Task{"tokens": 1e6}, 9) // far beyond the sources
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	got := smp.Unique(20, seen, 5000)
	if len(got) != 20 {
		t.Fatalf("%d unique configurations, want 20 (stats %+v)", len(got), smp.Stats)
	}
	keys := map[string]bool{}
	for _, cfg := range got {
		if err := s.Feasible(cfg, nil); err != nil {
			t.Errorf("%v: %v", cfg, err)
		}
		if keys[cfg.Key()] {
			t.Errorf("%v returned twice", cfg)
		}
		keys[cfg.Key()] = true
	}
	if smp.Stats.Drawn != 20+smp.Stats.Duplicates+smp.Stats.Infeasible {
		t.Errorf("stats %+v do not add up", smp.Stats)
	}
}

func BenchmarkFitAnd1000ConditionalSamples(b *testing.B) {
	s, err := LoadSpace("testdata/syr2k.yaml")
	if err != nil {
		b.Fatal(err)
	}
	r := rand.New(rand.NewPCG(1, 2))
	var obs []Observation
	for _, n := range []float64{60, 120, 180} {
		for i := 0; i < 200; i++ {
			cfg := make(Config, len(s.Params))
			for j, p := range s.Params {
				cfg[j] = r.IntN(len(p.Levels))
			}
			obs = append(obs, Observation{Task: Task{"n": n}, Config: cfg, Objective: r.Float64()})
		}
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		c, err := Fit(s, obs, FitOptions{})
		if err != nil {
			b.Fatal(err)
		}
		smp, err := c.Condition(Task{"n": 240}, uint64(i))
		if err != nil {
			b.Fatal(err)
		}
		for j := 0; j < 1000; j++ {
			smp.Draw()
		}
	}
}

func TestFitKeepsTheBestOfEachTaskNotOfAll(t *testing.T) {
	// Task 1's runtimes are all below task 2's: one ranking over both would
	// keep task 1 only. Per task, the best of each is x = task (corr 1).
	s := gaussianSpace(t)
	var obs []Observation
	for _, task := range []float64{1, 2} {
		for x := 0; x < 10; x++ {
			y := task*100 + math.Abs(float64(x)-task*3)
			obs = append(obs, Observation{Task: Task{"t": task}, Config: Config{1000 + x}, Objective: y})
		}
	}
	top := bestPerTask(s, obs, 0.1, false)
	if len(top) != 2 || top[0].Config[0] != 1003 || top[1].Config[0] != 1006 {
		t.Fatalf("kept %+v, want x=3 of task 1 and x=6 of task 2", top)
	}
}

// An extrapolated task continues the line the source tasks' scores lie on;
// the chapter's GC (SDV's truncated Gaussian bounded by the data) gives
// every task at or beyond the largest source the same clamped score.
func TestExtrapolatedTaskScoresContinueTheSourcesLine(t *testing.T) {
	s, tab := synthetic(t)
	var obs []Observation
	for i, n := range []float64{60, 120, 180} {
		obs = append(obs, tab.Sample(Task{"n": n}, 100, uint64(i))...)
	}
	c, err := Fit(s, obs, FitOptions{})
	if err != nil {
		t.Fatal(err)
	}
	z := func(n float64) float64 { return c.marginals[0].toNormal(n) }
	step := z(180) - z(120)
	for _, tc := range []struct{ n, steps float64 }{{240, 1}, {300, 2}, {90, -1.5}} {
		if got := (z(tc.n) - z(180)) / step; math.Abs(got-tc.steps) > 1e-9 {
			t.Errorf("n=%v: %.3f source steps beyond n=180, want %v", tc.n, got, tc.steps)
		}
	}
	if z(240) >= 5 {
		t.Errorf("n=240 scores %.2f: clamped as if at the end of the world", z(240))
	}
	if _, err := c.Condition(Task{"n": 500}, 1); err == nil || !strings.Contains(err.Error(), "outside the space's range [20, 400]") {
		t.Errorf("a task beyond the space's declared range: %v", err)
	}
}
