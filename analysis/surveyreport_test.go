package analysis

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The real 2×H200 surveys (35 s loads, returns of at least 25 s) were
// judged by heatsink survey ×0.625; recorded before the factor was
// written to run.json, they get it from their phases, and heatsink
// report's verdicts are then the survey's.
func TestSurveyOptionsOfTheRealH200Surveys(t *testing.T) {
	for _, name := range []string{"clean", "warm"} {
		r, err := Load(filepath.Join("testdata", "h200x2-survey", name))
		if err != nil {
			t.Fatal(err)
		}
		if !IsSurvey(r) {
			t.Fatalf("%s: not read as a survey", name)
		}
		o, note := SurveyOptions(r, DefaultOptions())
		want := DefaultOptions().Scaled(SurveyAnalysisScale(35*time.Second, 25*time.Second))
		if o.Hold != want.Hold || o.Episodes != want.Episodes || !strings.Contains(note, "×0.625 (its shortest load or return, 25 s") {
			t.Errorf("%s: hold %v, episodes %+v, %q; want hold %v", name, o.Hold, o.Episodes, note, want.Hold)
		}
		rep := Analyze(r, o)
		sv, err := SurveyOf(r, rep)
		if err != nil || sv == nil {
			t.Fatalf("%s: survey %v, %v", name, sv, err)
		}
		wantStatus := map[string]string{"clean": "clean", "warm": "flagged"}[name]
		if sv.Status != wantStatus || (name == "warm" && (len(sv.Flags) != 1 || sv.Flags[0].Kind != "foreign_load")) {
			t.Errorf("%s: status %s, flags %+v", name, sv.Status, sv.Flags)
		}
		if name == "clean" {
			// The figures the survey itself gave on this machine.
			for _, v := range rep.Verdicts {
				if v.Component == "gpu_core:0" && v.Metric == "thermal_resistance_c_per_w" && (v.Value < 0.03515 || v.Value >= 0.03525) {
					t.Errorf("clean: GPU 0 core %.5f °C/W, the survey's 0.0352", v.Value)
				}
			}
		}
	}
}

// The factor heatsink survey recorded wins over the phases; a run that is
// no survey, or a factor of 1, is left alone; a survey.json beside the
// recording is its verdict, as written (judged --against, say).
func TestSurveyOptionsFromTheLabelAndSurveyJSON(t *testing.T) {
	r, err := Load(filepath.Join("testdata", "h200x2-survey", "clean"))
	if err != nil {
		t.Fatal(err)
	}
	r.Meta.Labels[SurveyScaleLabel] = "0.75"
	o, note := SurveyOptions(r, DefaultOptions())
	if o.Hold != DefaultOptions().Scaled(0.75).Hold || !strings.Contains(note, "×0.75 (run.json's survey_analysis_scale)") {
		t.Errorf("label 0.75: hold %v, %q", o.Hold, note)
	}
	r.Meta.Labels[SurveyScaleLabel] = "1"
	if o, note := SurveyOptions(r, DefaultOptions()); o.Hold != DefaultOptions().Hold || note != "" {
		t.Errorf("label 1: hold %v, %q", o.Hold, note)
	}

	plain, err := Load(filepath.Join("testdata", "h100-hold-dgemm"))
	if err != nil {
		t.Fatal(err)
	}
	if o, note := SurveyOptions(plain, DefaultOptions()); IsSurvey(plain) || o.Hold != DefaultOptions().Hold || note != "" {
		t.Errorf("a hold run read as a survey: %q", note)
	}
	if sv, err := SurveyOf(plain, Analyze(plain, DefaultOptions())); sv != nil || err != nil {
		t.Errorf("a hold run's survey: %v, %v", sv, err)
	}

	dir := t.TempDir()
	r.Dir = dir
	if err := WriteSurvey(dir, Survey{Schema: SurveySchema, RunID: "written", Status: "flagged", Against: "earlier"}); err != nil {
		t.Fatal(err)
	}
	if sv, err := SurveyOf(r, nil); err != nil || sv == nil || sv.RunID != "written" || sv.Against != "earlier" {
		t.Errorf("survey.json not read: %+v, %v", sv, err)
	}
	os.WriteFile(filepath.Join(dir, SurveyFile), []byte("{"), 0o644)
	if _, err := SurveyOf(r, nil); err == nil || !strings.Contains(err.Error(), SurveyFile) {
		t.Errorf("a broken survey.json: %v", err)
	}
}

// Compared, the two real H200 surveys put GPU 1's memory of the clean one
// 5 % under three nearly equal peers: robust z about −28, typical by the
// 10 % rule, which its reason says.
func TestATypicalVerdictWithALargeZSaysWhy(t *testing.T) {
	var reps []*Report
	for _, name := range []string{"clean", "warm"} {
		r, err := Load(filepath.Join("testdata", "h200x2-survey", name))
		if err != nil {
			t.Fatal(err)
		}
		o, _ := SurveyOptions(r, DefaultOptions())
		reps = append(reps, Analyze(r, o))
	}
	seen := 0
	for _, v := range Compare(reps).Verdicts {
		large := v.RobustZ != nil && math.Abs(*v.RobustZ) >= 3.5
		if large && v.Status == "typical" {
			seen++
			if !strings.HasSuffix(v.Reason, "; typical (within 10 % of the median: peers this alike make any z large)") {
				t.Errorf("%s", v.Reason)
			}
		}
		if !large && strings.Contains(v.Reason, "peers this alike") {
			t.Errorf("said of a small z: %s", v.Reason)
		}
	}
	if seen == 0 {
		t.Error("no typical verdict with |z| ≥ 3.5 in the two surveys compared")
	}
}
