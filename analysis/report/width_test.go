package report

import (
	"bytes"
	"strings"
	"testing"
	"unicode/utf8"
)

// A text report fits 100 columns: tables lose optional columns (and say
// which), prose wraps; --wide (TextWide) keeps every column.
func TestTextFitsAHundredColumnsUnlessWide(t *testing.T) {
	rep := sample()
	var narrow, wide bytes.Buffer
	if err := Write(&narrow, Text, rep, nil); err != nil {
		t.Fatal(err)
	}
	if err := Write(&wide, TextWide, rep, nil); err != nil {
		t.Fatal(err)
	}
	for i, line := range strings.Split(narrow.String(), "\n") {
		if n := utf8.RuneCountInString(line); n > textWidth {
			t.Errorf("line %d is %d columns: %q", i+1, n, line)
		}
	}
	if !strings.Contains(narrow.String(), "--wide shows them") || !strings.Contains(narrow.String(), "left out to fit 100 columns: idle min °C") {
		t.Errorf("narrow report does not say what it left out:\n%s", narrow.String())
	}
	if !strings.Contains(wide.String(), "idle min °C") || strings.Contains(wide.String(), "--wide shows them") {
		t.Errorf("wide report lacks a column:\n%s", wide.String())
	}
}

func TestWrap(t *testing.T) {
	got := wrap("  - one two three four five", 13, "    ")
	want := "  - one two\n    three\n    four five"
	if got != want {
		t.Errorf("%q, want %q", got, want)
	}
	if wrap("short", 0, "") != "short" {
		t.Error("width 0 wraps")
	}
}
