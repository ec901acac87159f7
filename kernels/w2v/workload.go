package w2v

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/heatsink-hpc/heatsink/kernels"
	"github.com/heatsink-hpc/heatsink/workloads"
)

// Workload is FULL-W2V's skip-gram training as a heatsink workload: every
// iteration trains the configured epochs from word2vec's initial weights
// and reports words/s as word2vec counts them. On a GPU the load is the
// kernels' shared-memory and L2 atomic traffic (the GPU draws its own
// batches, the host idles); on the CPU, every core in float arithmetic.
type Workload struct{}

// Name implements workloads.Workload.
func (Workload) Name() string { return "full-w2v" }

// Summary implements workloads.Workload.
func (Workload) Summary() string {
	return "word2vec skip-gram (negative sampling or hierarchical softmax), FULL-W2V's or Wombat's GPU design or Hogwild on the CPU; words/s"
}

// Params implements workloads.Workload.
func (Workload) Params() []workloads.ParamSpec {
	def := DefaultConfig()
	f := func(v float64) string { return fmt.Sprint(v) }
	i := func(v int) string { return fmt.Sprint(v) }
	return []workloads.ParamSpec{
		{Name: "corpus", Type: workloads.String, Default: ZipfPrefix,
			Help: "a text file (.gz read as gzip; scripts/corpus-english.sh writes one), a Zipfian corpus " +
				"zipf:[words=W,tokens=T,s=S,seed=X] (default: text8's shape), or a corpus with planted clusters and analogies " +
				"planted:[clusters=C,size=S,entities=E,relations=R,contexts=X,noise=N,tokens=T,shuffle=B,seed=X] (scored after every iteration)"},
		{Name: "sentences", Type: workloads.String, Default: string(Lines), Choices: []string{string(Lines), string(Word2Vec)},
			Help: "a text corpus's sentences: lines, or word2vec's convention (a line end is the word </s>)"},
		{Name: "min_count", Type: workloads.Int, Default: "5", Min: workloads.Bound(1),
			Help: "a text corpus's words seen fewer times are dropped"},
		{Name: "vocab", Type: workloads.String, Default: "",
			Help: "a saved vocabulary to use instead of counting the text corpus (heatsink w2v-train --save-vocab writes one)"},
		{Name: "max_sentence", Type: workloads.Int, Default: i(DefaultMaxSentence), Min: workloads.Bound(1), Max: workloads.Bound(1 << 20),
			Help: "sentences are cut after this many words"},
		{Name: "dim", Type: workloads.Int, Default: i(def.Dim), Min: workloads.Bound(1), Max: workloads.Bound(MaxDim),
			Help: "dimension d of the vectors"},
		{Name: "window", Type: workloads.Int, Default: i(def.Window), Min: workloads.Bound(1), Max: workloads.Bound(MaxWindow),
			Help: "word2vec's window W; FULL-W2V trains the fixed window ceil(W/2) either side"},
		{Name: "negatives", Type: workloads.Int, Default: i(def.Negatives), Min: workloads.Bound(1), Max: workloads.Bound(MaxNegatives),
			Help: "negative samples N per window, shared by its context words"},
		{Name: "sample", Type: workloads.Float, Default: f(def.Sample), Min: workloads.Bound(0), Max: workloads.Bound(0.5),
			Help: "subsampling threshold of frequent words (0: off)"},
		{Name: "alpha", Type: workloads.Float, Default: f(def.Alpha), Min: workloads.Bound(1e-6), Max: workloads.Bound(1),
			Help: "starting learning rate, decayed linearly"},
		{Name: "epochs", Type: workloads.Int, Default: i(def.Epochs), Min: workloads.Bound(1), Max: workloads.Bound(MaxEpochs),
			Help: "passes over the corpus per iteration"},
		{Name: "seed", Type: workloads.Int, Default: "1", Min: workloads.Bound(0),
			Help: "seeds the initial weights, subsampling and negatives"},
		{Name: "table", Type: workloads.Int, Default: i(def.TableSize), Min: workloads.Bound(1), Max: workloads.Bound(1 << 30),
			Help: "entries of the unigram table negatives are drawn from (word2vec: 1e8)"},
		{Name: "objective", Type: workloads.String, Default: ObjectiveNS, Choices: []string{ObjectiveNS, ObjectiveHS},
			Help: "negative sampling (word2vec -negative N) or hierarchical softmax over word2vec's Huffman tree (-hs 1; on a GPU with kernel=wombat)"},
		{Name: "kernel", Type: workloads.String, Default: KernelAuto, Choices: []string{KernelAuto, KernelWarp, KernelBlock, KernelWombat},
			Help: "GPU layout (the CPU computes the same sums): a warp per sentence (d <= 256), FULL-W2V's block per sentence, auto, " +
				"or wombat: Wombat's batches (a window as one small matrix product on the CPU; host-assembled 4x8 tiles and pairs on the GPU)"},
		{Name: "device", Type: workloads.String, Default: "0", Help: "GPU index (see heatsink gpus) or cpu"},
		{Name: "threads", Type: workloads.Int, Default: "0", Min: workloads.Bound(0), Max: workloads.Bound(1 << 16),
			Help: "goroutines training (cpu; 0: one per core; 1: deterministic), or assembling Wombat's batches (kernel=wombat on a GPU); FULL-W2V's GPU draws its own"},
		{Name: "batch_tokens", Type: workloads.Int, Default: i(DefaultBatchTokens), Min: workloads.Bound(1), Max: workloads.Bound(1 << 28),
			Help: "corpus tokens per GPU launch (kernel=wombat: the default means 2^16)"},
		{Name: "fresh", Type: workloads.Bool, Default: strconv.FormatBool(def.Fresh),
			Help: "keep a context copy for one window (word2vec) rather than its 2*W_f+1 (FULL-W2V's ring): fresher rows when many sentences train at once"},
		// Bounded by default (DefaultConcurrency): on the H100 unbounded
		// concurrency trained vectors far worse than the CPU's.
		{Name: "wombat_concurrency", Type: workloads.Int, Default: i(DefaultWombatConcurrency), Min: workloads.Bound(0), Max: workloads.Bound(1 << 24),
			Help: "kernel=wombat on a GPU: windows (tiles and pairs with wombat_layout=tiles) trained at once (0: all of a launch, faster but staler Hogwild)"},
		{Name: "wombat_layout", Type: workloads.String, Default: WombatWindows, Choices: []string{WombatWindows, WombatTiles},
			Help: "kernel=wombat on a GPU: a warp per window (windows), or the paper's 4x8 tiles a warp each, then the other pairs a warp each (tiles)"},
		{Name: "concurrency", Type: workloads.Int, Default: i(DefaultConcurrency), Min: workloads.Bound(0), Max: workloads.Bound(1 << 24),
			Help: "sentences a GPU trains at once (0: as many as fit, faster but staler Hogwild)"},
	}
}

// Devices implements workloads.DeviceLister.
func (Workload) Devices(ctx context.Context) ([]string, error) {
	inv := kernels.Discover()
	out := []string{"cpu"}
	for _, d := range inv.Devices {
		out = append(out, fmt.Sprintf("%d: %s (%d SMs, %.1f GiB)", d.Ordinal, d.Name, d.SMs, float64(d.MemoryBytes)/(1<<30)))
	}
	return out, inv.DriverErr
}

// ConfigFromValues reads the training parameters.
func ConfigFromValues(v workloads.Values) (Config, error) {
	cfg := Config{
		Dim: int(v.Int("dim")), Window: int(v.Int("window")), Negatives: int(v.Int("negatives")),
		Sample: v.Float("sample"), Alpha: v.Float("alpha"), Epochs: int(v.Int("epochs")),
		Seed: uint64(v.Int("seed")), TableSize: int(v.Int("table")), Kernel: v.String("kernel"), Fresh: v.Bool("fresh"),
		Objective: v.String("objective"),
	}
	return cfg, cfg.Validate()
}

// CorpusOptionsFromValues reads how to read a text corpus, loading the
// saved vocabulary when one is named.
func CorpusOptionsFromValues(v workloads.Values) (CorpusOptions, error) {
	o := CorpusOptions{Sentences: Sentences(v.String("sentences")), MinCount: v.Int("min_count"), MaxSentence: int(v.Int("max_sentence"))}
	if path := v.String("vocab"); path != "" {
		voc, err := LoadVocab(path, 1)
		if err != nil {
			return o, err
		}
		o.Vocab = voc
	}
	return o, nil
}

// OpenCorpus reads a corpus parameter: a synthetic spec (zipf:..., planted:...,
// with its ground truth) or a text file.
func OpenCorpus(spec string, o CorpusOptions) (*Corpus, *Truth, error) {
	o, err := o.withDefaults()
	if err != nil {
		return nil, nil, err
	}
	switch {
	case strings.HasPrefix(spec, ZipfPrefix):
		z, err := ParseZipf(spec)
		if err != nil {
			return nil, nil, err
		}
		return z.Generate(o.MaxSentence), nil, nil
	case strings.HasPrefix(spec, PlantedPrefix):
		p, err := ParsePlanted(spec)
		if err != nil {
			return nil, nil, err
		}
		c, err := p.Generate(o.MaxSentence)
		return c, p.Truth(), err
	case spec == "":
		return nil, nil, fmt.Errorf("parameter corpus is empty: give a text file, %s... or %s...", ZipfPrefix, PlantedPrefix)
	}
	c, err := LoadCorpus(spec, o)
	return c, nil, err
}

// Start implements workloads.Workload: it reads or generates the corpus and
// prepares the device, so a bad corpus or too little GPU memory fails
// before the experiment starts.
func (Workload) Start(ctx context.Context, v workloads.Values) (workloads.Job, error) {
	cfg, err := ConfigFromValues(v)
	if err != nil {
		return nil, err
	}
	gpu, err := kernels.ParseDevice(v.String("device"))
	if err != nil {
		return nil, err
	}
	o, err := CorpusOptionsFromValues(v)
	if err != nil {
		return nil, err
	}
	c, truth, err := OpenCorpus(v.String("corpus"), o)
	if err != nil {
		return nil, err
	}
	dev := Device{GPU: gpu, Threads: int(v.Int("threads")), BatchTokens: int(v.Int("batch_tokens")), Concurrency: int(v.Int("concurrency")),
		WombatLayout: v.String("wombat_layout"), WombatConcurrency: int(v.Int("wombat_concurrency"))}
	tr, err := NewTrainer(ctx, c, cfg, dev)
	if err != nil {
		return nil, err
	}
	return &job{tr: tr, truth: truth, threads: dev.Threads}, nil
}

type job struct {
	tr      *Trainer
	truth   *Truth
	threads int
}

// Iterate implements workloads.Job.
func (j *job) Iterate(ctx context.Context) (workloads.Result, error) {
	st, err := j.tr.Train(ctx)
	if err != nil {
		return workloads.Result{}, err
	}
	m := st.Metrics()
	vecs, err := j.tr.Vectors(ctx)
	if err != nil {
		return workloads.Result{}, err
	}
	if err := vecs.CheckFinite(); err != nil {
		return workloads.Result{}, err
	}
	if j.truth != nil {
		sc := j.truth.Score(vecs, j.threads)
		m["cluster_purity"] = sc.ClusterPurity
		if sc.Analogy.Questions > 0 {
			m["planted_analogy_add"] = sc.Analogy.AddAccuracy()
			m["planted_analogy_mul"] = sc.Analogy.MulAccuracy()
		}
	}
	return workloads.Result{Work: float64(st.Words), WorkUnit: "words", Metrics: m}, nil
}

// Close implements workloads.Job.
func (j *job) Close() error { return j.tr.Close() }

// Trained is the outcome of Train.
type Trained struct {
	Vectors *Vectors
	Stats   Stats
	Corpus  *Corpus
	Truth   *Truth // for a planted corpus
}

// Train trains once with the workload's parameters v: what `heatsink
// w2v-train` does.
func Train(ctx context.Context, v workloads.Values) (*Trained, error) {
	j, err := Workload{}.Start(ctx, v)
	if err != nil {
		return nil, err
	}
	jb := j.(*job)
	defer jb.tr.Close()
	st, err := jb.tr.Train(ctx)
	if err != nil {
		return nil, err
	}
	vecs, err := jb.tr.Vectors(ctx)
	if err != nil {
		return nil, err
	}
	if err := vecs.CheckFinite(); err != nil {
		return nil, err
	}
	return &Trained{Vectors: vecs, Stats: st, Corpus: jb.tr.c, Truth: jb.truth}, nil
}
