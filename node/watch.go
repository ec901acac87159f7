package node

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/heatsink-hpc/heatsink/collectors"
	"github.com/heatsink-hpc/heatsink/configs"
	"github.com/heatsink-hpc/heatsink/point"
	"github.com/heatsink-hpc/heatsink/point/schema"
)

// WatchOptions say how long `heatsink watch` runs and how often its header
// comes back.
type WatchOptions struct {
	// Lines ends the watch after this many lines of readings; 0 runs until
	// ctx ends.
	Lines int
	// HeaderEvery repeats the two header lines before every this many
	// lines of readings, so that a scrolled terminal still says which
	// column is which; 0 prints them once.
	HeaderEvery int
}

// Watch samples cfg's sources as collect does, once per interval, and
// writes one line per tick to w, as nvidia-smi dmon does: a column per
// component and quantity (CPU package and NVMe temperatures, RAPL package
// power, the CPUs' mean clock, each GPU's temperature, power and SM clock,
// each tank's coolant temperature and power, each PDU's power, the host's
// CPU use and memory in use), under a
// header naming the component and the unit. The columns are those of the
// first tick; a reading missing later (RAPL power on the first tick, a
// source that failed) prints "-". It returns when ctx ends or after
// opts.Lines lines.
func Watch(ctx context.Context, cfg *configs.Config, w io.Writer, opts WatchOptions) error {
	srcs, err := BuildSources(cfg)
	if err != nil {
		return err
	}
	defer CloseSources(srcs)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	sink := &watchSink{w: w, opts: opts, done: cancel}
	col := collectors.New(collectors.Options{
		Interval: cfg.Interval, Deadline: cfg.Deadline, Logger: slog.New(slog.DiscardHandler),
	}, srcs, []collectors.Sink{sink})
	col.Run(ctx)
	sink.mu.Lock()
	defer sink.mu.Unlock()
	return sink.err
}

// watchCell is one column's reading of a tick.
type watchCell struct {
	component, unit string
	value           float64 // NaN when the tick had none
}

// watchSink turns each tick's points into a line.
type watchSink struct {
	w     io.Writer
	opts  WatchOptions
	done  context.CancelFunc
	mu    sync.Mutex
	cols  []watchCell // the first tick's columns
	lines int
	err   error
}

func (s *watchSink) Write(pts []point.Point) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	// A tick's batch holds its collector_tick point; a batch without one
	// (the outbox's events at the end) is not a line.
	tick := slices.IndexFunc(pts, func(p point.Point) bool { return p.Measurement == schema.CollectorTick })
	if tick < 0 || s.err != nil || (s.opts.Lines > 0 && s.lines >= s.opts.Lines) {
		return nil
	}
	cells := watchCells(pts)
	if s.cols == nil {
		s.cols = cells
	}
	// Seven characters a column, wider for a longer name (a tank's).
	width := func(c watchCell) int { return max(7, len(c.component)) }
	var b strings.Builder
	if s.lines == 0 || (s.opts.HeaderEvery > 0 && s.lines%s.opts.HeaderEvery == 0) {
		fmt.Fprintf(&b, "#%7s", "time")
		for _, c := range s.cols {
			fmt.Fprintf(&b, " %*s", width(c), c.component)
		}
		fmt.Fprintf(&b, "\n#%7s", "")
		for _, c := range s.cols {
			fmt.Fprintf(&b, " %*s", width(c), c.unit)
		}
		b.WriteByte('\n')
	}
	b.WriteString(pts[tick].Time.Local().Format("15:04:05"))
	for _, c := range s.cols {
		fmt.Fprintf(&b, " %*s", width(c), formatCell(lookupCell(cells, c)))
	}
	b.WriteByte('\n')
	if _, err := io.WriteString(s.w, b.String()); err != nil {
		s.err = fmt.Errorf("watch: %w", err)
		s.done()
		return nil
	}
	s.lines++
	if s.opts.Lines > 0 && s.lines >= s.opts.Lines {
		s.done()
	}
	return nil
}

func (*watchSink) Flush() error { return nil }
func (*watchSink) Close() error { return nil }

func lookupCell(cells []watchCell, col watchCell) float64 {
	for _, c := range cells {
		if c.component == col.component && c.unit == col.unit {
			return c.value
		}
	}
	return math.NaN()
}

// formatCell rounds as dmon does: whole units, a tenth under 100.
func formatCell(v float64) string {
	switch {
	case math.IsNaN(v):
		return "-"
	case math.Abs(v) >= 100:
		return strconv.FormatFloat(v, 'f', 0, 64)
	default:
		return strconv.FormatFloat(v, 'f', 1, 64)
	}
}

// watchCells picks a tick's headline readings, in the order their sources
// wrote them. Components are numbered in order of appearance (cpu0, cpu1:
// the CPU chips; pkg0: RAPL's package-0 zone), which is stable from tick
// to tick because every source writes its devices in a fixed order.
func watchCells(pts []point.Point) []watchCell {
	var t watchTable
	var freqSum float64
	var freqN int
	// The host's CPU use and memory, which every Linux machine has: the
	// columns a VM without sensors still shows. CPU use needs two samples,
	// so its column is placed by the memory point and is "-" on the first
	// tick.
	cpuPct, memGiB, host := math.NaN(), math.NaN(), false
	for i := range pts {
		p := &pts[i]
		switch p.Measurement {
		case "hwmon":
			t.hwmon(p)
		case "nvme":
			if p.Tag("sensor") == "Composite" {
				t.set(p.Tag("device"), "C", p, "temp_c")
			}
		case "rapl":
			if zone, ok := strings.CutPrefix(p.Tag("zone"), "package-"); ok {
				t.set("pkg"+zone, "W", p, "power_w")
			}
		case "cpufreq":
			if v, ok := floatField(p, "freq_mhz"); ok {
				freqSum += v
				freqN++
			}
		case "gpu":
			name := "gpu" + p.Tag("gpu")
			t.set(name, "C", p, "temp_c")
			t.set(name, "W", p, "power_w")
			t.set(name, "MHz", p, "sm_clock_mhz")
		case "tank":
			t.set(p.Tag("tank"), "C", p, "coolant_temp_c")
			t.set(p.Tag("tank"), "W", p, "consumption_w")
		case "cpu":
			if p.Tag("cpu") == "total" {
				if v, ok := floatField(p, "usage_pct"); ok {
					cpuPct = v
				}
			}
		case "mem":
			if v, ok := floatField(p, "used_bytes"); ok {
				memGiB, host = v/(1<<30), true
			}
		case "pdu":
			if p.Tag("phase") == "" && p.Tag("bank") == "" && p.Tag("outlet") == "" {
				t.set(p.Tag("pdu"), "W", p, "power_w")
			}
		}
	}
	if freqN > 0 {
		t.cells = append(t.cells, watchCell{"cpus", "MHz", freqSum / float64(freqN)})
	}
	if host {
		t.cells = append(t.cells, watchCell{"cpu", "%", cpuPct}, watchCell{"mem", "GiB", memGiB})
	}
	return t.cells
}

// watchTable gathers a tick's cells; hwmon chips are numbered per kind.
type watchTable struct {
	cells []watchCell
	chips map[string]int  // chip tag: index into cells
	kinds map[string]int  // "cpu", "amdgpu": chips seen
	pkg   map[string]bool // chips whose package sensor was read
}

func (t *watchTable) set(component, unit string, p *point.Point, field string) {
	v, ok := floatField(p, field)
	if !ok {
		v = math.NaN()
	}
	t.cells = append(t.cells, watchCell{component, unit, v})
}

// hwmon keeps one temperature per CPU chip (its package sensor, else the
// hottest of its sensors: k10temp's Tctl and Tccd) and per GPU chip that
// hwmon exposes (amdgpu: the hottest, edge or junction, and its power).
func (t *watchTable) hwmon(p *point.Point) {
	class := p.Tag("class")
	kind := map[string]string{"cpu_package": "cpu", "cpu_core": "cpu", "cpu": "cpu", "gpu": p.Tag("chip_name")}[class]
	if kind == "" {
		return
	}
	if t.chips == nil {
		t.chips, t.kinds, t.pkg = map[string]int{}, map[string]int{}, map[string]bool{}
	}
	chip := p.Tag("chip")
	if w, ok := floatField(p, "power_w"); ok && class == "gpu" {
		if i, seen := t.chips[chip]; seen { // amdgpu's power1, after its temperatures
			t.cells = append(t.cells, watchCell{t.cells[i].component, "W", w})
		}
		return
	}
	v, ok := floatField(p, "temp_c")
	if !ok {
		return
	}
	i, seen := t.chips[chip]
	switch {
	case !seen:
		t.chips[chip] = len(t.cells)
		t.pkg[chip] = class == "cpu_package"
		t.cells = append(t.cells, watchCell{kind + strconv.Itoa(t.kinds[kind]), "C", v})
		t.kinds[kind]++
	case t.pkg[chip]: // the package sensor: no core outranks it
	case class == "cpu_package":
		t.cells[i].value, t.pkg[chip] = v, true
	case v > t.cells[i].value:
		t.cells[i].value = v
	}
}

func floatField(p *point.Point, key string) (float64, bool) {
	v, ok := p.Field(key)
	if !ok {
		return 0, false
	}
	return point.Float(v)
}
