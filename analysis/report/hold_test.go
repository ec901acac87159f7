package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/heatsink-hpc/heatsink/analysis"
	"github.com/heatsink-hpc/heatsink/rundir"
)

// The hold's report leads with the answer, in the Summary and in its own
// section: how closely the component was held and what it cost. On the
// recorded H100 DGEMM hold (analysis/testdata/h100-hold-dgemm, set point
// 56 °C, a duty cycle too slow for the die) that is within 8 °C, mean
// 5.10 °C, at 55 % of the throughput; the GPU's own duty (0.416, from the
// recorded util_pct, as the run predates run.json's gpu_duty) stands
// beside the job's 0.429.
func TestHoldReportLeadsWithTheAnswer(t *testing.T) {
	r, err := analysis.Load("../testdata/h100-hold-dgemm")
	if err != nil {
		t.Fatal(err)
	}
	rep := analysis.Analyze(r, analysis.DefaultOptions())
	var buf bytes.Buffer
	if err := Write(&buf, Text, rep, nil); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	answer := "Held gpu_core:0 at 56 °C within 8.0 °C (95 % of the readings from 3τ on; mean 5.10 °C, peak 64.0 °C), at a cost of 55 % of the throughput (0.450 of the free run's); the job ran 43 % of the time"
	flat := strings.Join(strings.Fields(out), " ")
	_, summary, _ := strings.Cut(flat, "Summary ------- - ")
	if !strings.HasPrefix(summary, answer) {
		t.Errorf("the Summary does not start with the hold's answer %q:\n%s", answer, out)
	}
	_, sec, ok := strings.Cut(flat, "Hold: gpu_core:0<=56 -------------------- ")
	if !ok || !strings.HasPrefix(sec, answer+".") {
		t.Errorf("the hold section does not lead with the answer:\n%s", out)
	}
	for _, want := range []string{"period 0.695 s", "The GPU worked 42 % of the time", "42.9 41.6 23.8 T flop 45.0"} {
		if !strings.Contains(flat, want) {
			t.Errorf("the hold section lacks %q:\n%s", want, out)
		}
	}
}

// The answer says what happened when there was no holding to judge: a
// component that never reached its set point (the lead's STREAM hold2 of
// 2026-11-28: peak 44 °C under 45, duty 0.97) is kept under it, not "held
// within 2 °C"; a load shorter than 3τ is not judged; without the free
// run's throughput the cost is the duty alone.
func TestHoldAnswerWithoutAHoldToJudge(t *testing.T) {
	for _, c := range []struct {
		h    analysis.HoldResult
		want string
	}{
		{analysis.HoldResult{Hold: rundirHold("gpu_core:1<=45", 45, 0.97, f(1.61), f(2), f(44), 105, 36), VsFree: f(0.95)},
			"Kept gpu_core:1 under 45 °C without reaching it (peak 44.0 °C), at a cost of 5 % of the throughput (0.950 of the free run's); the job ran 97 % of the time."},
		{analysis.HoldResult{Hold: rundirHold("cpu_package<=52", 52, 0.6, nil, nil, f(53.2), 20, 45)},
			"Held cpu_package at 52 °C, not judged: the load ended before 3τ (45 s) had passed (peak 53.2 °C); the job ran 60 % of the time (its throughput against free running is not known)."},
		{analysis.HoldResult{Hold: rundirHold("gpu_core<=60", 60, 0.42, nil, nil, nil, 0, 0)},
			"Could not hold gpu_core at 60 °C: no reading of the component came; the job ran 42 % of the time (its throughput against free running is not known)."},
	} {
		if got := holdAnswer(&c.h); got != c.want {
			t.Errorf("got  %q\nwant %q", got, c.want)
		}
	}
}

func rundirHold(target string, setC, duty float64, meanAbs, p95, peak *float64, readings int, settleS float64) rundir.Hold {
	return rundir.Hold{Target: target, SetC: setC, Duty: duty, MeanAbsC: meanAbs, P95AbsC: p95, PeakC: peak, Readings: readings, SettleS: settleS}
}

// A run cut at the end of its load (the H100 hold recording) says once,
// last, that its return to idle was not judged, instead of a "not back
// within 1 °C" on every component; a run with a cooldown as long as the
// hold (the H100 DGEMM run, 60 s) judges it on each.
func TestSummaryJudgesTheReturnToIdleOnlyWithACooldown(t *testing.T) {
	for _, c := range []struct {
		dir, want, not string
	}{
		{"../testdata/h100-hold-dgemm", "- return to idle not judged: no cooldown was recorded Run ---", "not back within"},
		{"../testdata/h100-dgemm", "not back within 1 °C of the idle maximum 47.00 °C for 60 s in the 60 s recorded after the load", "return to idle not judged"},
	} {
		r, err := analysis.Load(c.dir)
		if err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		if err := Write(&buf, Text, analysis.Analyze(r, analysis.DefaultOptions()), nil); err != nil {
			t.Fatal(err)
		}
		flat := strings.Join(strings.Fields(buf.String()), " ")
		summary, _, _ := strings.Cut(flat, "Components ---")
		if !strings.Contains(summary, c.want) || strings.Contains(summary, c.not) {
			t.Errorf("%s: the summary lacks %q or says %q:\n%s", c.dir, c.want, c.not, buf.String())
		}
	}
}

// A survey's report leads with its verdict, then says its loads are the
// episodes behind the lines (the real 2×H200 handicap survey: GPU 1 used
// by a second process).
func TestSurveyReportLeadsWithTheVerdict(t *testing.T) {
	r, err := analysis.Load("../testdata/h200x2-survey/warm")
	if err != nil {
		t.Fatal(err)
	}
	o, _ := analysis.SurveyOptions(r, analysis.DefaultOptions())
	rep := analysis.Analyze(r, o)
	if rep.Survey, err = analysis.SurveyOf(r, rep); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := Write(&buf, Text, rep, nil); err != nil {
		t.Fatal(err)
	}
	flat := strings.Join(strings.Fields(buf.String()), " ")
	want := "Summary ------- Survey of 2 GPUs: flagged: GPU 1 of vm ran kernels 31 % of the time (median) during alone:0, return:0, where the survey did not load it"
	if !strings.Contains(flat, want) || !strings.Contains(flat, "The survey's loads are 2 load episodes") {
		t.Errorf("the summary does not lead with the survey's verdict:\n%s", buf.String())
	}
}
