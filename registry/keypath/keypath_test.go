package keypath

import (
	"errors"
	"fmt"
	"testing"
)

func TestErrorNamesThePathAndSurvivesWrapping(t *testing.T) {
	err := fmt.Errorf("pdu rack1: %w", New("5 is outside 1..3", "phases"))
	if err.Error() != "pdu rack1: phases: 5 is outside 1..3" {
		t.Errorf("Error() = %q", err)
	}
	var e *Error
	if !errors.As(err, &e) || len(e.ConfigPath()) != 1 || e.ConfigPath()[0] != "phases" || e.ConfigMessage() != "5 is outside 1..3" {
		t.Errorf("errors.As gave %#v", e)
	}
	if got := New("required", "rules", "3", "name").Error(); got != "rules.3.name: required" {
		t.Errorf("nested path: %q", got)
	}
}
