package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/heatsink-hpc/heatsink/analysis"
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
