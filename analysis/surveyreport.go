package analysis

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/heatsink-hpc/heatsink/rundir"
)

// SurveyScaleLabel is the run.json label in which heatsink survey records
// the factor its recording was judged with (Options.Scaled), so that
// heatsink report on the same directory reads it on the same time scale.
const SurveyScaleLabel = "survey_analysis_scale"

// ruleMadeFor is the load and return the default episode rule is made
// for: its shortest load of 30 s and its bridge of 30 s fit in 40 s.
const ruleMadeFor = 40 * time.Second

// SurveyAnalysisScale is the factor a survey of loads of load and returns
// of at least ret is judged with: its shorter step over the 40 s the
// default rule is made for, so that short loads on a plant of short τ
// are episodes of their own. 1 or more leaves the options as they are.
func SurveyAnalysisScale(load, ret time.Duration) float64 {
	return min(load, ret).Seconds() / ruleMadeFor.Seconds()
}

// IsSurvey reports whether r is the recording of heatsink survey: its
// label, or for a recording without labels, its protocol's phases.
func IsSurvey(r *Run) bool {
	if r == nil || r.Meta == nil {
		return false
	}
	if r.Meta.Labels["experiment"] == "survey" {
		return true
	}
	return slices.ContainsFunc(r.Meta.Phases, func(p rundir.Phase) bool { return strings.HasPrefix(p.Name, "alone:") })
}

// SurveyOptions returns o scaled as heatsink survey judged r, and says
// how in a phrase; o unchanged and "" where r is not a survey or needs no
// scaling. The factor is the one the survey recorded; a recording made
// before it was recorded gets it from its phases: its shortest alone or
// return phase over 40 s (a return lasts at least --min-return, so this
// is at least the survey's own factor, equal where a return ended at its
// minimum).
func SurveyOptions(r *Run, o Options) (Options, string) {
	if !IsSurvey(r) {
		return o, ""
	}
	if l, ok := r.Meta.Labels[SurveyScaleLabel]; ok {
		f, err := strconv.ParseFloat(l, 64)
		if err != nil || f <= 0 || f >= 1 {
			return o, ""
		}
		return o.Scaled(f), fmt.Sprintf("judged on the survey's time scale: the episode rule, hold, fit window and onset smoothing ×%.3g (run.json's %s)", f, SurveyScaleLabel)
	}
	var shortest time.Duration
	for _, p := range r.Meta.Phases {
		if p.End == nil || !(strings.HasPrefix(p.Name, "alone:") || strings.HasPrefix(p.Name, "return:")) {
			continue
		}
		if d := p.End.Sub(p.Start); shortest == 0 || d < shortest {
			shortest = d
		}
	}
	// A phase ends a few milliseconds after the plan's whole seconds.
	shortest = shortest.Round(time.Second)
	f := shortest.Seconds() / ruleMadeFor.Seconds()
	if shortest <= 0 || f >= 1 {
		return o, ""
	}
	return o.Scaled(f), fmt.Sprintf("judged on the survey's time scale: the episode rule, hold, fit window and onset smoothing ×%.3g (its shortest load or return, %.0f s, over the 40 s the rule is made for)", f, shortest.Seconds())
}

// SurveyOf is the judgement of the survey recording r whose report is
// rep: its survey.json where heatsink survey wrote one (judged with
// --against where it was given), else judged afresh by the default rule
// without an earlier survey. Nil where r is not a survey.
func SurveyOf(r *Run, rep *Report) (*Survey, error) {
	if !IsSurvey(r) {
		return nil, nil
	}
	s, err := ReadSurvey(r.Dir)
	if err == nil {
		return &s, nil
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("read the survey's verdicts: %w", err)
	}
	s = JudgeSurveyRun(r, rep, nil, DefaultSurveyRule())
	return &s, nil
}

// AnalyzeAsRecorded analyses r as what recorded it judged it: a survey's
// recording on the survey's time scale, unless keep says o was chosen by
// the user, and with the survey's verdict (SurveyOf).
func AnalyzeAsRecorded(r *Run, o Options, keep bool) (*Report, error) {
	var note string
	if !keep {
		o, note = SurveyOptions(r, o)
	}
	rep := Analyze(r, o)
	if note != "" {
		rep.Notes = append(rep.Notes, note)
	}
	sv, err := SurveyOf(r, rep)
	if err != nil {
		return nil, err
	}
	rep.Survey = sv
	return rep, nil
}

// notARunDir adds to a missing run.json what dir is instead: a fleet
// survey's own directory holds its nodes' recordings under nodes/.
func notARunDir(dir string, err error) error {
	if !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	nodes, _ := filepath.Glob(filepath.Join(dir, "nodes", "*", rundir.MetaFile))
	if len(nodes) > 0 {
		return fmt.Errorf("%s is a fleet survey, not a run directory: its verdicts are %s; give a node's recording (heatsink report %s) or compare them all (heatsink report %s): %w",
			dir, filepath.Join(dir, SurveyFile), filepath.Dir(nodes[0]), filepath.Join(dir, "nodes", "*"), err)
	}
	return fmt.Errorf("%s is not a run directory (heatsink run, collect, survey or import --out write one): %w", dir, err)
}
