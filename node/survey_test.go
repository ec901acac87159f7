package node

import (
	"context"
	"errors"
	"math"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/heatsink-hpc/heatsink/point"
	"github.com/heatsink-hpc/heatsink/rundir"
)

// plant stands in for a node's GPUs where none can run: each GPU's
// temperature follows a response to whether the survey loads it, sampled
// into the survey's GPUReadings every tick as the collector would. The
// response is first order (τ, rise), or with fastShare > 0 a GPU's: a
// fast jump (fastTauS, fastShare of the rise) and the heatsink's slow
// warming (τ).
type plant struct {
	mu        sync.Mutex
	loaded    map[string]int
	temp      map[string]float64
	fast      map[string]float64
	calls     [][]string
	tauS      float64
	riseC     float64
	fastTauS  float64
	fastShare float64
}

func (p *plant) load(ctx context.Context, gpus []string) error {
	p.mu.Lock()
	p.calls = append(p.calls, gpus)
	for _, g := range gpus {
		p.loaded[g]++
	}
	p.mu.Unlock()
	<-ctx.Done()
	p.mu.Lock()
	for _, g := range gpus {
		p.loaded[g]--
	}
	p.mu.Unlock()
	return nil
}

func (p *plant) sample(ctx context.Context, r *GPUReadings, tick time.Duration) {
	// The response follows the wall clock, not the tick count: on a busy
	// machine a tick comes late, and a plant stepped per tick would then
	// have a longer τ in seconds than planted.
	last := time.Now()
	p.mu.Lock()
	if p.fast == nil {
		p.fast = map[string]float64{}
	}
	p.mu.Unlock()
	for {
		select {
		case <-ctx.Done():
			return
		case <-time.After(tick):
		}
		now := time.Now()
		dt := now.Sub(last).Seconds()
		last = now
		a := 1 - math.Exp(-dt/p.tauS)
		af := 0.0
		if p.fastShare > 0 {
			af = 1 - math.Exp(-dt/p.fastTauS)
		}
		p.mu.Lock()
		var ps []point.Point
		for g, t := range p.temp {
			slow, fast := t-35-p.fast[g], p.fast[g]
			targetSlow, targetFast := 0.0, 0.0
			if p.loaded[g] > 0 {
				targetSlow, targetFast = p.riseC*(1-p.fastShare), p.riseC*p.fastShare
			}
			slow += (targetSlow - slow) * a
			fast += (targetFast - fast) * af
			p.fast[g] = fast
			p.temp[g] = 35 + slow + fast
			pt := point.New("gpu", now)
			pt.AddTag("gpu", g).AddFloat("temp_c", p.temp[g]).AddFloat("power_w", 70)
			ps = append(ps, pt)
		}
		p.mu.Unlock()
		r.Write(ps)
	}
}

// testPlan is the default plan a hundred times faster: 10 ms ticks.
func testPlan() SurveyPlan {
	return SurveyPlan{Baseline: 200 * time.Millisecond, LoadPerTau: 3, MinLoad: 300 * time.Millisecond, MaxLoad: 3 * time.Second,
		Together: true, MinReturn: 100 * time.Millisecond, ToleranceC: 2, Hold: 50 * time.Millisecond, ReturnPerTau: 4,
		MaxCooldown: 3 * time.Second, Tick: 10 * time.Millisecond}
}

// TestSurveyLoadsEachGPUAloneThenAllForThreeSlowTau drives a plant shaped
// like an H100 a hundred times faster: 35 % of the rise in a jump (τ 20
// ms), the rest with τ_slow 0.25 s. The loads last 3 τ_slow; the time to
// 63 % of the rise (the last survey's τ) is 0.14 s here and would have
// made them 0.42 s.
func TestSurveyLoadsEachGPUAloneThenAllForThreeSlowTau(t *testing.T) {
	p := &plant{loaded: map[string]int{}, temp: map[string]float64{"0": 35, "1": 35, "2": 35}, tauS: 0.25, riseC: 30,
		fastTauS: 0.02, fastShare: 0.35}
	r := NewGPUReadings()
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	go p.sample(ctx, r, 10*time.Millisecond)
	var phases []rundir.Phase
	var progress []string
	timing, err := Survey(ctx, testPlan(), []string{"0", "1", "2"}, r, p.load,
		func(ph rundir.Phase) { phases = append(phases, ph) }, func(s string) { progress = append(progress, s) })
	if err != nil {
		t.Fatal(err)
	}
	if timing.TauSlowS < 0.2 || timing.TauSlowS > 0.3 || math.Abs(timing.LoadS-3*timing.TauSlowS) > 0.01 {
		t.Errorf("τ_slow %.3f s, loads %.3f s; want τ_slow ≈ 0.25 s and loads of 3 τ_slow (%s)", timing.TauSlowS, timing.LoadS, timing.Why)
	}
	var names []string
	for _, ph := range phases {
		names = append(names, ph.Name)
	}
	want := "survey_baseline alone:0 return:0 alone:1 return:1 alone:2 return:2 together survey_cooldown"
	if got := strings.Join(names, " "); got != want {
		t.Fatalf("phases %q, want %q", got, want)
	}
	if len(p.calls) != 4 || len(p.calls[3]) != 3 || p.calls[1][0] != "1" {
		t.Errorf("loads %v, want each GPU alone then all three", p.calls)
	}
	// τ_slow = 0.25 s: 3 τ = 0.75 s, over the 0.3 s floor. The first load
	// is longer: it runs until τ_slow settles (four of it, at least).
	for _, ph := range phases[3:] {
		d := ph.End.Sub(ph.Start)
		if strings.HasPrefix(ph.Name, "alone") || ph.Name == "together" {
			if d < 600*time.Millisecond || d > 950*time.Millisecond {
				t.Errorf("%s lasted %v, want about 3 τ_slow = 0.75 s", ph.Name, d)
			}
		}
		if strings.HasPrefix(ph.Name, "return") && (d >= time.Second || d < 100*time.Millisecond) {
			t.Errorf("%s lasted %v: under its minimum, or at its cap of 4 τ_slow (the GPU never came back to baseline)", ph.Name, d)
		}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	for g, c := range p.temp {
		if c > 37 {
			t.Errorf("GPU %s at %.1f °C after the final cooldown, baseline 35", g, c)
		}
	}
	joined := strings.Join(progress, "\n")
	for _, s := range []string{"GPU 1 alone (2 of 3) under load", "all GPUs together under load", "of the survey left", "τ_slow ≈ 0."} {
		if !strings.Contains(joined, s) {
			t.Errorf("progress never said %q", s)
		}
	}
}

func TestSurveyRefuses(t *testing.T) {
	r := NewGPUReadings()
	noop := func(ctx context.Context, gpus []string) error { <-ctx.Done(); return nil }
	quits := func(ctx context.Context, gpus []string) error { return errors.New("exit status 3") }
	bad := testPlan()
	bad.MaxLoad = bad.MinLoad / 2
	for _, c := range []struct {
		name string
		plan SurveyPlan
		gpus []string
		load SurveyLoad
		want string
	}{
		{"no GPU", testPlan(), nil, noop, "no GPU"},
		{"bad plan", bad, []string{"0"}, noop, "min-load"},
		{"silent GPU", testPlan(), []string{"0"}, noop, "GPU 0 reported no temperature"},
	} {
		_, err := Survey(t.Context(), c.plan, c.gpus, r, c.load, func(rundir.Phase) {}, func(string) {})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
	}
	// A load that quits says so, with its error.
	p := &plant{loaded: map[string]int{}, temp: map[string]float64{"0": 35}, tauS: 0.2, riseC: 30}
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	go p.sample(ctx, r, 10*time.Millisecond)
	_, err := Survey(ctx, testPlan(), []string{"0"}, r, quits, func(rundir.Phase) {}, func(string) {})
	if err == nil || !strings.Contains(err.Error(), "alone:0: the load ended after") || !strings.Contains(err.Error(), "exit status 3") {
		t.Errorf("a load that quits: %v", err)
	}
}

// TestSurveyHoldsTheLoadBudget: nine loads of a plan whose budget allows a
// third of a second each are cut there, all of them, even though τ_slow
// would want 0.75 s: the survey says it did not settle and keeps every load
// the same length so the GPUs compare.
func TestSurveyHoldsTheLoadBudget(t *testing.T) {
	gpus := []string{"0", "1", "2", "3", "4", "5", "6", "7"}
	p := &plant{loaded: map[string]int{}, temp: map[string]float64{}, tauS: 0.25, riseC: 30, fastTauS: 0.02, fastShare: 0.35}
	for _, g := range gpus {
		p.temp[g] = 35
	}
	r := NewGPUReadings()
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	go p.sample(ctx, r, 10*time.Millisecond)
	plan := testPlan()
	plan.LoadBudget = 3 * time.Second
	plan.MinReturn, plan.Hold, plan.MaxCooldown = 20*time.Millisecond, 10*time.Millisecond, 100*time.Millisecond
	var load time.Duration
	timing, err := Survey(ctx, plan, gpus, r, p.load, func(ph rundir.Phase) {
		if strings.HasPrefix(ph.Name, "alone") || ph.Name == "together" {
			load += ph.End.Sub(ph.Start)
		}
	}, func(string) {})
	if err != nil {
		t.Fatal(err)
	}
	if timing.TauSlowS != 0 || math.Abs(timing.LoadS-1.0/3) > 1e-6 || !strings.Contains(timing.Why, "did not settle") {
		t.Errorf("timing %+v, want loads of 3 s / 9 and τ_slow unsettled", timing)
	}
	if load > 3*time.Second+9*30*time.Millisecond {
		t.Errorf("%v of load in all, over the 3 s budget", load)
	}
}
