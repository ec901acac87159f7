package alerts_test

import (
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/heatsink-hpc/heatsink/alerts"
	"github.com/heatsink-hpc/heatsink/configs"
	"github.com/heatsink-hpc/heatsink/point"
	"github.com/heatsink-hpc/heatsink/rundir"
)

var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// f is a field of a test point: a float, int, bool or string value.
type f struct {
	k string
	v any
}

func pt(m string, tags string, fields ...f) point.Point {
	p := point.New(m, t0)
	for _, kv := range strings.Fields(tags) {
		k, v, _ := strings.Cut(kv, "=")
		p.AddTag(k, v)
	}
	for _, fl := range fields {
		switch v := fl.v.(type) {
		case float64:
			p.AddFloat(fl.k, v)
		case int:
			p.AddInt(fl.k, int64(v))
		case bool:
			p.AddBool(fl.k, v)
		case string:
			p.AddString(fl.k, v)
		default:
			panic(fmt.Sprintf("field %s: %T", fl.k, v))
		}
	}
	return p
}

func gpu(i int, fields ...f) point.Point {
	return pt("gpu", fmt.Sprintf("gpu=%d uuid=GPU-%d host=n1", i, i), fields...)
}

func tank(fields ...f) point.Point { return pt("tank", "tank=pod1 vendor=submer host=n1", fields...) }

// ticks is a series of one point per second: at second i, mk(i).
func ticks(from, to int, mk func(i int) []point.Point) []step {
	var s []step
	for i := from; i <= to; i++ {
		s = append(s, step{time.Duration(i) * time.Second, mk(i)})
	}
	return s
}

type step struct {
	at  time.Duration
	pts []point.Point
}

// recorder collects what an engine records: alert points, events, logs.
type recorder struct {
	mu     sync.Mutex
	points []point.Point
	events []rundir.Event
}

func (r *recorder) Emit(ps ...point.Point) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.points = append(r.points, ps...)
}

func (r *recorder) event(ev rundir.Event) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, ev)
}

// kinds returns the kinds of the events recorded so far.
func (r *recorder) kinds() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for _, ev := range r.events {
		out = append(out, ev.Kind)
	}
	return out
}

// transitions renders the alert points as "SECONDS STATE RULE DEVICE".
func (r *recorder) transitions() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for _, p := range r.points {
		state, _ := p.Field("state")
		dev := ""
		for _, k := range []string{"gpu", "device", "chip", "tank"} {
			if v := p.Tag(k); v != "" {
				dev = k + "=" + v
				break
			}
		}
		out = append(out, fmt.Sprintf("%gs %s %s %s", p.Time.Sub(t0).Seconds(), state.StringV(), p.Tag("rule"), dev))
	}
	return out
}

func parseRules(t testing.TB, yaml string) alerts.Config {
	t.Helper()
	cfg, err := configs.Parse("rules.yaml", []byte(yaml))
	if err != nil {
		t.Fatal(err)
	}
	return *alerts.ConfigOf(cfg)
}

func quietLogger() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// replay feeds the steps to a new engine of the rules, its clock at each
// step's time, and returns what it recorded.
func replay(t *testing.T, yaml string, steps []step) *recorder {
	t.Helper()
	rec := &recorder{}
	var now time.Time
	e, err := alerts.NewEngine(parseRules(t, yaml), alerts.Options{
		Emit: rec, OnEvent: rec.event, Logger: quietLogger(),
		Now: func() time.Time { return now },
	})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	for _, s := range steps {
		now = t0.Add(s.at)
		for i := range s.pts {
			s.pts[i].Time = now
		}
		if err := e.Write(s.pts); err != nil {
			t.Fatal(err)
		}
	}
	return rec
}

func TestRulesFireAndClearOnInjectedSeries(t *testing.T) {
	temps := func(vs ...float64) func(i int) []point.Point {
		return func(i int) []point.Point {
			return []point.Point{gpu(0, f{"temp_c", vs[i]}, f{"slowdown_c", 90.0})}
		}
	}
	tests := []struct {
		name  string
		rules string
		steps []step
		want  []string
	}{
		{
			name: "threshold holds for 2s before firing, clears only past the margin",
			rules: `
alerts:
  rules:
    - {name: hot, measurement: gpu, field: temp_c, for: 2s,
       threshold: {op: ">=", value: slowdown_c - 5, margin: 2}}`,
			// 85 is the threshold; it clears below 83.
			steps: ticks(0, 8, temps(80, 86, 87, 86, 84, 83.5, 82, 86, 80)),
			want:  []string{"3s firing hot gpu=0", "6s cleared hot gpu=0"},
		},
		{
			name: "a blip shorter than for never fires",
			rules: `
alerts:
  rules:
    - {name: hot, measurement: gpu, field: temp_c, for: 3s, threshold: {op: ">", value: 85}}`,
			steps: ticks(0, 6, temps(80, 86, 87, 80, 86, 87, 84)),
		},
		{
			name: "clear expression",
			rules: `
alerts:
  rules:
    - {name: hot, measurement: gpu, field: temp_c,
       threshold: {op: ">", value: slowdown_c - 5, clear: slowdown_c - 10}}`,
			steps: ticks(0, 4, temps(86, 82, 80.5, 80, 79)),
			want:  []string{"0s firing hot gpu=0", "3s cleared hot gpu=0"},
		},
		{
			name: "each GPU against its own limit, remembered from earlier points",
			rules: `
alerts:
  rules:
    - {name: near_slowdown, measurement: gpu, field: temp_c, threshold: {op: ">=", value: slowdown_c - 5}}
    - {name: mem_near_max, measurement: gpu, field: mem_temp_c, threshold: {op: ">=", value: mem_max_c - 5}}`,
			steps: []step{
				// Limits come with the first point only, as NVML thresholds are read at start.
				{0, []point.Point{
					gpu(0, f{"temp_c", 70.0}, f{"slowdown_c", 90.0}, f{"mem_temp_c", 80.0}, f{"mem_max_c", 95.0}),
					gpu(1, f{"temp_c", 70.0}, f{"slowdown_c", 80.0}, f{"mem_temp_c", 80.0}),
				}},
				{time.Second, []point.Point{gpu(0, f{"temp_c", 78.0}), gpu(1, f{"temp_c", 78.0})}},
				// gpu 1 reports no memory limit: its memory is never judged.
				{2 * time.Second, []point.Point{gpu(0, f{"temp_c", 86.0}, f{"mem_temp_c", 91.0}), gpu(1, f{"temp_c", 78.0}, f{"mem_temp_c", 99.0})}},
			},
			want: []string{"1s firing near_slowdown gpu=1", "2s firing near_slowdown gpu=0", "2s firing mem_near_max gpu=0"},
		},
		{
			name: "rate of change per minute, judged once half the window is filled",
			rules: `
alerts:
  rules:
    - {name: heating, measurement: gpu, field: temp_c, rate: {op: ">", per_min: 30, window: 10s}}`,
			// +1 °C/s = 60 °C/min from the start; flat from 8 s.
			steps: ticks(0, 20, func(i int) []point.Point {
				return []point.Point{gpu(0, f{"temp_c", 40 + float64(min(i, 8))})}
			}),
			// The fit over 10 s falls below 30/min at 13 s: samples 3..13 hold 5 rising.
			want: []string{"5s firing heating gpu=0", "13s cleared heating gpu=0"},
		},
		{
			name: "forecast: time until the slowdown limit is reached",
			rules: `
alerts:
  rules:
    - {name: will_throttle, measurement: gpu, field: temp_c,
       forecast: {op: ">=", value: slowdown_c, within: 20s, window: 10s}}`,
			// 60 °C rising 1 °C/s toward 90: 20 s away at 10 s. From 13 s it
			// falls 2 °C/s; the fit over 10 s then puts 90 °C 20.8 s away.
			steps: ticks(0, 20, func(i int) []point.Point {
				v := 60 + float64(i)
				if i > 12 {
					v = 72 - 2*float64(i-12)
				}
				return []point.Point{gpu(0, f{"temp_c", v}, f{"slowdown_c", 90.0})}
			}),
			want: []string{"10s firing will_throttle gpu=0", "13s cleared will_throttle gpu=0"},
		},
		{
			name: "boolean field",
			rules: `
alerts:
  rules:
    - {name: throttling, measurement: gpu, field: throttle_thermal, is: true}`,
			steps: ticks(0, 3, func(i int) []point.Point {
				return []point.Point{gpu(0, f{"throttle_thermal", i == 1 || i == 2})}
			}),
			want: []string{"1s firing throttling gpu=0", "3s cleared throttling gpu=0"},
		},
		{
			name: "string field",
			rules: `
alerts:
  rules:
    - {name: mode, measurement: tank, field: mode, not_equals: normal}`,
			steps: ticks(0, 3, func(i int) []point.Point {
				return []point.Point{tank(f{"mode", []string{"normal", "maintenance", "maintenance", "normal"}[i]})}
			}),
			want: []string{"1s firing mode tank=pod1", "3s cleared mode tank=pod1"},
		},
		{
			name: "bitmask: thermal or power brake, not the power cap",
			rules: `
alerts:
  rules:
    - {name: brake, measurement: gpu, field: clock_event_reasons, any_bits: 0xE8}`,
			steps: ticks(0, 3, func(i int) []point.Point {
				return []point.Point{gpu(0, f{"clock_event_reasons", []int{0x4, 0x84, 0x40, 0x1}[i]})}
			}),
			want: []string{"1s firing brake gpu=0", "3s cleared brake gpu=0"},
		},
		{
			name: "a series silent for more than 5 s, then back",
			rules: `
alerts:
  rules:
    - {name: silent, silent: 5s}`,
			steps: ticks(0, 10, func(i int) []point.Point {
				ps := []point.Point{pt("collector_tick", "host=n1", f{"points", 3})}
				if i <= 1 || i == 9 {
					ps = append(ps, tank(f{"coolant_temp_c", 30.0}))
				}
				return ps
			}),
			want: []string{"7s firing silent tank=pod1", "9s cleared silent tank=pod1"},
		},
		{
			name: "tag filters, exact and regexp",
			rules: `
alerts:
  rules:
    - {name: cpu_hot, measurement: hwmon, field: temp_c, tags: {chip_name: coretemp},
       tags_regexp: {class: "cpu_package|cpu"}, threshold: {op: ">", value: 90}}`,
			steps: []step{{0, []point.Point{
				pt("hwmon", "chip=platform_coretemp_0 chip_name=coretemp sensor=temp1 class=cpu_package", f{"temp_c", 95.0}),
				pt("hwmon", "chip=platform_coretemp_1 chip_name=coretemp sensor=temp2 class=cpu_core", f{"temp_c", 95.0}),
				pt("hwmon", "chip=pci0000:00_0000:00:18.3 chip_name=k10temp sensor=temp1 class=cpu", f{"temp_c", 95.0}),
			}}},
			want: []string{"0s firing cpu_hot chip=platform_coretemp_0"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := replay(t, tt.rules, tt.steps).transitions()
			if !slices.Equal(got, tt.want) {
				t.Errorf("got  %q\nwant %q", got, tt.want)
			}
		})
	}
}

func TestBlindSpot(t *testing.T) {
	const rules = `
alerts:
  rules:
    - name: blind
      measurement: gpu
      field: temp_c
      blind_spot:
        reference: {measurement: tank, field: coolant_temp_c}
        window: 10s
        rising_per_min: 30
        still_per_min: 1
        difference: 45`
	tests := []struct {
		name         string
		gpu, coolant func(i int) float64
		want         []string
	}{
		{
			name:    "GPU rises fast while the coolant stays put",
			gpu:     func(i int) float64 { return 40 + float64(i) },
			coolant: func(int) float64 { return 30 },
			want:    []string{"5s firing blind gpu=0"},
		},
		{
			name:    "GPU and coolant rise together: the tank sees it",
			gpu:     func(i int) float64 { return 40 + float64(i) },
			coolant: func(i int) float64 { return 30 + float64(i)/2 },
		},
		{
			name:    "steady GPU far above the coolant",
			gpu:     func(i int) float64 { return 74 + float64(min(i, 4)) },
			coolant: func(int) float64 { return 30 },
			want:    []string{"2s firing blind gpu=0"}, // 76 - 30 > 45
		},
		{
			name: "coolant catches up, the rule clears",
			gpu:  func(i int) float64 { return 40 + float64(min(i, 10)) },
			coolant: func(i int) float64 {
				if i < 10 {
					return 30
				}
				return 30 + 2*float64(i-10)
			},
			// At 11 s the coolant's fit over 10 s moves 5.5 °C/min.
			want: []string{"5s firing blind gpu=0", "11s cleared blind gpu=0"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := replay(t, rules, ticks(0, 15, func(i int) []point.Point {
				// The coolant comes after the GPU in the batch: order must not matter.
				return []point.Point{gpu(0, f{"temp_c", tt.gpu(i)}), tank(f{"coolant_temp_c", tt.coolant(i)})}
			})).transitions()
			if !slices.Equal(got, tt.want) {
				t.Errorf("got  %q\nwant %q", got, tt.want)
			}
		})
	}
}

func TestEveryFiringAndClearingIsRecorded(t *testing.T) {
	rec := replay(t, `
alerts:
  rules:
    - {name: hot, summary: GPU hot, severity: critical, measurement: gpu, field: temp_c, threshold: {op: ">", value: 85}}`,
		ticks(0, 1, func(i int) []point.Point { return []point.Point{gpu(0, f{"temp_c", []float64{88, 80}[i]})} }))
	if len(rec.points) != 2 || len(rec.events) != 2 {
		t.Fatalf("%d points, %d events, want 2 of each", len(rec.points), len(rec.events))
	}
	p := rec.points[0]
	want := "alert,gpu=0,host=n1,measurement=gpu,rule=hot,severity=critical,uuid=GPU-0 state=\"firing\",value=88,threshold=85,message=\"GPU hot: temp_c = 88 > 85\" " + fmt.Sprint(t0.UnixNano())
	if p.String() != want {
		t.Errorf("alert point\n got %s\nwant %s", p.String(), want)
	}
	ev := rec.events[0]
	if ev.Kind != "alert_fired" || ev.Attrs["rule"] != "hot" || ev.Attrs["value"] != "88" || !ev.Time.Equal(t0) {
		t.Errorf("firing event %+v", ev)
	}
	if ev := rec.events[1]; ev.Kind != "alert_cleared" || ev.Attrs["series"] != "gpu,gpu=0,host=n1,uuid=GPU-0" {
		t.Errorf("clearing event %+v", ev)
	}
}

func TestWrongKindsOfValuesAreIgnored(t *testing.T) {
	// A source that wrote a string where a number belongs must not fire (or crash) a rule.
	rec := replay(t, `
alerts:
  rules:
    - {name: hot, measurement: gpu, field: temp_c, threshold: {op: ">", value: 85}}
    - {name: thr, measurement: gpu, field: throttle_thermal, is: true}`,
		[]step{{0, []point.Point{gpu(0, f{"temp_c", "hot"}, f{"throttle_thermal", 1.0})}}})
	if len(rec.points) != 0 {
		t.Errorf("fired on values of the wrong kind: %v", rec.transitions())
	}
}
