package analysis

import (
	"path/filepath"
	"strings"
	"testing"
)

// loadH200Survey loads one survey of testdata/h200x2-survey: heatsink
// survey on a real 2×H200 machine (bench/gpu-survey.sh), "clean" or
// "warm" (a second process ran GEMMs on GPU 1 at a duty of 0.3 from GPU
// 0's turn through its return: warm/handicap.txt).
func loadH200Survey(t *testing.T, name string) *Run {
	t.Helper()
	r, err := Load(filepath.Join("testdata", "h200x2-survey", name))
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// On the real H200s a GPU's idle power rose from 82 W to 125 W after its
// own load and stayed there (its clocks stayed up, most likely held by
// the survey's open CUDA context), so the power rule flagged both GPUs of a clean survey; utilisation
// read 0 wherever the survey did not load a GPU, and 20-31 % where the
// handicap's process ran. The rule judges by utilisation where it was
// recorded: nothing on the clean survey, GPU 1 in the handicap's phases.
func TestForeignLoadOnTheRealH200SurveyIsUtilisationNotPower(t *testing.T) {
	rule := DefaultSurveyRule()
	clean := loadH200Survey(t, "clean")
	if flags, why := foreignLoadFlags(clean, rule); len(flags) != 0 || why != "" {
		t.Errorf("clean survey: flags %+v (%s)", flags, why)
	}
	powerOnly := rule
	powerOnly.ForeignLoadUtilPct = 0
	if flags, _ := foreignLoadFlags(clean, powerOnly); len(flags) != 2 {
		t.Errorf("the power rule on the clean survey: %d flags, want the 2 false ones that made utilisation the evidence", len(flags))
	}
	flags, why := foreignLoadFlags(loadH200Survey(t, "warm"), rule)
	if len(flags) != 1 || flags[0].GPU != "1" || flags[0].Metric != "util_pct" || flags[0].Value < 20 ||
		!strings.Contains(flags[0].Reason, "during alone:0, return:0") {
		t.Errorf("warm GPU 1: flags %+v (%s), want one on GPU 1 during alone:0 and return:0", flags, why)
	}
}
