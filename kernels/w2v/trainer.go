package w2v

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"time"
)

// Device says where a Trainer trains.
type Device struct {
	// GPU is the GPU's index, or -1 for the CPU.
	GPU int
	// Threads is the goroutines that train on the cpu device; 0 means
	// GOMAXPROCS. One thread trains the sentences in order: the
	// deterministic reference of the kernels. (The GPU draws its own
	// batches.)
	Threads int
	// BatchTokens is the most corpus tokens one GPU launch (drawing and
	// training) covers; 0 means DefaultBatchTokens.
	BatchTokens int
	// Concurrency bounds the sentences a GPU trains at once (0: as many as
	// the launch has and the GPU holds, thousands). Hogwild's updates, each
	// computed from rows others are changing, cost quality as it grows;
	// the workload's default is DefaultConcurrency.
	Concurrency int
	// WombatConcurrency bounds the windows (layout windows) or tiles and
	// pairs (layout tiles) a GPU trains at once with kernel=wombat (0: all
	// of a launch's, as many as the GPU holds); the workload's default is
	// DefaultWombatConcurrency.
	WombatConcurrency int
	// WombatLayout is how kernel=wombat trains on a GPU: WombatWindows (a
	// warp per window; "" means it) or WombatTiles (the paper's matrix
	// kernel over 4x8 tiles, then its vector kernel over the other pairs).
	WombatLayout string

	// open, when set, opens the GPU instead of the CUDA driver (the tests'
	// CPU emulation of w2v.cu).
	open func(gpu int) (gpuDevice, error)
	// sequential launches one sentence at a time, which makes the GPU's
	// result the CPU's, bit for bit (the reference check).
	sequential bool
}

// DefaultWombatConcurrency is the workload's bound on the windows Wombat
// trains at once on a GPU. On the H100, SGHS vectors of the real-English
// corpus trained 1024 windows at a time reached word2vec's CPU SGHS on
// WS-353, SimLex-999 and both analogy measures over 5 seeds, and the
// text8-shaped corpus trained at 60 M words/s; 2048 at a time lost a
// quarter of the analogies (TestWombatQualityMatchesCPU).
const DefaultWombatConcurrency = 1024

// The layouts of kernel=wombat on a GPU (Device.WombatLayout).
const (
	WombatWindows = "windows"
	WombatTiles   = "tiles"
)

// DefaultBatchTokens is a GPU launch's size in corpus tokens: text8 in one
// launch. A launch ends with its last sentences training while the rest of
// the GPU idles, so fewer, larger launches waste less; its draws take
// 4*(1+N) bytes per token of GPU memory.
const DefaultBatchTokens = 1 << 25

// DefaultConcurrency is the workload's bound on the sentences a GPU trains
// at once. On the H100, with fresh contexts (Config.Fresh), vectors
// trained on the real-English corpus 2048 at a time scored within the
// CPU's spread on all four measures (TestGPUQualityMatchesCPU), while the
// text8-shaped corpus trained at 155 M words/s; with FULL-W2V's ring only
// 512 at a time did (64 M words/s).
const DefaultConcurrency = 2048

// CPU is the cpu device with threads goroutines (0: GOMAXPROCS).
func CPU(threads int) Device { return Device{GPU: -1, Threads: threads} }

func (d Device) String() string {
	if d.GPU < 0 {
		return "cpu"
	}
	return fmt.Sprintf("gpu %d", d.GPU)
}

func (d Device) threads() int {
	if d.Threads > 0 {
		return d.Threads
	}
	return runtime.GOMAXPROCS(0)
}

// engine trains on one device.
type engine interface {
	name() string
	// reset loads the initial weights.
	reset(syn0, syn1 []float32) error
	// epoch trains epoch e.
	epoch(ctx context.Context, e int) (epochStats, error)
	// vectors returns the input vectors (syn0).
	vectors(ctx context.Context) ([]float32, error)
	close() error
}

// epochStats is what an engine measured in an epoch.
type epochStats struct {
	kept int64 // tokens trained
	// kernel is the kernels' device time (drawing and training), and
	// hostWait the host's work between launches (GPU only).
	kernel, hostWait time.Duration
	// launches is the Wombat launches, starved those queued when the GPU
	// had nothing left to train (the first of an epoch among them).
	launches, starved int
}

// Trainer trains word vectors on a corpus.
type Trainer struct {
	c   *Corpus
	cfg Config
	dev Device
	s   *sampler
	lay layout
	hs  *huffman // the objective is hierarchical softmax
	eng engine
}

// NewTrainer prepares training c with cfg on dev: the sampler's tables and
// the device's memory, so that a failure comes before any training.
func NewTrainer(ctx context.Context, c *Corpus, cfg Config, dev Device) (*Trainer, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	lay, err := cfg.layout()
	if err != nil {
		return nil, err
	}
	if c.Tokens() == 0 {
		return nil, errors.New("the corpus has no words to train")
	}
	if c.Vocab.Size() > 1<<31/cfg.Dim {
		return nil, fmt.Errorf("%d words of dimension %d: above the kernels' 2^31 elements per matrix", c.Vocab.Size(), cfg.Dim)
	}
	t := &Trainer{c: c, cfg: cfg, dev: dev, s: newSampler(c, cfg), lay: lay}
	if cfg.HS() {
		if t.hs, err = newHuffman(c.Vocab.Counts); err != nil {
			return nil, err
		}
	}
	switch {
	case dev.GPU < 0:
		t.eng = newCPUEngine(t)
	case cfg.Wombat():
		if t.eng, err = newWombatGPUEngine(ctx, t); err != nil {
			return nil, err
		}
	case cfg.HS():
		return nil, fmt.Errorf("objective %s on a GPU needs kernel %s (FULL-W2V's kernels train negative sampling only)", ObjectiveHS, KernelWombat)
	default:
		if t.eng, err = newGPUEngine(ctx, t); err != nil {
			return nil, err
		}
	}
	return t, nil
}

// Stats is what a training run did.
type Stats struct {
	Device string
	Epochs int
	Words  int64 // words counted, all epochs: word2vec's measure of work
	Tokens int64 // the corpus's tokens, all epochs
	Kept   int64 // tokens trained after subsampling, all epochs
	Wall   time.Duration
	Kernel time.Duration // the kernels' GPU time (GPU only)
	// HostWait is the host's work between launches, while the GPU idled.
	HostWait time.Duration
	// Launches is Wombat's launches (GPU), Starved those queued to an
	// idle GPU: each then also waited for its plan's copy.
	Launches, Starved int
	Vocab             int
	Sentences         int
}

// WordsPerS is word2vec's rate: words counted per second of training,
// host-side preparation included.
func (s Stats) WordsPerS() float64 { return float64(s.Words) / s.Wall.Seconds() }

// Metrics are the run's figures for run.json (units in the names).
func (s Stats) Metrics() map[string]float64 {
	m := map[string]float64{
		"words":         float64(s.Words),
		"words_per_s":   s.WordsPerS(),
		"kept_fraction": float64(s.Kept) / float64(s.Tokens),
		"train_s":       s.Wall.Seconds(),
		"vocab":         float64(s.Vocab),
		"epochs":        float64(s.Epochs),
	}
	if s.Kernel > 0 {
		m["kernel_s"] = s.Kernel.Seconds()
		m["kernel_words_per_s"] = float64(s.Words) / s.Kernel.Seconds()
		m["host_wait_s"] = s.HostWait.Seconds()
	}
	if s.Launches > 0 {
		m["launches"], m["starved_launches"] = float64(s.Launches), float64(s.Starved)
	}
	return m
}

// Train trains from word2vec's initial weights for the configured epochs.
// Between launches (GPU) or groups of sentences (CPU) it honours
// workloads.Checkpoint, so the guard can pause it.
func (t *Trainer) Train(ctx context.Context) (Stats, error) {
	st := Stats{Device: t.eng.name(), Epochs: t.cfg.Epochs, Vocab: t.c.Vocab.Size(), Sentences: t.c.Sentences()}
	v, d := t.c.Vocab.Size(), t.cfg.Dim
	syn0, syn1 := make([]float32, v*d), make([]float32, v*d)
	initWeights(syn0, syn1, d, t.cfg.Seed)
	if err := t.eng.reset(syn0, syn1); err != nil {
		return st, err
	}
	start := time.Now()
	for e := 0; e < t.cfg.Epochs; e++ {
		es, err := t.eng.epoch(ctx, e)
		if err != nil {
			return st, err
		}
		st.Kernel += es.kernel
		st.HostWait += es.hostWait
		st.Launches += es.launches
		st.Starved += es.starved
		st.Kept += es.kept
		st.Words += t.s.counted
		st.Tokens += t.c.Tokens()
	}
	st.Wall = time.Since(start)
	return st, nil
}

// Vectors returns the input vectors (syn0), word2vec's output.
func (t *Trainer) Vectors(ctx context.Context) (*Vectors, error) {
	data, err := t.eng.vectors(ctx)
	if err != nil {
		return nil, err
	}
	return NewVectors(t.c.Vocab.Words, t.cfg.Dim, data)
}

// Close releases the device.
func (t *Trainer) Close() error { return t.eng.close() }
