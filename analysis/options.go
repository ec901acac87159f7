package analysis

import (
	"errors"
	"fmt"
	"time"
)

// Options are the thresholds and constants of the analyses. Every one is
// stated in the report's definitions, so a number can always be traced back
// to how it was computed.
type Options struct {
	// Tolerance is how far above the idle maximum (°C) a series may be and
	// still count as back at idle.
	Tolerance float64
	// Hold is how long a series must stay within Tolerance to count as
	// back at idle.
	Hold time.Duration
	// Window is the length of the sliding linear fit of the steepest rise.
	Window time.Duration
	// MinRise (°C) is the smallest rise above the idle mean that counts as
	// heating; below it a heat interval would be noise divided by noise.
	MinRise float64
	// MaxGap is the longest stretch without readings that is still treated
	// as continuous; zero means five sampling intervals (5 s at 1 Hz).
	MaxGap time.Duration
	// OnsetFraction and OnsetSmooth define when a series starts to respond:
	// the first time its moving average over OnsetSmooth reaches this
	// fraction of its rise.
	OnsetFraction float64
	OnsetSmooth   time.Duration
	// AirCoolingFraction is the share of the unaccounted above-idle node
	// power charged to cooling on an air-cooled node (fans).
	AirCoolingFraction float64
	// PumpFlowLPM is the coolant flow (L/min) above which circulation
	// counts as a pump cycle when no pump rpm or status is recorded.
	PumpFlowLPM float64
	// CoolantDensityKgPerL and CoolantHeatCapacityKJPerKgK describe the
	// dielectric coolant, for heat removed = flow × ΔT × density × c.
	CoolantDensityKgPerL        float64
	CoolantHeatCapacityKJPerKgK float64
	// Alpha is the significance level of the runtime-against-temperature
	// test.
	Alpha float64
	// Cooling, when immersion or air, overrides both run.json's label
	// cooling and what the recording shows (tank readings: immersion).
	Cooling string
	// NearLimitC is how close (°C) to its own slowdown limit a component
	// counts as near it in the blind-spot analysis; the default is the
	// margin of the shipped alert rule gpu_core_near_slowdown
	// (configs/alerts.yaml: slowdown_c - 5).
	NearLimitC float64
	// ControllerC is the coolant temperature at which the tank's
	// controller acts; zero takes the setpoint the tank recorded, if any.
	ControllerC float64
	// CoolantMoveC is how far (°C) the coolant's smoothed readings must
	// rise above its idle mean to count as having moved.
	CoolantMoveC float64
	// Episodes is the episode rule of a recording without phases; the
	// zero value is DefaultEpisodeRule (see Scaled).
	Episodes EpisodeRule
}

// DefaultOptions returns the defaults that `heatsink report` states.
func DefaultOptions() Options {
	return Options{
		Tolerance:          1,
		Hold:               60 * time.Second,
		Window:             60 * time.Second,
		MinRise:            1,
		OnsetFraction:      0.1,
		OnsetSmooth:        15 * time.Second,
		AirCoolingFraction: 0.02,
		PumpFlowLPM:        0.5,
		// A synthetic single-phase immersion fluid (polyalphaolefin class):
		// about 0.8 kg/L and 2.2 kJ/(kg·K).
		CoolantDensityKgPerL:        0.8,
		CoolantHeatCapacityKJPerKgK: 2.2,
		Alpha:                       0.05,
		NearLimitC:                  5,
		CoolantMoveC:                0.5,
	}
}

// Validate reports the first option that makes no sense.
func (o Options) Validate() error {
	var errs []error
	check := func(ok bool, format string, a ...any) {
		if !ok {
			errs = append(errs, fmt.Errorf(format, a...))
		}
	}
	check(o.Tolerance >= 0, "tolerance %.3g °C is negative", o.Tolerance)
	check(o.Hold >= 0, "hold %v is negative", o.Hold)
	check(o.Window > 0, "window %v must be positive", o.Window)
	check(o.MinRise >= 0, "minimum rise %.3g °C is negative", o.MinRise)
	check(o.MaxGap >= 0, "maximum gap %v is negative", o.MaxGap)
	check(o.OnsetFraction > 0 && o.OnsetFraction < 1, "onset fraction %.3g must be between 0 and 1", o.OnsetFraction)
	check(o.OnsetSmooth >= 0, "onset smoothing %v is negative", o.OnsetSmooth)
	check(o.AirCoolingFraction >= 0 && o.AirCoolingFraction <= 1, "air cooling fraction %.3g must be between 0 and 1", o.AirCoolingFraction)
	check(o.PumpFlowLPM >= 0, "pump flow threshold %.3g L/min is negative", o.PumpFlowLPM)
	check(o.CoolantDensityKgPerL > 0, "coolant density %.3g kg/L must be positive", o.CoolantDensityKgPerL)
	check(o.CoolantHeatCapacityKJPerKgK > 0, "coolant heat capacity %.3g kJ/(kg·K) must be positive", o.CoolantHeatCapacityKJPerKgK)
	check(o.Alpha > 0 && o.Alpha < 1, "significance level %.3g must be between 0 and 1", o.Alpha)
	check(o.Cooling == "" || o.Cooling == "immersion" || o.Cooling == "air", "cooling %q must be immersion or air", o.Cooling)
	check(o.NearLimitC >= 0, "near-limit margin %.3g °C is negative", o.NearLimitC)
	check(o.ControllerC >= 0 && o.ControllerC <= 200, "controller threshold %.3g °C must be between 0 and 200", o.ControllerC)
	check(o.CoolantMoveC > 0, "coolant move %.3g °C must be positive", o.CoolantMoveC)
	return errors.Join(errs...)
}
