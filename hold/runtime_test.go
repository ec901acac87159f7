package hold

import (
	"math"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/heatsink-hpc/heatsink/point"
	"github.com/heatsink-hpc/heatsink/point/schema"
	"github.com/heatsink-hpc/heatsink/rundir"
)

// switchLog is a job that records how long it was held.
type switchLog struct {
	mu           sync.Mutex
	held         bool
	since        time.Time
	heldFor, ran time.Duration
}

func (s *switchLog) Throttle(held bool) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := time.Now()
	if !s.since.IsZero() {
		if s.held {
			s.heldFor += now.Sub(s.since)
		} else {
			s.ran += now.Sub(s.since)
		}
	}
	s.held, s.since = held, now
	return nil
}

// TestRuntimeCyclesTheJobAtItsDuty: a fixed duty of 0.3 at a 0.1 s period
// holds the job 70 % of the time, leaves it free when stopped, and each
// tick's batch gives one hold point with the hottest reading.
func TestRuntimeCyclesTheJobAtItsDuty(t *testing.T) {
	sw := &switchLog{}
	d := 0.3
	tg, _ := ParseTarget("gpu_core<=60")
	h, err := NewRuntime(Config{Target: tg, FixedDuty: &d, Switch: sw, IntervalS: 1})
	if err != nil {
		t.Fatal(err)
	}
	var got []point.Point
	h.SetRun("r1", func(p ...point.Point) { got = append(got, p...) })
	h.Start()
	now := time.Now()
	g0 := point.New(schema.GPU, now)
	g0.AddTag(schema.TagGPU, "0").AddFloat("temp_c", 55)
	g1 := point.New(schema.GPU, now)
	g1.AddTag(schema.TagGPU, "1").AddFloat("temp_c", 58)
	h.Write([]point.Point{g0, g1, point.New(schema.CollectorTick, now)})
	time.Sleep(2 * time.Second)
	h.Stop()
	sw.mu.Lock()
	held, ran, last := sw.heldFor, sw.ran, sw.held
	sw.mu.Unlock()
	if last {
		t.Error("the job was left held after Stop")
	}
	share := held.Seconds() / (held + ran).Seconds()
	if math.Abs(share-0.7) > 0.1 {
		t.Errorf("held %v, ran %v: %.2f of the time held, want 0.7", held, ran, share)
	}
	if s := h.Summary(); math.Abs(s.Duty-0.3) > 0.1 || s.Mode != string(ModeFixed) || s.Readings != 1 || *s.PeakC != 58 {
		t.Errorf("summary %+v", s)
	}
	if len(got) != 1 || got[0].Measurement != schema.Hold || got[0].Tag(schema.TagRun) != "r1" {
		t.Fatalf("points %+v", got)
	}
	if v, _ := got[0].Float(schema.FieldTempC); v != 58 {
		t.Errorf("hold point's temp_c %v, want the hotter GPU's 58", v)
	}
}

// A tick in which the job did not run at all tells whether the card
// worked without it: its utilisation is run.json's gpu_held_util_pct. Held
// throughout (a duty of 0), every tick after the first counts; the first
// tick's NVML window began before the hold and is left out.
func TestRuntimeRecordsTheGPUsUtilisationWhileHeld(t *testing.T) {
	d := 0.0
	tg, _ := ParseTarget("gpu_core<=60")
	h, err := NewRuntime(Config{Target: tg, FixedDuty: &d, Switch: &switchLog{}, IntervalS: 1})
	if err != nil {
		t.Fatal(err)
	}
	var got []point.Point
	h.SetRun("r1", func(p ...point.Point) { got = append(got, p...) })
	h.Start()
	time.Sleep(50 * time.Millisecond) // the cycle's first pause
	t0 := time.Now()
	for i, u := range []float64{90, 40, 20} {
		tick := t0.Add(time.Duration(i) * time.Second)
		g := point.New(schema.GPU, tick)
		g.AddTag(schema.TagGPU, "0").AddFloat("temp_c", 55).AddFloat(schema.FieldUtilPct, u)
		h.Write([]point.Point{g, point.New(schema.CollectorTick, tick)})
	}
	h.Stop()
	s := h.Summary()
	if s.GPUDuty == nil || math.Abs(*s.GPUDuty-0.3) > 1e-9 {
		t.Errorf("gpu_duty %v, want 0.3 (the mean of 40 and 20 %%)", s.GPUDuty)
	}
	if s.GPUHeldUtilPct == nil || math.Abs(*s.GPUHeldUtilPct-30) > 1e-9 || s.GPUHeldTicks != 2 {
		t.Errorf("gpu_held_util_pct %v over %d ticks, want 30 over 2", s.GPUHeldUtilPct, s.GPUHeldTicks)
	}
	if v, ok := got[1].Float(schema.FieldUtilPct); !ok || v != 40 {
		t.Errorf("hold point's util_pct %v, %v; want 40", v, ok)
	}
}

// The runtime tells a quiet tick by the held GPU's utilisation against the
// job's run: a job that ran but left the GPU idle (a command starting up)
// goes to StepQuiet, so the first second of real work is tested and a
// rise five times the model's falls back to the plain pause; without
// util_pct the test is spent on the idle second
// (TestFirstSecondWaitsForACommandsFirstWork).
func TestRuntimeWaitsWhileTheGPUIsIdle(t *testing.T) {
	m := Model{BaseC: 36, FastC: 25.8, SlowC: 3.2, TauS: 10.2, Source: "H100 cupy, 2026-11-28"}
	tg, _ := ParseTarget("gpu_core<=54")
	for _, c := range []struct {
		name     string
		withUtil bool
		wantMode Mode
	}{{"util_pct", true, ModePause}, {"no util_pct", false, ModeModel}} {
		t.Run(c.name, func(t *testing.T) {
			h, err := NewRuntime(Config{Target: tg, Model: &m, Switch: &switchLog{}, IntervalS: 1})
			if err != nil {
				t.Fatal(err)
			}
			h.Start()
			defer h.Stop()
			t0 := time.Now()
			// 43 °C held; 42 °C with the job run but the GPU idle; 62 °C
			// with the GPU at work.
			for i, r := range []struct{ c, util float64 }{{43, 0}, {42, 0}, {62, 50}} {
				if i > 0 {
					time.Sleep(500 * time.Millisecond)
				}
				tick := t0.Add(time.Duration(i) * time.Second)
				g := point.New(schema.GPU, tick)
				g.AddTag(schema.TagGPU, "0").AddFloat("temp_c", r.c)
				if c.withUtil {
					g.AddFloat(schema.FieldUtilPct, r.util)
				}
				h.Write([]point.Point{g, point.New(schema.CollectorTick, tick)})
			}
			if s := h.Summary(); s.Mode != string(c.wantMode) {
				t.Errorf("mode %s (%s), want %s", s.Mode, s.Fallback, c.wantMode)
			}
		})
	}
}

// The plain pause holds the job at the load's start until the first
// reading. A component no source reads (--hold gpu_core on a node without
// NVML) would keep it stopped for good, and the load phase would never
// end: after three ticks without a reading the job runs free, saying so
// once; a reading above the set point stops it again.
func TestPlainPauseLetsTheJobRunWhenTheComponentIsNeverRead(t *testing.T) {
	sw := &switchLog{}
	tg, _ := ParseTarget("gpu_core<=60")
	var events []rundir.Event
	var mu sync.Mutex
	h, err := NewRuntime(Config{Target: tg, NoModel: "none given", Switch: sw, IntervalS: 1,
		Event: func(e rundir.Event) { mu.Lock(); events = append(events, e); mu.Unlock() }})
	if err != nil {
		t.Fatal(err)
	}
	var duties []float64
	h.SetRun("r1", func(ps ...point.Point) {
		for _, p := range ps {
			d, _ := p.Float(schema.FieldDuty)
			duties = append(duties, d)
		}
	})
	h.Start()
	t0 := time.Now()
	tick := func(i int, temp float64) {
		at := t0.Add(time.Duration(i) * time.Second)
		ps := []point.Point{point.New(schema.CollectorTick, at)}
		if temp > 0 {
			g := point.New(schema.GPU, at)
			g.AddTag(schema.TagGPU, "0").AddFloat("temp_c", temp)
			ps = append(ps, g)
		}
		h.Write(ps)
	}
	for i := range 5 {
		tick(i, 0) // a CPU-only node: ticks, no GPU
	}
	tick(5, 70) // a reading above the set point
	h.Stop()
	want := []float64{0, 0, 1, 1, 1, 0}
	if len(duties) != len(want) {
		t.Fatalf("duties %v, want %v", duties, want)
	}
	for i := range want {
		if duties[i] != want[i] {
			t.Fatalf("duties %v, want %v", duties, want)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	var notes []string
	for _, e := range events {
		if e.Kind == schema.KindNote {
			notes = append(notes, e.Message)
		}
	}
	if len(notes) != 2 || !strings.Contains(notes[0], "no reading of gpu_core for 3 ticks: the job runs free") ||
		!strings.Contains(notes[1], "a reading of gpu_core again (70.0 °C)") {
		t.Errorf("notes %q", notes)
	}
	if s := h.Summary(); s.Fallback != "" {
		t.Errorf("no reading is no fallback of the model: %q", s.Fallback)
	}
}
