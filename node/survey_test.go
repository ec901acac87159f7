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
// temperature follows a first-order response (τ, rise) to whether the
// survey loads it, sampled into the survey's GPUReadings every tick as
// the collector would.
type plant struct {
	mu     sync.Mutex
	loaded map[string]int
	temp   map[string]float64
	calls  [][]string
	tauS   float64
	riseC  float64
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
	a := 1 - math.Exp(-tick.Seconds()/p.tauS)
	for {
		select {
		case <-ctx.Done():
			return
		case <-time.After(tick):
		}
		p.mu.Lock()
		var ps []point.Point
		for g, t := range p.temp {
			target := 35.0
			if p.loaded[g] > 0 {
				target += p.riseC
			}
			p.temp[g] = t + (target-t)*a
			pt := point.New("gpu", time.Now())
			pt.AddTag("gpu", g).AddFloat("temp_c", p.temp[g]).AddFloat("power_w", 70)
			ps = append(ps, pt)
		}
		p.mu.Unlock()
		r.Write(ps)
	}
}

func testPlan() SurveyPlan {
	return SurveyPlan{Baseline: 200 * time.Millisecond, LoadPerTau: 3, MinLoad: 300 * time.Millisecond, MaxLoad: 3 * time.Second,
		MinReturn: 100 * time.Millisecond, ToleranceC: 2, Hold: 50 * time.Millisecond, MaxCooldown: 3 * time.Second, Tick: 10 * time.Millisecond}
}

func TestSurveyLoadsEachGPUAloneThenAllForThreeTau(t *testing.T) {
	p := &plant{loaded: map[string]int{}, temp: map[string]float64{"0": 35, "1": 35, "2": 35}, tauS: 0.2, riseC: 30}
	r := NewGPUReadings()
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	go p.sample(ctx, r, 10*time.Millisecond)
	var phases []rundir.Phase
	var progress []string
	err := Survey(ctx, testPlan(), []string{"0", "1", "2"}, r, p.load,
		func(ph rundir.Phase) { phases = append(phases, ph) }, func(s string) { progress = append(progress, s) })
	if err != nil {
		t.Fatal(err)
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
	// τ = 0.2 s: 3 τ = 0.6 s, over the 0.3 s floor. The first load is
	// longer: it runs until the rise is steady.
	for _, ph := range phases[3:] {
		d := ph.End.Sub(ph.Start)
		if strings.HasPrefix(ph.Name, "alone") || ph.Name == "together" {
			if d < 450*time.Millisecond || d > 900*time.Millisecond {
				t.Errorf("%s lasted %v, want about 3 τ = 0.6 s", ph.Name, d)
			}
		}
		if strings.HasPrefix(ph.Name, "return") && (d >= 3*time.Second || d < 100*time.Millisecond) {
			t.Errorf("%s lasted %v: under its minimum, or at its cap (the GPU never came back to baseline)", ph.Name, d)
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
	for _, s := range []string{"GPU 1 alone (2 of 3) under load", "all GPUs together under load", "of the survey left", "τ ≈ 0."} {
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
		err := Survey(t.Context(), c.plan, c.gpus, r, c.load, func(rundir.Phase) {}, func(string) {})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
	}
	// A load that quits says so, with its error.
	p := &plant{loaded: map[string]int{}, temp: map[string]float64{"0": 35}, tauS: 0.2, riseC: 30}
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	go p.sample(ctx, r, 10*time.Millisecond)
	err := Survey(ctx, testPlan(), []string{"0"}, r, quits, func(rundir.Phase) {}, func(string) {})
	if err == nil || !strings.Contains(err.Error(), "alone:0: the load ended after") || !strings.Contains(err.Error(), "exit status 3") {
		t.Errorf("a load that quits: %v", err)
	}
}
