package analysis

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
)

// SurveyFile is the survey's verdicts, beside run.json in its run directory.
const SurveyFile = "survey.json"

// ReadSurvey reads DIR/survey.json of an earlier survey.
func ReadSurvey(dir string) (Survey, error) {
	var s Survey
	path := filepath.Join(dir, SurveyFile)
	b, err := os.ReadFile(path)
	if err != nil {
		return s, err
	}
	if err := json.Unmarshal(b, &s); err != nil {
		return s, fmt.Errorf("%s: %w", path, err)
	}
	if s.Schema > SurveySchema {
		return s, fmt.Errorf("%s: schema %d, newer than this heatsink's %d", path, s.Schema, SurveySchema)
	}
	return s, nil
}

// WriteSurvey writes s as DIR/survey.json.
func WriteSurvey(dir string, s Survey) error {
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return fmt.Errorf("encode %s: %w", SurveyFile, err)
	}
	path := filepath.Join(dir, SurveyFile)
	if err := os.WriteFile(path, append(b, '\n'), 0o644); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}
