package analysis

import (
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// realLoad is one GPU component's load in a real recording: its readings,
// the load's span and the idle mean its rise is measured from.
type realLoad struct {
	name      string
	t, v      []float64
	load      Span
	idleMeanC float64
}

// realLoads collects the loads of rep's GPU components: each episode with
// no neighbour loaded in a recording without phases, the load phase in one
// with phases.
func realLoads(rep *Report, label string) []realLoad {
	var out []realLoad
	for _, c := range rep.Components {
		if (c.Kind != KindGPUCore && c.Kind != KindGPUMem) || c.Series == nil {
			continue
		}
		if rep.Phases.Load != nil && c.IdleMeanC != nil {
			out = append(out, realLoad{label + " " + c.ID, c.Series.T, c.Series.V, *rep.Phases.Load, *c.IdleMeanC})
		}
		for _, e := range c.Episodes {
			if e.Fingerprint == nil || len(e.NeighboursLoaded) > 0 || e.IdleMeanC == nil {
				continue
			}
			ep := rep.Episodes[e.Episode]
			out = append(out, realLoad{fmt.Sprintf("%s %s", label, c.ID), c.Series.T, c.Series.V, ep.Load(), *e.IdleMeanC})
		}
	}
	return out
}

// fitTruncated fits l's rise over its first lengthS seconds the way the
// report does (the overshoot check, the load fit, τ determined).
func fitTruncated(l realLoad, lengthS float64) (*LoadFit, error) {
	sp := Span{Start: l.load.Start, End: math.Min(l.load.End, l.load.Start+lengthS)}
	o := DefaultOptions()
	if err := loadOvershoot(l.t, l.v, sp, l.idleMeanC); err != nil {
		return nil, err
	}
	f, err := FitLoad(l.t, l.v, sp, l.idleMeanC, o.MinRise, o.MaxGap.Seconds(), 1-o.Alpha)
	if err != nil {
		return nil, err
	}
	return f, determined(f.TauLoS, f.TauHiS)
}

// untarTo unpacks a testdata tarball into a temporary directory.
func untarTo(t *testing.T, tarball string) string {
	t.Helper()
	dir := t.TempDir()
	if out, err := exec.Command("tar", "xzf", tarball, "-C", dir).CombinedOutput(); err != nil {
		t.Fatalf("tar xzf %s: %v: %s", tarball, err, out)
	}
	return dir
}

// TestShorterLoadsReadTheRealH100RiseLow is the study behind the survey's
// load length (docs/survey.md, "Load length"): the real H100 loads refitted
// over their first 30, 45, 60, 90 and 120 s. °C/W is the fitted rise over
// the power above idle, the power taken as exact, so its interval's
// relative half-width is the rise's. What the table shows: a shorter load
// reads the rise low, by more than its own interval says (the interval
// assumes the model, and a short load has not seen the slow part), and
// where the fit is refused the end-of-load bound is lower still. It checks,
// against the loads of 90 s or more: no truncation reads above the full
// load (beyond 1 % of noise), and 90 s is within 4 % of 120 s.
func TestShorterLoadsReadTheRealH100RiseLow(t *testing.T) {
	hs, _, _ := h100x4(t)
	loads := realLoads(hs, "h100x4 (55 s)")
	for _, rec := range []struct{ label, dir string }{
		{"h100-dgemm (120 s)", filepath.Join("testdata", "h100-dgemm")},
		{"h100-pair-long dgemm (120 s)", filepath.Join(untarTo(t, filepath.Join("testdata", "h100-pair-long", "recordings.tar.gz")), "run-dgemm")},
		{"h100-pair dgemm (90 s)", filepath.Join(untarTo(t, filepath.Join("testdata", "h100-pair", "recordings.tar.gz")), "run-dgemm")},
	} {
		run, err := Load(rec.dir)
		if err != nil {
			t.Fatalf("%s: %v", rec.label, err)
		}
		loads = append(loads, realLoads(Analyze(run, DefaultOptions()), rec.label)...)
	}
	lengths := []float64{30, 45, 60, 90, 120}
	var table strings.Builder
	table.WriteString("| load | full load: τ_slow, rise [95 %] |")
	for _, L := range lengths {
		fmt.Fprintf(&table, " %.0f s |", L)
	}
	table.WriteString("\n|---|---|" + strings.Repeat("---|", len(lengths)) + "\n")
	for _, l := range loads {
		full, err := fitTruncated(l, l.load.Duration())
		if err != nil {
			fmt.Fprintf(&table, "| %s | no fit: %s |\n", l.name, shortWhy(err))
			continue
		}
		// Only a load of 90 s or more is a reference: the 55 s loads of
		// the 4-GPU node are themselves cut short.
		long := l.load.Duration() >= 89
		row := fmt.Sprintf("| %s | %.1f s, %.2f °C ±%.1f %% |", l.name, full.TauS, full.RiseC, halfWidthPct(full))
		for _, L := range lengths {
			if L > l.load.Duration()+1 {
				row += " |"
				continue
			}
			lb := 100 * (endRise(l, L) - full.RiseC) / full.RiseC
			if long && lb > 1 {
				t.Errorf("%s over %.0f s: the end-of-load lower bound is %+.1f %% above the full fit's rise", l.name, L, lb)
			}
			f, err := fitTruncated(l, L)
			if err != nil {
				row += fmt.Sprintf(" no fit; bound %+.1f %% |", lb)
				continue
			}
			d := 100 * (f.RiseC - full.RiseC) / full.RiseC
			row += fmt.Sprintf(" ±%.1f %%, %+.1f %% |", halfWidthPct(f), d)
			if long && L >= 90 && math.Abs(d) > 4 {
				t.Errorf("%s over %.0f s: rise %.2f °C, %+.1f %% from the full load's %.2f", l.name, L, f.RiseC, d, full.RiseC)
			}
		}
		table.WriteString(row + "\n")
	}
	t.Logf("\n%s", table.String())
	if os.Getenv("HEATSINK_LOADLENGTH_TABLE") != "" {
		if err := os.WriteFile(os.Getenv("HEATSINK_LOADLENGTH_TABLE"), []byte(table.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// endRise is what the fingerprint falls back to without a load fit: the
// mean of the last quarter of the first lengthS seconds over the idle mean.
func endRise(l realLoad, lengthS float64) float64 {
	end := math.Min(l.load.End, l.load.Start+lengthS)
	m, _ := meanOver(&Series{T: l.t, V: l.v}, Span{Start: end - endRiseS(Span{Start: l.load.Start, End: end}), End: end})
	return m - l.idleMeanC
}

func halfWidthPct(f *LoadFit) float64 { return 100 * (f.RiseHiC - f.RiseLoC) / 2 / f.RiseC }

// shortWhy cuts a refusal to its first clause, for a table cell.
func shortWhy(err error) string {
	s, _, _ := strings.Cut(err.Error(), ":")
	return s
}
