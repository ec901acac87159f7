package main

import (
	"github.com/spf13/pflag"

	"github.com/heatsink-hpc/heatsink/analysis"
)

// addAnalysisFlags binds the analysis options shared by report and compare.
func addAnalysisFlags(fs *pflag.FlagSet, o *analysis.Options) {
	fs.Float64Var(&o.Tolerance, "tolerance", o.Tolerance, "°C above the idle maximum that still counts as back at idle")
	fs.DurationVar(&o.Hold, "hold", o.Hold, "how long a series must stay within --tolerance to count as back at idle")
	fs.DurationVar(&o.Window, "window", o.Window, "sliding linear-fit window of the steepest sustained rise")
	fs.Float64Var(&o.MinRise, "min-rise", o.MinRise, "°C above the idle mean below which no heat interval is computed")
	fs.DurationVar(&o.MaxGap, "max-gap", o.MaxGap, "longest stretch without readings treated as continuous (0: five sampling intervals)")
	fs.Float64Var(&o.AirCoolingFraction, "air-fraction", o.AirCoolingFraction, "share of the unaccounted above-idle node power charged to cooling on air-cooled nodes")
	fs.Float64Var(&o.PumpFlowLPM, "pump-flow", o.PumpFlowLPM, "coolant flow (L/min) above which circulation counts as a pump cycle, when no pump rpm or status is recorded")
	fs.Float64Var(&o.CoolantDensityKgPerL, "coolant-density", o.CoolantDensityKgPerL, "coolant density (kg/L) for heat removed from coolant flow")
	fs.Float64Var(&o.CoolantHeatCapacityKJPerKgK, "coolant-heat-capacity", o.CoolantHeatCapacityKJPerKgK, "coolant specific heat (kJ/(kg·K)) for heat removed from coolant flow")
	fs.StringVar(&o.Cooling, "cooling", o.Cooling, "immersion or air, overriding run.json's label cooling and what was recorded (tank readings: immersion)")
	fs.Float64Var(&o.NearLimitC, "near-limit", o.NearLimitC, "blind spot: °C below its own slowdown limit at which a component counts as near it (the alert rule gpu_core_near_slowdown's slowdown_c - 5)")
	fs.Float64Var(&o.ControllerC, "controller-c", o.ControllerC, "blind spot: coolant temperature (°C) at which the tank's controller acts (0: the setpoint the tank recorded)")
	fs.Float64Var(&o.CoolantMoveC, "coolant-move", o.CoolantMoveC, "blind spot: °C above its idle mean at which the coolant counts as having moved")
}

// analysisFlagsSet reports whether any of addAnalysisFlags' flags was
// given on the command line.
func analysisFlagsSet(flags *pflag.FlagSet) bool {
	names := pflag.NewFlagSet("", pflag.ContinueOnError)
	var o analysis.Options
	addAnalysisFlags(names, &o)
	set := false
	names.VisitAll(func(f *pflag.Flag) {
		if g := flags.Lookup(f.Name); g != nil && g.Changed {
			set = true
		}
	})
	return set
}
