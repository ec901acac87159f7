// Package analysis turns a recorded run into the numbers a site needs: idle
// statistics, heat-accumulation intervals, return-to-idle times, the hardware's
// lead over the coolant, pump cycles, cooling energy and thermal slowdown, and
// comparisons between runs.
//
// The analyses are plain functions over time and value slices, in the manner
// of gonum's stat package: times are seconds since the run's start, values
// carry their unit in the function's name or documentation, NaN marks a
// missing reading, and nothing holds hidden state. Each analysis lives in the
// file named for it. A function that cannot produce its number returns an
// error saying why; Analyze turns those errors into "not computed: reason"
// entries of the Report instead of ever inventing a value.
//
// A new analysis is one file that registers an Extension from its init
// function: Analyze runs it after the built-in ones, its result goes under
// the report's "analyses" and its section into every human format
// (probe_hottest.go, built with -tags heatsink_probe, shows the whole of it).
//
// Load streams a run directory (run.json and points.lp) into compact
// per-series slices; Analyze runs every analysis over it; Compare sets
// several reports side by side. Rendering lives in analysis/report and plots
// in analysis/plot.
package analysis
