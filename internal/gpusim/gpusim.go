// Package gpusim is a simulated GPU source for tests of what needs GPUs on
// machines that have none (heatsink survey on the loopback Slurm
// cluster): each GPU is a first-order thermal plant, its core and memory
// relaxing with time constant τ towards idle plus its own °C/W times its
// power above idle plus what its neighbours' power adds through a
// coupling matrix. A GPU draws its load power while its load marker file
// exists: the survey's load command makes it when it starts and removes
// it when it is stopped. Readings
// carry the NVML source's measurement, tags and field names, noise from a
// seeded generator and whole degrees as NVML reports them, so they go
// through the real collector, run directory and analysis. It is compiled
// into heatsink only with the build tag heatsink_gpusim
// (node/gpusim_source.go).
package gpusim

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"github.com/heatsink-hpc/heatsink/point"
	"github.com/heatsink-hpc/heatsink/point/schema"
)

// GPU is one simulated GPU's plant.
type GPU struct {
	UUID  string `yaml:"uuid"`
	Model string `yaml:"model"`
	// IdleW and LoadW are its power unloaded and under load.
	IdleW float64 `yaml:"idle_w"`
	LoadW float64 `yaml:"load_w"`
	// IdleC and MemIdleC are its core and memory temperatures at idle.
	IdleC    float64 `yaml:"idle_c"`
	MemIdleC float64 `yaml:"mem_idle_c"`
	// CoreCPerW and MemCPerW are its steady rises per watt above idle.
	CoreCPerW float64 `yaml:"core_c_per_w"`
	MemCPerW  float64 `yaml:"mem_c_per_w"`
	// TauS is its time constant, core and memory alike.
	TauS float64 `yaml:"tau_s"`
}

// Plant is the whole simulated node.
type Plant struct {
	GPUs []GPU `yaml:"gpus"`
	// Coupling[s][n] is GPU n's rise (core and memory) per watt GPU s
	// draws above idle; absent rows and columns are 0.
	Coupling [][]float64 `yaml:"coupling"`
	// NoiseC and PowerNoiseW are the standard deviations of the
	// temperature and power noise; Seed seeds it.
	NoiseC      float64 `yaml:"noise_c"`
	PowerNoiseW float64 `yaml:"power_noise_w"`
	Seed        uint64  `yaml:"seed"`
	// LoadDir holds the load markers: GPU i (its place in GPUs) is
	// loaded while the file gpu<i> exists there.
	LoadDir string `yaml:"load_dir"`
}

// Check refuses a plant that cannot be simulated, naming the GPU and
// the value.
func (p Plant) Check() error {
	if len(p.GPUs) == 0 {
		return errors.New("gpusim: no gpus")
	}
	if p.LoadDir == "" {
		return errors.New("gpusim: load_dir missing: the survey's load marks its GPUs there")
	}
	for i, g := range p.GPUs {
		switch {
		case g.UUID == "":
			return fmt.Errorf("gpusim: gpus[%d]: uuid missing", i)
		case g.TauS <= 0:
			return fmt.Errorf("gpusim: gpus[%d] (%s): tau_s %g: want a positive time constant", i, g.UUID, g.TauS)
		case g.LoadW <= g.IdleW || g.IdleW < 0:
			return fmt.Errorf("gpusim: gpus[%d] (%s): want 0 ≤ idle_w (%g) < load_w (%g)", i, g.UUID, g.IdleW, g.LoadW)
		case g.CoreCPerW < 0 || g.MemCPerW < 0:
			return fmt.Errorf("gpusim: gpus[%d] (%s): negative °C/W", i, g.UUID)
		}
	}
	if len(p.Coupling) > len(p.GPUs) {
		return fmt.Errorf("gpusim: coupling has %d rows for %d gpus", len(p.Coupling), len(p.GPUs))
	}
	for s, row := range p.Coupling {
		if len(row) > len(p.GPUs) {
			return fmt.Errorf("gpusim: coupling row %d has %d columns for %d gpus", s, len(row), len(p.GPUs))
		}
	}
	return nil
}

// Source samples the plant. Its state advances from one sample to the
// next by the exact first-order step over the time between them.
type Source struct {
	plant Plant

	mu        sync.Mutex
	rng       *rand.Rand
	last      time.Time
	core, mem []float64
}

// New returns a source simulating p, every GPU at idle.
func New(p Plant) *Source {
	s := &Source{plant: p, rng: rand.New(rand.NewPCG(p.Seed, 31))}
	for _, g := range p.GPUs {
		s.core, s.mem = append(s.core, g.IdleC), append(s.mem, g.MemIdleC)
	}
	return s
}

// Name identifies the source.
func (s *Source) Name() string { return "gpusim" }

// Discover checks that the load directory exists.
func (s *Source) Discover(ctx context.Context) error {
	if st, err := os.Stat(s.plant.LoadDir); err != nil || !st.IsDir() {
		return fmt.Errorf("gpusim: load_dir %s: not a directory (%v)", s.plant.LoadDir, err)
	}
	return nil
}

// Describe lists the simulated GPUs.
func (s *Source) Describe() []string {
	return []string{fmt.Sprintf("%d simulated GPUs, loads marked in %s", len(s.plant.GPUs), s.plant.LoadDir)}
}

// loaded reports whether GPU i's load marker exists.
func (s *Source) loaded(i int) bool {
	_, err := os.Stat(filepath.Join(s.plant.LoadDir, "gpu"+strconv.Itoa(i)))
	return err == nil
}

// Sample advances the plant to t and appends one gpu point per GPU.
func (s *Source) Sample(ctx context.Context, t time.Time, buf []point.Point) ([]point.Point, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	gs := s.plant.GPUs
	above := make([]float64, len(gs))
	for i, g := range gs {
		if s.loaded(i) {
			above[i] = g.LoadW - g.IdleW
		}
	}
	dt := 0.0
	if !s.last.IsZero() {
		dt = math.Max(0, t.Sub(s.last).Seconds())
	}
	s.last = t
	for i, g := range gs {
		heat := 0.0
		for src := range gs {
			if src != i {
				heat += s.coupling(src, i) * above[src]
			}
		}
		a := 1 - math.Exp(-dt/g.TauS)
		s.core[i] += (g.IdleC + g.CoreCPerW*above[i] + heat - s.core[i]) * a
		s.mem[i] += (g.MemIdleC + g.MemCPerW*above[i] + heat - s.mem[i]) * a
		p := point.New(schema.GPU, t)
		p.AddTag(schema.TagGPU, strconv.Itoa(i))
		p.AddTag(schema.TagUUID, g.UUID)
		p.AddTag(schema.TagModel, g.Model)
		p.AddFloat(schema.FieldTempC, math.Round(s.core[i]+s.plant.NoiseC*s.rng.NormFloat64()))
		p.AddFloat(schema.FieldMemTempC, math.Round(s.mem[i]+s.plant.NoiseC*s.rng.NormFloat64()))
		p.AddFloat(schema.FieldPowerW, g.IdleW+above[i]+s.plant.PowerNoiseW*s.rng.NormFloat64())
		buf = append(buf, p)
	}
	return buf, nil
}

func (s *Source) coupling(src, dst int) float64 {
	if src >= len(s.plant.Coupling) || dst >= len(s.plant.Coupling[src]) {
		return 0
	}
	return s.plant.Coupling[src][dst]
}
