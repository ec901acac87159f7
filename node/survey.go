package node

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/heatsink-hpc/heatsink/analysis"
	"github.com/heatsink-hpc/heatsink/point"
	"github.com/heatsink-hpc/heatsink/point/schema"
	"github.com/heatsink-hpc/heatsink/rundir"
)

// SurveyPlan is how long each step of `heatsink survey` lasts.
type SurveyPlan struct {
	// Baseline is the idle recording before the first load.
	Baseline time.Duration
	// Load fixes every load's length; 0 measures it: the first GPU is
	// loaded until the slow time constant τ_slow of its rise settles
	// (analysis.SettledTau: the heatsink's, not the die's first jump) and
	// each load then lasts LoadPerTau·τ_slow within [MinLoad, the cap].
	// The cap is MaxLoad, and LoadBudget shared by the loads (one per GPU,
	// and the together load): an 8-GPU node's loads stay within it at the
	// cost of loads shorter than three τ_slow, whose °C/W then reads low
	// (docs/survey.md, "Load length").
	Load             time.Duration
	LoadPerTau       float64
	MinLoad, MaxLoad time.Duration
	LoadBudget       time.Duration
	// Together adds the step with every GPU loaded at once.
	Together bool
	// After each load the survey waits until every GPU (the loaded one
	// and its neighbours) has been within ToleranceC of its baseline mean
	// for Hold, at least MinReturn and at most ReturnPerTau·τ_slow within
	// [MinReturn, MaxCooldown] (MaxCooldown where τ_slow is not known).
	// MinReturn leaves the analysis a baseline for the next GPU's episode
	// that starts after this load's end (the episode rule wants 20 s of
	// one, and joins a GPU's loads less than 30 s apart).
	MinReturn    time.Duration
	ToleranceC   float64
	Hold         time.Duration
	ReturnPerTau float64
	MaxCooldown  time.Duration
	// Tick is how often the survey reads the GPUs: the sampling interval.
	Tick time.Duration
}

// DefaultSurveyPlan: loads of 3 τ_slow (an H100's core τ_slow is 14-18 s
// under DGEMM, so about 50 s, which the load fit needs: it refuses a load
// under three time constants), within 30 s (the episode detection's
// shortest load) and 2 minutes, and five minutes of load in all, so an
// 8-GPU node's nine loads are 33 s each. Returns of up to 4 τ_slow: a
// 30 °C rise decays to 0.5 °C in four time constants.
func DefaultSurveyPlan() SurveyPlan {
	return SurveyPlan{Baseline: 60 * time.Second, LoadPerTau: 3, MinLoad: 30 * time.Second, MaxLoad: 120 * time.Second,
		LoadBudget: 5 * time.Minute, Together: true,
		MinReturn: 40 * time.Second, ToleranceC: 2, Hold: 10 * time.Second, ReturnPerTau: 4, MaxCooldown: 180 * time.Second, Tick: time.Second}
}

// Check refuses a plan that cannot make a survey.
// AnalysisScale is the factor the survey's recording is judged with
// (analysis.Options.Scaled): its episode rule and durations scaled down
// where the plan's loads or returns are shorter than the 40 s the default
// rule is made for (its shortest load of 30 s and bridge of 30 s), so
// that a survey of short loads on a plant of short τ is judged on its own
// time scale. The default plan's shortest load (30 s, what an 8-GPU
// node's five-minute budget comes to) makes it three quarters: episodes
// of 22.5 s or more.
func (p SurveyPlan) AnalysisScale() float64 {
	load := p.MinLoad
	if p.Load > 0 {
		load = p.Load
	}
	return analysis.SurveyAnalysisScale(load, p.MinReturn)
}

func (p SurveyPlan) Check() error {
	switch {
	case p.Baseline <= 0:
		return fmt.Errorf("survey baseline %v: want a positive duration", p.Baseline)
	case p.Load < 0:
		return fmt.Errorf("survey load %v: want 0 (from τ) or a positive duration", p.Load)
	case p.Load == 0 && (p.MinLoad <= 0 || p.MaxLoad < p.MinLoad || p.LoadPerTau <= 0):
		return fmt.Errorf("survey load from τ: want 0 < min-load (%v) ≤ max-load (%v) and a positive multiple of τ (%g)", p.MinLoad, p.MaxLoad, p.LoadPerTau)
	case p.LoadBudget < 0:
		return fmt.Errorf("survey load budget %v: want 0 (none) or a positive duration", p.LoadBudget)
	case p.Tick <= 0:
		return fmt.Errorf("survey tick %v: want a positive duration", p.Tick)
	case p.MinReturn < 0 || p.MinReturn > p.MaxCooldown:
		return fmt.Errorf("survey return: want 0 ≤ min-return (%v) ≤ max-cooldown (%v)", p.MinReturn, p.MaxCooldown)
	case p.ToleranceC <= 0 || p.Hold <= 0 || p.MaxCooldown <= 0 || p.ReturnPerTau < 0:
		return fmt.Errorf("survey cooldown: want a positive tolerance (%g °C), hold (%v) and cap (%v), and a return of 0 or more τ (%g)", p.ToleranceC, p.Hold, p.MaxCooldown, p.ReturnPerTau)
	}
	return nil
}

// loadCap is the longest a load may last on a node of n GPUs: MaxLoad, or
// the budget's share, but never under MinLoad.
func (p SurveyPlan) loadCap(n int) time.Duration {
	c := p.MaxLoad
	loads := n
	if p.Together {
		loads++
	}
	if p.LoadBudget > 0 && loads > 0 {
		c = min(c, p.LoadBudget/time.Duration(loads))
	}
	return max(c, p.MinLoad)
}

// GPUReading is a GPU's latest sample.
type GPUReading struct {
	At     time.Time
	TempC  float64
	PowerW float64
}

// GPUReadings keeps each GPU's latest reading: a sink of the collection
// that the survey's steps read.
type GPUReadings struct {
	mu     sync.Mutex
	latest map[string]GPUReading
}

// NewGPUReadings returns an empty store.
func NewGPUReadings() *GPUReadings { return &GPUReadings{latest: map[string]GPUReading{}} }

// Write implements collectors.Sink: it keeps the gpu points' temp_c and
// power_w by GPU index.
func (g *GPUReadings) Write(ps []point.Point) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	for i := range ps {
		p := &ps[i]
		if p.Measurement != schema.GPU || p.Tag(schema.TagGPU) == "" {
			continue
		}
		t, ok := p.Float(schema.FieldTempC)
		if !ok {
			continue
		}
		w, _ := p.Float(schema.FieldPowerW)
		g.latest[p.Tag(schema.TagGPU)] = GPUReading{At: p.Time, TempC: t, PowerW: w}
	}
	return nil
}

// Flush implements collectors.Sink.
func (g *GPUReadings) Flush() error { return nil }

// Close implements collectors.Sink.
func (g *GPUReadings) Close() error { return nil }

// GPUs returns the indices of the GPUs seen, in numeric order.
func (g *GPUReadings) GPUs() []string {
	g.mu.Lock()
	defer g.mu.Unlock()
	out := make([]string, 0, len(g.latest))
	for k := range g.latest {
		out = append(out, k)
	}
	slices.SortFunc(out, func(a, b string) int {
		ia, _ := strconv.Atoi(a)
		ib, _ := strconv.Atoi(b)
		return ia - ib
	})
	return out
}

// Latest returns a GPU's latest reading.
func (g *GPUReadings) Latest(gpu string) (GPUReading, bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	r, ok := g.latest[gpu]
	return r, ok
}

// SurveyLoad loads the given GPUs (one or all) for as long as ctx lives.
type SurveyLoad func(ctx context.Context, gpus []string) error

// ErrNoGPU means the survey found no GPU to load.
var ErrNoGPU = errors.New("no GPU reported a temperature")

// Survey performs the survey's protocol on gpus: the idle baseline, each
// GPU loaded alone with a return to baseline after it, all together, and a
// final return. Every step is appended to phases (named
// survey_baseline, alone:N, return:N, together, survey_cooldown: not the
// protocol names of `heatsink run`, so the analysis finds each GPU's load
// episodes in its own power) and told to progress.
func Survey(ctx context.Context, plan SurveyPlan, gpus []string, r *GPUReadings, load SurveyLoad, phase func(rundir.Phase), progress func(string)) (SurveyTiming, error) {
	if err := plan.Check(); err != nil {
		return SurveyTiming{}, err
	}
	if len(gpus) == 0 {
		return SurveyTiming{}, ErrNoGPU
	}
	s := &surveyRun{plan: plan, r: r, phase: phase, progress: progress, gpus: gpus, tick: plan.Tick}
	err := s.run(ctx, load)
	return s.timing, err
}

type surveyRun struct {
	plan     SurveyPlan
	r        *GPUReadings
	phase    func(rundir.Phase)
	progress func(string)
	gpus     []string
	tick     time.Duration
	base     map[string]float64
	loadLen  time.Duration
	// tauS is τ_slow measured on the first load, 0 until then or when it
	// did not settle.
	tauS   float64
	lastAt time.Time
	timing SurveyTiming
}

// SurveyTiming is what the survey chose: its load length and the τ_slow
// it was chosen from (0 where it did not settle or --load fixed it).
type SurveyTiming struct {
	LoadS, TauSlowS float64
	// Why says how the load length was chosen.
	Why string
}

func (s *surveyRun) record(name string, start time.Time) {
	end := time.Now()
	s.phase(rundir.Phase{Name: name, Start: start, End: &end})
}

// left estimates the survey's remaining time after step k of the 2n+1
// steps (n alone loads, their returns, together), from the load length.
func (s *surveyRun) left(loadsDone int) time.Duration {
	l := s.loadLen
	if l == 0 {
		l = s.plan.loadCap(len(s.gpus))
	}
	loads := len(s.gpus) - loadsDone
	if s.plan.Together {
		loads++
	}
	return time.Duration(max(loads, 0)) * (l + s.returnCap())
}

func (s *surveyRun) run(ctx context.Context, load SurveyLoad) error {
	start := time.Now()
	s.progress(fmt.Sprintf("survey: idle baseline for %v", s.plan.Baseline))
	means, err := s.meanOver(ctx, s.plan.Baseline)
	s.record("survey_baseline", start)
	if err != nil {
		return err
	}
	s.base = means
	s.loadLen = s.plan.Load
	if s.loadLen > 0 {
		s.timing = SurveyTiming{LoadS: s.loadLen.Seconds(), Why: "fixed (--load)"}
	}
	for i, g := range s.gpus {
		if err := s.loadStep(ctx, "alone:"+g, []string{g}, i, load); err != nil {
			return err
		}
		if err := s.returnStep(ctx, "return:"+g); err != nil {
			return err
		}
	}
	if s.plan.Together {
		if err := s.loadStep(ctx, "together", s.gpus, len(s.gpus), load); err != nil {
			return err
		}
	}
	return s.returnStep(ctx, "survey_cooldown")
}

// meanOver waits d and returns each GPU's mean temperature over it.
func (s *surveyRun) meanOver(ctx context.Context, d time.Duration) (map[string]float64, error) {
	sum, n := map[string]float64{}, map[string]int{}
	seen := map[string]time.Time{}
	end := time.Now().Add(d)
	for time.Now().Before(end) {
		if err := sleepCtx(ctx, s.tick); err != nil {
			return nil, err
		}
		for _, g := range s.gpus {
			if r, ok := s.r.Latest(g); ok && r.At.After(seen[g]) {
				seen[g] = r.At
				sum[g] += r.TempC
				n[g]++
			}
		}
	}
	out := map[string]float64{}
	for _, g := range s.gpus {
		if n[g] == 0 {
			return nil, fmt.Errorf("survey baseline: GPU %s reported no temperature in %v", g, d)
		}
		out[g] = sum[g] / float64(n[g])
	}
	return out, nil
}

// loadStep loads gpus. Without a fixed length the first load measures τ.
func (s *surveyRun) loadStep(ctx context.Context, name string, gpus []string, k int, load SurveyLoad) error {
	lctx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	start := time.Now()
	go func() { done <- load(lctx, gpus) }()
	defer func() {
		stop()
		<-done
		s.record(name, start)
	}()
	measuring := s.loadLen == 0
	limit := s.loadLen
	if measuring {
		limit = s.plan.loadCap(len(s.gpus))
	}
	var temps, times []float64
	for {
		el := time.Since(start)
		if el >= limit {
			break
		}
		who := "all GPUs together"
		if len(gpus) == 1 {
			who = fmt.Sprintf("GPU %s alone (%d of %d)", gpus[0], k+1, len(s.gpus))
		}
		s.progress(fmt.Sprintf("survey: %s under load, %v of this load left, about %v of the survey left",
			who, (limit - el).Round(time.Second), ((limit - el) + s.returnCap() + s.left(k+1)).Round(time.Second)))
		select {
		case err := <-done:
			done <- err // for the deferred wait
			if err != nil {
				return fmt.Errorf("%s: the load ended after %v: %w", name, el.Round(time.Second), err)
			}
			return fmt.Errorf("%s: the load ended by itself after %v, before its %v", name, el.Round(time.Second), limit)
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(s.tick):
		}
		if !measuring {
			continue
		}
		if r, ok := s.r.Latest(gpus[0]); ok && (len(times) == 0 || r.At.After(s.lastAt)) {
			s.lastAt = r.At
			temps, times = append(temps, r.TempC), append(times, r.At.Sub(start).Seconds())
			if len(times)%5 != 0 {
				continue
			}
			if tau, err := analysis.SettledTau(times, temps, s.base[gpus[0]]); err == nil {
				s.tauS = tau
				s.loadLen = time.Duration(math.Min(math.Max(s.plan.LoadPerTau*tau, s.plan.MinLoad.Seconds()), limit.Seconds()) * float64(time.Second))
				measuring = false
				s.timing = SurveyTiming{LoadS: s.loadLen.Seconds(), TauSlowS: tau,
					Why: fmt.Sprintf("%g τ_slow (%.1f s, settled %v into GPU %s's load) within [%v, %v]", s.plan.LoadPerTau, tau, el.Round(time.Second), gpus[0], s.plan.MinLoad, limit)}
				s.progress(fmt.Sprintf("survey: GPU %s τ_slow ≈ %.1f s: every further load lasts %v", gpus[0], tau, s.loadLen))
				if el >= s.loadLen {
					break
				}
				limit = s.loadLen
			}
		}
	}
	if measuring { // never settled: every load as long as this one
		s.loadLen = limit
		s.timing = SurveyTiming{LoadS: limit.Seconds(),
			Why: fmt.Sprintf("τ_slow did not settle within GPU %s's %v load (the cap: --max-load %v, or the %v load budget's share): every load %v", gpus[0], limit, s.plan.MaxLoad, s.plan.LoadBudget, limit)}
		s.progress("survey: " + s.timing.Why)
	}
	return nil
}

// returnCap is the longest a return may last: ReturnPerTau·τ_slow within
// [MinReturn, MaxCooldown], MaxCooldown where τ_slow is not known.
func (s *surveyRun) returnCap() time.Duration {
	if s.tauS <= 0 || s.plan.ReturnPerTau <= 0 {
		return s.plan.MaxCooldown
	}
	c := time.Duration(s.plan.ReturnPerTau * s.tauS * float64(time.Second))
	return min(max(c, s.plan.MinReturn), s.plan.MaxCooldown)
}

// returnStep waits until every GPU is back within tolerance of its
// baseline for the hold time, at most returnCap.
func (s *surveyRun) returnStep(ctx context.Context, name string) error {
	start := time.Now()
	defer s.record(name, start)
	limit := s.returnCap()
	var heldSince time.Time
	for time.Since(start) < limit {
		worst, wg := 0.0, ""
		for _, g := range s.gpus {
			if r, ok := s.r.Latest(g); ok {
				if d := r.TempC - s.base[g]; d > worst {
					worst, wg = d, g
				}
			}
		}
		switch {
		case worst > s.plan.ToleranceC:
			heldSince = time.Time{}
			s.progress(fmt.Sprintf("survey: cooling down, GPU %s %.1f °C above its baseline (at most %v more)", wg, worst, (limit - time.Since(start)).Round(time.Second)))
		case heldSince.IsZero():
			heldSince = time.Now()
		case time.Since(heldSince) >= s.plan.Hold && time.Since(start) >= s.plan.MinReturn:
			return nil
		}
		if err := sleepCtx(ctx, s.tick); err != nil {
			return err
		}
	}
	s.progress(fmt.Sprintf("survey: %s: not back to baseline after %v, going on", name, limit))
	return nil
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
