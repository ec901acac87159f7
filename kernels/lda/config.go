package lda

import (
	"fmt"
	"runtime"
)

// Config is the model: K topics, the Dirichlet priors α and β, and the
// seed of the random draws.
type Config struct {
	Topics int
	Alpha  float64
	Beta   float64
	Seed   uint64
}

// Limits of Config's fields (see the package comment on integer widths).
const (
	MaxTopics = 1 << 16
	MinAlpha  = 1e-6
	MinBeta   = 1e-6
	MaxBeta   = 1e6
	// MaxAlphaK bounds α·K.
	MaxAlphaK = 1 << 20
)

// DefaultConfig is EZLDA's setting for k topics: α = 50/K, β = 0.01.
func DefaultConfig(k int) Config {
	return Config{Topics: k, Alpha: 50 / float64(k), Beta: 0.01, Seed: 1}
}

// Validate checks the fields' ranges, naming the first one out of range.
func (c Config) Validate() error {
	switch {
	case c.Topics < 2 || c.Topics > MaxTopics:
		return fmt.Errorf("topics %d: want 2 to %d", c.Topics, MaxTopics)
	case !(c.Alpha >= MinAlpha) || c.Alpha*float64(c.Topics) > MaxAlphaK:
		return fmt.Errorf("alpha %g: want at least %g and alpha·K at most %d", c.Alpha, MinAlpha, MaxAlphaK)
	case !(c.Beta >= MinBeta) || c.Beta > MaxBeta:
		return fmt.Errorf("beta %g: want %g to %g", c.Beta, MinBeta, MaxBeta)
	}
	return nil
}

// Options choose how an engine computes an iteration; they never change
// what it computes. The zero value is EZLDA's design on every core.
type Options struct {
	Format Format
	// TwoBranch turns the max-topic shortcut off.
	TwoBranch bool
	// Static hands each goroutine a fixed share of the work units in
	// order, instead of the balanced schedule (dense words' units, then
	// sparse chunks, through an atomic counter).
	Static bool
	// Threads is the number of goroutines (0: one per core).
	Threads int
}

func (o Options) threads() int {
	if o.Threads > 0 {
		return o.Threads
	}
	return runtime.GOMAXPROCS(0)
}
