package analysis

import (
	"bufio"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// trialVerdict is bench/gpu-survey-summary.py's rule: a clean survey is
// right with no flag; a handicap trial with a foreign_load flag on the GPU
// the second process ran on and no flag on any GPU but it and the planted
// one.
func trialVerdict(kind, planted, handicapGPU string, flags []SurveyFlag) string {
	if kind == "clean" {
		if len(flags) == 0 {
			return "right"
		}
		return "wrong"
	}
	right := false
	for _, f := range flags {
		if f.GPU != planted && f.GPU != handicapGPU {
			return "wrong"
		}
		right = right || f.Kind == "foreign_load" && f.GPU == handicapGPU
	}
	if right {
		return "right"
	}
	return "wrong"
}

// The ledger's lines that name a committed recording say what the rule
// says of that recording now: its flags and its verdict. A change of the
// rule that turns a right trial wrong fails here, and the ledger cannot
// claim a trial the recording does not support.
func TestTheLedgersRecordedTrialsAreWhatTheRuleSaysNow(t *testing.T) {
	f, err := os.Open(filepath.Join("testdata", "gpu-survey-trials.tsv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	checked := 0
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if strings.HasPrefix(line, "#") || line == "" {
			continue
		}
		c := strings.Split(line, "\t")
		if len(c) != 13 {
			t.Fatalf("line %d: %d columns, want 13", n, len(c))
		}
		_, rec, ok := strings.Cut(c[12], "analysis/testdata/h200x2-survey/")
		if !ok {
			continue
		}
		r := loadH200Survey(t, rec)
		if r.Meta.ID != c[1] {
			t.Errorf("line %d: run %s, but the recording is %s", n, c[1], r.Meta.ID)
		}
		s := JudgeSurveyRun(r, Analyze(r, DefaultOptions().Scaled(25.0/40)), nil, DefaultSurveyRule())
		var got []string
		for _, fl := range s.Flags {
			got = append(got, fl.GPU+":"+fl.Kind+":"+fl.Component)
		}
		flags := strings.Join(got, "; ")
		if flags == "" {
			flags = "none"
		}
		if flags != c[10] {
			t.Errorf("line %d (%s): flags %q, the recording gives %q", n, rec, c[10], flags)
		}
		if v := trialVerdict(c[5], c[6], c[7], s.Flags); v != c[11] {
			t.Errorf("line %d (%s): verdict %s, the recording gives %s", n, rec, c[11], v)
		}
		checked++
	}
	if checked < 2 {
		t.Errorf("%d ledger lines name a committed recording, want the 2 of testdata/h200x2-survey", checked)
	}
}
