package w2v

import (
	"context"
	"fmt"
	"io/fs"
	"strings"

	"github.com/heatsink-hpc/heatsink/kernels"
	"github.com/heatsink-hpc/heatsink/workloads"
)

// Workload is FULL-W2V's skip-gram training as a heatsink workload: every
// iteration trains the configured epochs from word2vec's initial weights
// and reports words/s as word2vec counts them. On a GPU the load is the
// kernels' shared-memory and L2 atomic traffic (the GPU draws its own
// batches, the host idles); on the CPU, every core in float arithmetic.
type Workload struct{ workloads.Typed[Params] }

func init() { workloads.Register(Workload{}) }

// Name implements workloads.Workload.
func (Workload) Name() string { return "full-w2v" }

// Summary implements workloads.Workload.
func (Workload) Summary() string {
	return "word2vec skip-gram (negative sampling or hierarchical softmax), FULL-W2V's or Wombat's GPU design or Hogwild on the CPU; words/s"
}

// Params are the workload's parameters. The bounds and choices are
// config.go's constants (TestParamsBoundsAreTheConfigs checks them).
type Params struct {
	Corpus    string `param:"corpus" default:"zipf:" help:"a text file (.gz read as gzip; scripts/corpus-english.sh writes one), a Zipfian corpus zipf:[words=W,tokens=T,s=S,seed=X] (default: text8's shape), or a corpus with planted clusters and analogies planted:[clusters=C,size=S,entities=E,relations=R,contexts=X,noise=N,tokens=T,shuffle=B,seed=X] (scored after every iteration)"`
	Sentences string `param:"sentences" default:"line" choices:"line,word2vec" help:"a text corpus's sentences: lines, or word2vec's convention (a line end is the word </s>)"`
	MinCount  int64  `param:"min_count" default:"5" min:"1" help:"a text corpus's words seen fewer times are dropped"`
	Vocab     string `param:"vocab" help:"a saved vocabulary to use instead of counting the text corpus (heatsink w2v-train --save-vocab writes one)"`
	// Sets makes a real text's quality a metric (ws353_spearman...), so
	// heatsink tune can hold a floor on it (--constraint ws353_spearman>=0.49).
	Sets string `param:"sets" default:"none" help:"evaluation sets the vectors are scored on after every iteration: none, builtin (WS-353, SimLex-999 and Google's analogies, shipped with heatsink), or a directory of ws353*.txt, SimLex999.txt, google.txt (one without google.txt skips the analogies, which take seconds)"`
	// MaxSentence, Dim, Window, Negatives, Sample, Alpha, Epochs, Table,
	// Fresh, BatchTokens, WombatConcurrency and Concurrency default to
	// DefaultConfig's and the Default constants.
	MaxSentence int     `param:"max_sentence" min:"1" max:"1048576" help:"sentences are cut after this many words"`
	Dim         int     `param:"dim" min:"1" max:"1024" help:"dimension d of the vectors"`
	Window      int     `param:"window" min:"1" max:"20" help:"word2vec's window W; FULL-W2V trains the fixed window ceil(W/2) either side"`
	Negatives   int     `param:"negatives" min:"1" max:"64" help:"negative samples N per window, shared by its context words"`
	Sample      float64 `param:"sample" min:"0" max:"0.5" help:"subsampling threshold of frequent words (0: off)"`
	Alpha       float64 `param:"alpha" min:"1e-6" max:"1" help:"starting learning rate, decayed linearly"`
	Epochs      int     `param:"epochs" min:"1" max:"1000" help:"passes over the corpus per iteration"`
	Seed        int64   `param:"seed" default:"1" min:"0" help:"seeds the initial weights, subsampling and negatives"`
	Table       int     `param:"table" min:"1" max:"1073741824" help:"entries of the unigram table negatives are drawn from (word2vec: 1e8)"`
	Objective   string  `param:"objective" default:"ns" choices:"ns,hs" help:"negative sampling (word2vec -negative N) or hierarchical softmax over word2vec's Huffman tree (-hs 1; on a GPU with kernel=wombat)"`
	Kernel      string  `param:"kernel" default:"auto" choices:"auto,warp,block,wombat" help:"GPU layout (the CPU computes the same sums): a warp per sentence (d <= 256), FULL-W2V's block per sentence, auto, or wombat: Wombat's batches (a window as one small matrix product on the CPU; host-assembled 4x8 tiles and pairs on the GPU)"`
	Device      string  `param:"device" default:"0" help:"GPU index (see heatsink gpus) or cpu"`
	Threads     int     `param:"threads" default:"0" min:"0" max:"65536" help:"goroutines training (cpu; 0: one per core; 1: deterministic), or assembling Wombat's batches (kernel=wombat on a GPU); FULL-W2V's GPU draws its own"`
	BatchTokens int     `param:"batch_tokens" min:"1" max:"268435456" help:"corpus tokens per GPU launch (kernel=wombat: the default means 2^16)"`
	Fresh       bool    `param:"fresh" help:"keep a context copy for one window (word2vec) rather than its 2*W_f+1 (FULL-W2V's ring): fresher rows when many sentences train at once"`
	// Bounded by default (DefaultConcurrency): on the H100 unbounded
	// concurrency trained vectors far worse than the CPU's.
	WombatConcurrency int    `param:"wombat_concurrency" min:"0" max:"16777216" help:"kernel=wombat on a GPU: windows (tiles and pairs with wombat_layout=tiles) trained at once (0: all of a launch, faster but staler Hogwild)"`
	WombatLayout      string `param:"wombat_layout" default:"windows" choices:"windows,tiles" help:"kernel=wombat on a GPU: a warp per window (windows), or the paper's 4x8 tiles a warp each, then the other pairs a warp each (tiles)"`
	Concurrency       int    `param:"concurrency" min:"0" max:"16777216" help:"sentences a GPU trains at once (0: as many as fit, faster but staler Hogwild)"`
}

// SetDefaults implements workloads.Defaulter: DefaultConfig and the
// Default constants are the one place the training's defaults are.
func (p *Params) SetDefaults() {
	def := DefaultConfig()
	p.MaxSentence, p.Dim, p.Window, p.Negatives = DefaultMaxSentence, def.Dim, def.Window, def.Negatives
	p.Sample, p.Alpha, p.Epochs, p.Table, p.Fresh = def.Sample, def.Alpha, def.Epochs, def.TableSize, def.Fresh
	p.BatchTokens, p.WombatConcurrency, p.Concurrency = DefaultBatchTokens, DefaultWombatConcurrency, DefaultConcurrency
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

// ConfigFromParams reads the training parameters.
func ConfigFromParams(p Params) (Config, error) {
	cfg := Config{
		Dim: p.Dim, Window: p.Window, Negatives: p.Negatives,
		Sample: p.Sample, Alpha: p.Alpha, Epochs: p.Epochs,
		Seed: uint64(p.Seed), TableSize: p.Table, Kernel: p.Kernel, Fresh: p.Fresh,
		Objective: p.Objective,
	}
	return cfg, cfg.Validate()
}

// CorpusOptionsFromParams reads how to read a text corpus, loading the
// saved vocabulary when one is named.
func CorpusOptionsFromParams(p Params) (CorpusOptions, error) {
	o := CorpusOptions{Sentences: Sentences(p.Sentences), MinCount: p.MinCount, MaxSentence: p.MaxSentence}
	if p.Vocab != "" {
		voc, err := LoadVocab(p.Vocab, 1)
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
func (w Workload) Start(ctx context.Context, v workloads.Values) (workloads.Job, error) {
	p, err := w.Of(v)
	if err != nil {
		return nil, err
	}
	cfg, err := ConfigFromParams(p)
	if err != nil {
		return nil, err
	}
	gpu, err := kernels.ParseDevice(p.Device)
	if err != nil {
		return nil, err
	}
	o, err := CorpusOptionsFromParams(p)
	if err != nil {
		return nil, err
	}
	sets, err := OpenSets(p.Sets)
	if err != nil {
		return nil, fmt.Errorf("parameter sets: %w", err)
	}
	c, truth, err := OpenCorpus(p.Corpus, o)
	if err != nil {
		return nil, err
	}
	dev := Device{GPU: gpu, Threads: p.Threads, BatchTokens: p.BatchTokens, Concurrency: p.Concurrency,
		WombatLayout: p.WombatLayout, WombatConcurrency: p.WombatConcurrency}
	tr, err := NewTrainer(ctx, c, cfg, dev)
	if err != nil {
		return nil, err
	}
	return &job{tr: tr, truth: truth, sets: sets, threads: dev.Threads}, nil
}

type job struct {
	tr      *Trainer
	truth   *Truth
	sets    fs.FS // nil: none
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
	if j.sets != nil {
		r, err := Evaluate(vecs, EvalOptions{Sets: j.sets, Threads: j.threads})
		if err != nil {
			return workloads.Result{}, fmt.Errorf("score the vectors on the evaluation sets: %w", err)
		}
		r.addMetrics(m)
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
