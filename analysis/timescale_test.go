package analysis

import (
	"testing"
	"time"
)

func TestScaledShortensEveryDurationOfTheRuleAndNothingElse(t *testing.T) {
	d := DefaultOptions()
	if got := d.Scaled(1); got != d {
		t.Errorf("Scaled(1) changed the options: %+v", got)
	}
	if got := d.Scaled(0); got != d {
		t.Errorf("Scaled(0) changed the options: %+v", got)
	}
	s := d.Scaled(0.15)
	want := DefaultEpisodeRule()
	want.BridgeS, want.MinLoadS, want.BaselineS, want.MinBaselineS, want.CooldownS = 4.5, 4.5, 45, 3, 540
	if s.Episodes != want {
		t.Errorf("episode rule %+v, want %+v", s.Episodes, want)
	}
	if s.Hold != 9*time.Second || s.Window != 9*time.Second || s.OnsetSmooth != 2250*time.Millisecond {
		t.Errorf("hold %v window %v onset %v, want 9s 9s 2.25s", s.Hold, s.Window, s.OnsetSmooth)
	}
	s.Episodes, s.Hold, s.Window, s.OnsetSmooth = d.Episodes, d.Hold, d.Window, d.OnsetSmooth
	if s != d {
		t.Errorf("Scaled changed more than durations: %+v", s)
	}
}
