package lda

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/heatsink-hpc/heatsink/workloads"
)

// Device is where a Trainer samples: a GPU, or the CPU when GPU < 0.
type Device struct {
	GPU int
	// GPUs, when above 1, samples one chain on GPUs GPU, GPU+1, ...
	// (multiGPU).
	GPUs    int
	Options Options
	// open, when set, opens the GPU instead of the CUDA driver (tests
	// under emulation).
	open func(gpu int) (gpuDevice, error)
}

// CPU is the cpu device with opt.
func CPU(opt Options) Device { return Device{GPU: -1, Options: opt} }

// engine is one device's sampler.
type engine interface {
	// initialise draws the initial topics and counts them.
	initialise(ctx context.Context) error
	// step runs one iteration; it returns the tokens that took the
	// shortcut and the device time of sampling and of the rebuild.
	step(ctx context.Context) (stepStats, error)
	// state returns the counts and the word-major topics (a copy for a
	// GPU).
	state(ctx context.Context) (*counts, []uint32, error)
	// logLikelihood is the collapsed joint log-likelihood without the
	// constant document terms.
	logLikelihood(ctx context.Context) (float64, error)
	// check verifies the count invariants where the counts live.
	check(ctx context.Context) error
	name() string
	// bytes is the device memory the engine holds.
	bytes() int64
	close() error
}

type stepStats struct {
	shortcuts       int64
	sample, rebuild time.Duration
}

// IterStats is one iteration.
type IterStats struct {
	Iteration int
	Tokens    int
	// Shortcuts is the number of tokens the max-topic shortcut decided.
	Shortcuts int64
	// Sample, Rebuild and Time are the sampling, the count rebuild, and
	// the whole iteration (GPU events on a GPU, wall time on the CPU).
	Sample, Rebuild, Time time.Duration
	// LogLik is the log-likelihood per token in nats, NaN when not
	// computed this iteration.
	LogLik float64
}

// TokensPerS is the iteration's rate.
func (s IterStats) TokensPerS() float64 { return float64(s.Tokens) / s.Time.Seconds() }

// ShortcutFrac is the fraction of tokens the shortcut decided.
func (s IterStats) ShortcutFrac() float64 { return float64(s.Shortcuts) / float64(s.Tokens) }

// Trainer samples a corpus on a device, one iteration at a time.
type Trainer struct {
	cfg      Config
	c        *Corpus
	l        *layout
	eng      engine
	iter     int
	docTerms float64
	// Check verifies the count invariants after every iteration.
	Check bool
}

// NewTrainer lays the corpus out and prepares the device; the initial
// topics are drawn and counted.
func NewTrainer(ctx context.Context, c *Corpus, cfg Config, dev Device) (*Trainer, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	l, err := newLayout(c, cfg.Topics, dev.Options.Format)
	if err != nil {
		return nil, err
	}
	tr := &Trainer{cfg: cfg, c: c, l: l, docTerms: docTerms(l, cfg.Alpha)}
	if dev.GPU < 0 {
		tr.eng = &cpuDevice{e: newCPUEngine(cfg, dev.Options, l)}
	} else {
		if tr.eng, err = newGPUEngine(ctx, cfg, dev, l); err != nil {
			return nil, err
		}
	}
	if err := tr.eng.initialise(ctx); err != nil {
		return nil, errors.Join(err, tr.eng.close())
	}
	return tr, nil
}

// Step runs one iteration; the log-likelihood is computed when withLL.
func (tr *Trainer) Step(ctx context.Context, withLL bool) (IterStats, error) {
	if err := workloads.Checkpoint(ctx); err != nil {
		return IterStats{}, err
	}
	st, err := tr.eng.step(ctx)
	if err != nil {
		return IterStats{}, err
	}
	tr.iter++
	out := IterStats{Iteration: tr.iter, Tokens: tr.l.n, Shortcuts: st.shortcuts,
		Sample: st.sample, Rebuild: st.rebuild, Time: st.sample + st.rebuild, LogLik: math.NaN()}
	if tr.Check {
		if err := tr.eng.check(ctx); err != nil {
			return out, fmt.Errorf("%s, iteration %d: %w", tr.eng.name(), tr.iter, err)
		}
	}
	if withLL {
		if out.LogLik, err = tr.LogLikelihood(ctx); err != nil {
			return out, err
		}
	}
	return out, nil
}

// LogLikelihood is the current log-likelihood per token, in nats.
func (tr *Trainer) LogLikelihood(ctx context.Context) (float64, error) {
	ll, err := tr.eng.logLikelihood(ctx)
	if err != nil {
		return 0, err
	}
	return (ll - tr.docTerms) / float64(tr.l.n), nil
}

// Iteration is the number of iterations run.
func (tr *Trainer) Iteration() int { return tr.iter }

// DeviceName says where the trainer samples.
func (tr *Trainer) DeviceName() string { return tr.eng.name() }

// DeviceBytes is the memory the sampler holds on its device.
func (tr *Trainer) DeviceBytes() int64 { return tr.eng.bytes() }

// Model returns the current counts in corpus word ids.
func (tr *Trainer) Model(ctx context.Context) (*Model, error) {
	c, _, err := tr.eng.state(ctx)
	if err != nil {
		return nil, err
	}
	return newModel(tr.l, tr.cfg, tr.c, c), nil
}

// Close releases the device.
func (tr *Trainer) Close() error {
	if tr.eng == nil {
		return nil
	}
	err := tr.eng.close()
	tr.eng = nil
	return err
}

// cpuDevice adapts cpuEngine to engine.
type cpuDevice struct{ e *cpuEngine }

func (d *cpuDevice) initialise(ctx context.Context) error {
	d.e.initialise()
	return nil
}

func (d *cpuDevice) step(ctx context.Context) (stepStats, error) { return d.e.step(), nil }

func (d *cpuDevice) state(ctx context.Context) (*counts, []uint32, error) { return d.e.c, d.e.z, nil }

func (d *cpuDevice) logLikelihood(ctx context.Context) (float64, error) {
	e := d.e
	return logLikelihood(e.l, e.c, e.cfg.Alpha, e.cfg.Beta, e.threadsCount), nil
}

func (d *cpuDevice) check(ctx context.Context) error { return checkCounts(d.e.l, d.e.c, d.e.z) }

func (d *cpuDevice) name() string { return fmt.Sprintf("CPU (%d goroutines)", d.e.threadsCount) }

func (d *cpuDevice) bytes() int64 { return d.e.bytes() }

func (d *cpuDevice) close() error { return nil }
