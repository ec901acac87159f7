// Package progress shows a run or a collection while it happens: on a
// terminal one status bar per phase (github.com/vbauerster/mpb/v8 draws
// them) with elapsed and remaining time, iterations, the latest throughput
// and the hottest GPU and CPU against their limits; elsewhere (a file, a
// pipe, a batch job's log) a record every interval, through the log's own
// handler when given one (SetLogger), so that stream holds one format.
package progress

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"math"
	"strings"
	"sync"
	"time"

	"github.com/vbauerster/mpb/v8"
	"github.com/vbauerster/mpb/v8/decor"

	"github.com/heatsink-hpc/heatsink/point"
	"github.com/heatsink-hpc/heatsink/workloads"
)

// Status is what the display shows of the job; workloads.Progress for run.
type Status = workloads.Progress

// Display is a collector sink (it watches the temperatures and their
// limits in every tick) and the renderer of a Status source.
type Display struct {
	out      io.Writer
	terminal bool
	every    time.Duration
	log      *slog.Logger // off a terminal: the records go here, not to out

	mu      sync.Mutex
	gpu     hot // hottest GPU (core or memory) of the last tick
	cpu     hot // hottest CPU sensor of the last tick
	ticks   int
	bars    *mpb.Progress
	barDone chan struct{}
}

// hot is one temperature and its limit (0 when the device gives none).
type hot struct {
	name           string
	c, limitC      float64
	limitName      string
	seen           bool
	tickC, tickLim float64
}

// New returns a display writing to out: bars when terminal, else a line
// every `every`.
func New(out io.Writer, terminal bool, every time.Duration) *Display {
	return &Display{out: out, terminal: terminal, every: every}
}

// SetLogger makes the display, off a terminal, write its progress as a
// log record ("progress", with phase, elapsed_s, gpu_temp_c...) through l
// instead of a human line to out: stderr off a terminal is read by
// programs (journald, a batch system's log parsers), which should see one
// format. Call it before Run.
func (d *Display) SetLogger(l *slog.Logger) { d.log = l }

// Write implements collectors.Sink: it keeps the hottest GPU and CPU
// temperature of the tick with the limit their device reports
// (NVML's slowdown_c, hwmon's crit_c or max_c).
func (d *Display) Write(pts []point.Point) error {
	var gpu, cpu hot
	for i := range pts {
		p := &pts[i]
		switch p.Measurement {
		case "gpu":
			lim, _ := p.Float("slowdown_c")
			for _, f := range []string{"temp_c", "mem_temp_c"} {
				if v, ok := p.Float(f); ok && (!gpu.seen || v > gpu.c) {
					name := "GPU " + p.Tag("gpu")
					if f == "mem_temp_c" {
						name += " memory"
						lim, _ = p.Float("mem_max_c")
					}
					gpu = hot{name: name, c: v, limitC: lim, limitName: "slowdown", seen: true}
				}
			}
		case "hwmon":
			if !strings.HasPrefix(p.Tag("class"), "cpu") {
				continue
			}
			if v, ok := p.Float("temp_c"); ok && (!cpu.seen || v > cpu.c) {
				lim, name := 0.0, ""
				if l, ok := p.Float("crit_c"); ok {
					lim, name = l, "critical"
				} else if l, ok := p.Float("max_c"); ok {
					lim, name = l, "max"
				}
				cpu = hot{name: "CPU", c: v, limitC: lim, limitName: name, seen: true}
			}
		case "collector_tick":
			d.mu.Lock()
			d.ticks++
			d.mu.Unlock()
		}
	}
	d.mu.Lock()
	if gpu.seen {
		d.gpu = gpu
	}
	if cpu.seen {
		d.cpu = cpu
	}
	d.mu.Unlock()
	return nil
}

// Flush implements collectors.Sink.
func (d *Display) Flush() error { return nil }

// Close implements collectors.Sink.
func (d *Display) Close() error { return nil }

// LogWriter is where log lines go while the display runs: above the bars
// on a terminal, so neither garbles the other.
func (d *Display) LogWriter() io.Writer {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.terminal {
		if d.bars == nil {
			d.bars = mpb.New(mpb.WithOutput(d.out), mpb.WithAutoRefresh(), mpb.WithRefreshRate(200*time.Millisecond))
		}
		return logWriter{d.bars, d.out}
	}
	return d.out
}

// logWriter writes through the bars while they run, and directly after.
type logWriter struct {
	bars *mpb.Progress
	out  io.Writer
}

func (w logWriter) Write(b []byte) (int, error) {
	n, err := w.bars.Write(b)
	if err != nil {
		return w.out.Write(b)
	}
	return n, nil
}

// Run shows status until ctx ends.
func (d *Display) Run(ctx context.Context, status func() Status) {
	if d.terminal {
		d.runBars(ctx, status)
		return
	}
	t := time.NewTicker(d.every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			s := status()
			if d.log != nil {
				if s.Phase != "" {
					d.log.LogAttrs(ctx, slog.LevelInfo, "progress", d.Attrs(s)...)
				}
			} else if line := d.Line(s); line != "" {
				fmt.Fprintln(d.out, line)
			}
		}
	}
}

// Line is the one-line form: "load 40s of 1m30s: 12 iterations, 52.3
// TFLOP/s; GPU 0 71 °C (slowdown 87 °C); CPU 55 °C (critical 100 °C)".
func (d *Display) Line(s Status) string {
	if s.Phase == "" {
		return ""
	}
	parts := []string{time.Now().Format("15:04:05") + " " + s.Phase + " " + timing(s)}
	if w := work(s); w != "" {
		parts[0] += ": " + w
	}
	if t := d.temps(); t != "" {
		parts = append(parts, t)
	}
	return strings.Join(parts, "; ")
}

// Attrs is the record form of Line: the same facts as attributes with
// their units in their names (elapsed_s, gpu_temp_c), for a log handler.
func (d *Display) Attrs(s Status) []slog.Attr {
	a := []slog.Attr{slog.String("phase", s.Phase), slog.Float64("elapsed_s", s.Elapsed.Round(time.Second).Seconds())}
	if s.Planned > 0 {
		if s.AtMost {
			a = append(a, slog.Float64("at_most_s", s.Planned.Seconds()))
		} else {
			a = append(a, slog.Float64("planned_s", s.Planned.Seconds()),
				slog.Float64("left_s", max(s.Planned-s.Elapsed, 0).Round(time.Second).Seconds()))
		}
	}
	if s.Iterations > 0 {
		a = append(a, slog.Int("iterations", s.Iterations))
		if s.Failed > 0 {
			a = append(a, slog.Int("failed", s.Failed))
		}
		if r := Rate(s.Metrics); r != "" {
			a = append(a, slog.String("rate", r))
		}
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, h := range []struct {
		key string
		hot
	}{{"gpu", d.gpu}, {"cpu", d.cpu}} {
		if !h.seen {
			continue
		}
		a = append(a, slog.String(h.key, h.name), slog.Float64(h.key+"_temp_c", h.c))
		if h.limitC > 0 {
			a = append(a, slog.String(h.key+"_limit", h.limitName), slog.Float64(h.key+"_limit_c", h.limitC))
		}
	}
	return a
}

func timing(s Status) string {
	el := s.Elapsed.Round(time.Second)
	switch {
	case s.Planned <= 0:
		return el.String()
	case s.AtMost:
		return fmt.Sprintf("%v (at most %v)", el, s.Planned)
	}
	left := max(s.Planned-s.Elapsed, 0).Round(time.Second)
	return fmt.Sprintf("%v of %v, %v left", el, s.Planned, left)
}

// work says what the job has done: iterations and its latest rate.
func work(s Status) string {
	if s.Iterations == 0 {
		return ""
	}
	w := plural(s.Iterations, "iteration")
	if s.Failed > 0 {
		w += fmt.Sprintf(" (%d failed)", s.Failed)
	}
	if r := Rate(s.Metrics); r != "" {
		w += ", " + r
	}
	return w
}

// Rate is the headline rate of an iteration's metrics, with an SI prefix:
// flop_per_s as FLOP/s, *_bytes_per_s as B/s, else its runtime.
func Rate(m map[string]float64) string {
	for _, k := range []string{"flop_per_s", "triad_bytes_per_s"} {
		if v, ok := m[k]; ok {
			return si(v) + unit(k)
		}
	}
	best := ""
	for k := range m {
		if strings.HasSuffix(k, "_per_s") && (best == "" || k < best) {
			best = k
		}
	}
	if best != "" {
		return si(m[best]) + unit(best) + " " + strings.TrimSuffix(strings.TrimSuffix(best, "_per_s"), "_bytes")
	}
	if v, ok := m["runtime_s"]; ok {
		return fmt.Sprintf("%.3g s per iteration", v)
	}
	return ""
}

func unit(k string) string {
	switch {
	case k == "flop_per_s":
		return "FLOP/s"
	case strings.HasSuffix(k, "_bytes_per_s"):
		return "B/s"
	}
	return "/s"
}

func si(v float64) string {
	for _, p := range []struct {
		f float64
		s string
	}{{1e15, "P"}, {1e12, "T"}, {1e9, "G"}, {1e6, "M"}, {1e3, "k"}} {
		if math.Abs(v) >= p.f {
			return fmt.Sprintf("%.3g %s", v/p.f, p.s)
		}
	}
	return fmt.Sprintf("%.3g ", v)
}

// temps is the hottest GPU and CPU against their limits, "" with none.
func (d *Display) temps() string {
	d.mu.Lock()
	defer d.mu.Unlock()
	var out []string
	for _, h := range []hot{d.gpu, d.cpu} {
		if !h.seen {
			continue
		}
		s := fmt.Sprintf("%s %.0f °C", h.name, h.c)
		if h.limitC > 0 {
			s += fmt.Sprintf(" (%s %.0f °C)", h.limitName, h.limitC)
		}
		out = append(out, s)
	}
	return strings.Join(out, "; ")
}

func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// runBars draws a bar per phase, finishing each when the next begins.
func (d *Display) runBars(ctx context.Context, status func() Status) {
	d.LogWriter() // creates the container
	var bar *mpb.Bar
	phase := ""
	finish := func() {
		if bar != nil {
			bar.SetTotal(-1, true)
			bar = nil
		}
	}
	t := time.NewTicker(200 * time.Millisecond)
	defer t.Stop()
	for {
		s := status()
		if s.Phase != phase {
			finish()
			phase = s.Phase
			if phase != "" {
				bar = d.newBar(s, status)
			}
		}
		if bar != nil {
			if s.Planned > 0 {
				bar.SetCurrent(min(s.Elapsed, s.Planned).Milliseconds())
			} else {
				bar.SetCurrent(s.Elapsed.Milliseconds() % 1000)
			}
		}
		select {
		case <-ctx.Done():
			finish()
			d.bars.Wait()
			return
		case <-t.C:
		}
	}
}

func (d *Display) newBar(s Status, status func() Status) *mpb.Bar {
	total := s.Planned.Milliseconds()
	if total <= 0 {
		total = 1000 // a job run once: the bar only shows it is alive
	}
	last := ""
	info := func(decor.Statistics) string {
		cur := status()
		if cur.Phase != s.Phase {
			return last // the phase ended: keep its final words
		}
		parts := []string{timing(cur)}
		if w := work(cur); w != "" {
			parts = append(parts, w)
		}
		if t := d.temps(); t != "" {
			parts = append(parts, t)
		}
		last = strings.Join(parts, " · ")
		return last
	}
	return d.bars.New(total, mpb.BarStyle().Lbound("[").Rbound("]"),
		mpb.BarWidth(24),
		mpb.PrependDecorators(decor.Name(s.Phase, decor.WC{W: 13, C: decor.DindentRight})),
		mpb.AppendDecorators(decor.Any(info, decor.WC{W: 1, C: decor.DindentRight})),
	)
}
