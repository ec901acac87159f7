package slurm_test

import (
	"context"
	"log/slog"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/heatsink-hpc/heatsink/analysis"
	"github.com/heatsink-hpc/heatsink/point"
	"github.com/heatsink-hpc/heatsink/point/schema"
	"github.com/heatsink-hpc/heatsink/slurm"
)

func TestNextLevelMovesOnlyPastTheMargin(t *testing.T) {
	levels := slurm.DefaultHeadroomLevels() // edges 30, 20, 10
	for _, c := range []struct {
		name      string
		cur       int
		headroomC float64
		want      int
	}{
		{"none set yet takes the band", -1, 25, 1},
		{"none set yet, under every edge", -1, -3, 3},
		{"inside the band", 1, 25, 1},
		{"above the edge by less than the margin", 1, 31.9, 1},
		{"above the edge by the margin", 1, 32, 0},
		{"below the edge by less than the margin", 1, 18.1, 1},
		{"below the edge by more than the margin", 1, 17.9, 2},
		{"two bands down at once", 0, 5, 3},
		{"two bands up at once", 3, 25, 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := slurm.NextLevel(levels, c.cur, c.headroomC, 2); got != c.want {
				t.Errorf("from level %d at %.1f °C: level %d, want %d", c.cur, c.headroomC, got, c.want)
			}
		})
	}
}

func TestHeadroomConfigRefusesWhatCannotOrder(t *testing.T) {
	for _, c := range []struct {
		name, want string
		edit       func(*slurm.HeadroomConfig)
	}{
		{"one level", "at least two", func(c *slurm.HeadroomConfig) { c.Levels = c.Levels[:1] }},
		{"edges not descending", "levels[2].min_headroom_c", func(c *slurm.HeadroomConfig) { c.Levels[2].MinHeadroomC = 25 }},
		{"weights not ascending", "levels[1].weight", func(c *slurm.HeadroomConfig) { c.Levels[1].Weight = 1 }},
		{"negative margin", "margin_c", func(c *slurm.HeadroomConfig) { c.MarginC = -1 }},
		{"negative hold", "hold", func(c *slurm.HeadroomConfig) { c.Hold = -time.Second }},
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg := slurm.DefaultHeadroomConfig()
			c.edit(&cfg)
			if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %v, want one naming %s", err, c.want)
			}
		})
	}
	d := slurm.DefaultHeadroomConfig()
	if err := d.Validate(); err != nil {
		t.Errorf("the defaults: %v", err)
	}
}

// The headroom a node's readings give: from the survey's fingerprint
// where there is one, else the recent peak; nothing from stale readings
// or a GPU without a slowdown limit. The first step only starts the hold,
// so no Slurm is asked.
func TestHeadroomFromSurveyOrRecentPeak(t *testing.T) {
	t0 := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	reading := func(at time.Duration, tempC, powerW float64, slowdown bool) point.Point {
		p := point.New(schema.GPU, t0.Add(at))
		p.AddTag(schema.TagGPU, "0").AddTag(schema.TagUUID, "GPU-aaaa")
		p.AddFloat(schema.FieldTempC, tempC).AddFloat(schema.FieldPowerW, powerW)
		if slowdown {
			p.AddFloat(schema.FieldSlowdownC, 90)
		}
		return p
	}
	f := func(v float64) *float64 { return &v }
	// An H100's core under the survey's dgemm: 0.06 °C/W, 650 W loaded,
	// 70 W idle (issue 30's recording is of that order).
	survey := &analysis.Survey{Schema: analysis.SurveySchema, GPUs: []analysis.SurveyGPU{{Index: "7", UUID: "GPU-aaaa",
		TogetherCore: &analysis.Fingerprint{ThermalResistanceCPerW: f(0.06), PowerW: f(650), IdlePowerW: f(70)}}}}
	for _, c := range []struct {
		name     string
		survey   *analysis.Survey
		window   time.Duration
		readings []point.Point
		want     float64 // NaN: not judged
		from     string
	}{
		{"idle GPU, predicted from its survey by UUID", survey, time.Hour,
			[]point.Point{reading(600*time.Second, 35, 70, true)}, 90 - (35 + 0.06*580), "survey"},
		{"loaded GPU, about its temperature now", survey, time.Hour,
			[]point.Point{reading(600*time.Second, 70, 640, true)}, 90 - (70 + 0.06*10), "survey"},
		{"no survey: the recent peak", nil, time.Hour,
			[]point.Point{reading(0, 75, 600, true), reading(600*time.Second, 40, 70, true)}, 15, "recent peak"},
		{"no survey: a peak older than the window is forgotten", nil, 5 * time.Minute,
			[]point.Point{reading(0, 75, 600, true), reading(600*time.Second, 40, 70, true)}, 50, "recent peak"},
		{"stale readings", nil, time.Hour, []point.Point{reading(-5*time.Minute, 40, 70, true)}, math.NaN(), ""},
		{"no slowdown limit", nil, time.Hour, []point.Point{reading(600*time.Second, 40, 70, false)}, math.NaN(), ""},
		{"the limit read before stands", nil, time.Hour, []point.Point{reading(590*time.Second, 40, 70, true), reading(600*time.Second, 45, 70, false)}, 45, "recent peak"},
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg := slurm.DefaultHeadroomConfig()
			cfg.Node, cfg.PeakWindow = "n1", c.window
			if c.survey != nil {
				cfg.SurveyDir = t.TempDir()
				if err := analysis.WriteSurvey(cfg.SurveyDir, *c.survey); err != nil {
					t.Fatal(err)
				}
			}
			h, err := slurm.NewHeadroom(slurm.Client{Bin: "/nonexistent"}, cfg)
			if err != nil {
				t.Fatal(err)
			}
			for _, p := range c.readings {
				h.Observe([]point.Point{p})
			}
			out, err := h.Step(context.Background(), t0.Add(600*time.Second))
			if err != nil {
				t.Fatal(err)
			}
			if math.IsNaN(c.want) {
				if out.HeadroomC != nil || out.Action != "not_judged" || out.Why == "" {
					t.Errorf("%+v, want not judged with a reason", out)
				}
				return
			}
			if out.HeadroomC == nil || math.Abs(*out.HeadroomC-c.want) > 1e-9 || !strings.HasPrefix(out.From, c.from) || out.Action != "holding" {
				t.Errorf("%+v (headroom %v), want %.2f °C from %s, holding", out, deref(out.HeadroomC), c.want, c.from)
			}
		})
	}
}

func deref(v *float64) any {
	if v == nil {
		return nil
	}
	return *v
}

// The sink hands every tick's points to its Headroom and judges them on
// its own goroutine: a node reading 60 °C of 90 °C is found 30 °C from
// its limit and waits out the hold (so no Slurm is asked); Close stops it.
func TestHeadroomSinkJudgesWhatItIsWritten(t *testing.T) {
	cfg := slurm.DefaultHeadroomConfig()
	cfg.Enabled, cfg.Node, cfg.Every, cfg.Hold = true, "n1", 20*time.Millisecond, time.Hour
	s, err := slurm.StartHeadroom(slurm.Client{Bin: "/nonexistent"}, cfg, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	deadline := time.Now().Add(10 * time.Second)
	for {
		p := point.New(schema.GPU, time.Now())
		p.AddTag(schema.TagGPU, "0").AddFloat(schema.FieldTempC, 60).AddFloat(schema.FieldSlowdownC, 90)
		if err := s.Write([]point.Point{p}); err != nil {
			t.Fatal(err)
		}
		out, err := s.Last()
		if err != nil {
			t.Fatal(err)
		}
		if out.HeadroomC != nil {
			if *out.HeadroomC != 30 || out.Action != "holding" {
				t.Errorf("%+v (headroom %v), want 30 °C, holding", out, *out.HeadroomC)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no judgement within 10 s: %+v", out)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
}
