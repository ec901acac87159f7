package analysis

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/heatsink-hpc/heatsink/point"
	"github.com/heatsink-hpc/heatsink/rundir"
)

// firstOrder is a component heating as T0 + dT(1 - e^(-t/tau)) from the
// start of the load (t = 0) for loadS seconds, then cooling back towards T0
// with the same time constant; delay shifts the whole response later (a
// coolant that responds after the hardware).
type firstOrder struct {
	T0, DT, Tau, LoadS, Delay float64
}

func (m firstOrder) at(t float64) float64 {
	t -= m.Delay
	switch {
	case t <= 0:
		return m.T0
	case t <= m.LoadS:
		return m.T0 + m.DT*(1-math.Exp(-t/m.Tau))
	}
	return m.T0 + (m.peak()-m.T0)*math.Exp(-(t-m.LoadS)/m.Tau)
}

// peak is the temperature at the end of the load: the load-phase maximum.
func (m firstOrder) peak() float64 { return m.T0 + m.DT*(1-math.Exp(-m.LoadS/m.Tau)) }

// sample returns readings at 1 Hz from t0 to t1 (inclusive) of f plus
// uniform noise in ±noise.
func sample(f func(float64) float64, t0, t1 int, noise float64, rng *rand.Rand) (t, v []float64) {
	for s := t0; s <= t1; s++ {
		x := f(float64(s))
		if noise > 0 {
			x += noise * (2*rng.Float64() - 1)
		}
		t = append(t, float64(s))
		v = append(v, x)
	}
	return t, v
}

func near(t *testing.T, what string, got, want, tol float64) {
	t.Helper()
	if math.IsNaN(got) || math.Abs(got-want) > tol {
		t.Errorf("%s = %.6g, want %.6g ± %.3g", what, got, want, tol)
	}
}

// runBuilder writes a synthetic run directory the way the collector and the
// runner do: rundir.Create for points.lp, rundir.WriteMeta for run.json.
type runBuilder struct {
	t     *testing.T
	dir   string
	start time.Time
	meta  rundir.Meta
	w     *rundir.Writer
}

func newRun(t *testing.T) *runBuilder {
	t.Helper()
	dir := t.TempDir()
	w, err := rundir.Create(dir)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Date(2025, 3, 14, 9, 0, 0, 0, time.UTC)
	return &runBuilder{t: t, dir: dir, start: start, w: w,
		meta: rundir.Meta{ID: "synthetic", Host: "node1", Start: start, IntervalS: 1, Status: "complete"}}
}

// at returns the wall time s seconds after the start.
func (b *runBuilder) at(s float64) time.Time {
	return b.start.Add(time.Duration(s * float64(time.Second)))
}

// phases records baseline [0, base), load [base, base+load) and cooldown
// [base+load, base+load+cool) in run.json.
func (b *runBuilder) phases(base, load, cool float64) {
	for _, p := range []struct {
		name     string
		from, to float64
	}{{"baseline", 0, base}, {"load", base, base + load}, {"cooldown", base + load, base + load + cool}} {
		if p.to <= p.from {
			continue
		}
		end := b.at(p.to)
		b.meta.Phases = append(b.meta.Phases, rundir.Phase{Name: p.name, Start: b.at(p.from), End: &end})
	}
}

func (b *runBuilder) write(ps ...point.Point) {
	b.t.Helper()
	if err := b.w.Write(ps); err != nil {
		b.t.Fatal(err)
	}
}

// done closes points.lp, writes run.json and loads the run back.
func (b *runBuilder) done() *Run {
	b.t.Helper()
	if err := b.w.Close(); err != nil {
		b.t.Fatal(err)
	}
	if err := rundir.WriteMeta(b.dir, &b.meta); err != nil {
		b.t.Fatal(err)
	}
	r, err := Load(b.dir)
	if err != nil {
		b.t.Fatal(err)
	}
	return r
}

func gpuPoint(ts time.Time, gpu string, core, mem, powerW float64) point.Point {
	p := point.New("gpu", ts)
	p.AddTag("host", "node1").AddTag("gpu", gpu).AddTag("uuid", "GPU-"+gpu).AddTag("model", "NVIDIA H100 80GB HBM3")
	p.AddFloat("temp_c", core).AddFloat("mem_temp_c", mem).AddFloat("power_w", powerW)
	return p
}

func hwmonPoint(ts time.Time, chip, sensor, label, class string, c float64) point.Point {
	p := point.New("hwmon", ts)
	p.AddTag("host", "node1").AddTag("chip", chip).AddTag("chip_name", "coretemp").AddTag("sensor", sensor).AddTag("label", label).AddTag("class", class)
	p.AddFloat("temp_c", c).AddFloat("crit_c", 100)
	return p
}
