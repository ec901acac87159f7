package lda

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/heatsink-hpc/heatsink/kernels"
	"github.com/heatsink-hpc/heatsink/workloads"
)

// Workload is EZLDA as a heatsink workload: each iteration runs
// `iterations` Gibbs sweeps over the corpus, continuing the chain, and
// reports tokens/s, the log-likelihood per token and the fraction of
// tokens the max-topic shortcut decided. On a GPU the load is integer and
// memory-latency bound (document rows, φ̂ rows in shared memory).
type Workload struct{ workloads.Typed[Params] }

func init() { workloads.Register(Workload{}) }

// Name implements workloads.Workload.
func (Workload) Name() string { return "ezlda" }

// Summary implements workloads.Workload.
func (Workload) Summary() string {
	return "EZLDA topic model (collapsed Gibbs, three-branch sampling, hybrid word-topic matrix) on a GPU or the CPU; tokens/s, log-likelihood"
}

// Params are the workload's parameters. The bounds are config.go's
// constants (TestParamsBoundsAreTheConfigs checks them).
type Params struct {
	Corpus     string  `param:"corpus" default:"synthetic:preset=nytimes-tenth" help:"a synthetic corpus synthetic:preset=NAME[,docs=D][,vocab=V][,topics=K][,len=L][,alpha=A][,beta=B][,zipf=S][,seed=X] (presets tiny, small, medium, nytimes, nytimes-tenth), a UCI docword file (docword.NAME.txt[.gz]), or plain text (a file, or a directory)"`
	Vocab      string  `param:"vocab" help:"the UCI vocabulary file (default: vocab.NAME.txt beside docword.NAME.txt, if there)"`
	Documents  string  `param:"documents" default:"line" choices:"line,file" help:"what a document of plain text is: a line, or a file of the directory"`
	StopWords  bool    `param:"stopwords" default:"true" help:"drop English stop words from plain text"`
	MinCount   int     `param:"min_count" default:"3" min:"1" help:"drop words of plain text with fewer tokens in the whole corpus"`
	Topics     int     `param:"topics" default:"1024" min:"2" max:"65536" help:"K"`
	Alpha      float64 `param:"alpha" default:"0" min:"0" help:"document-topic prior α (0: 50/K)"`
	Beta       float64 `param:"beta" default:"0.01" min:"1e-6" max:"1e6" help:"topic-word prior β"`
	Iterations int     `param:"iterations" default:"1" min:"1" max:"1048576" help:"Gibbs sweeps per workload iteration (the chain continues across them)"`
	Seed       int64   `param:"seed" default:"1" min:"0" help:"seed of the sampler's random draws"`
	Device     string  `param:"device" default:"0" help:"GPU index (see heatsink gpus) or cpu"`
	GPUs       int     `param:"gpus" default:"1" min:"1" max:"64" help:"GPUs sampling one chain, from device on: W replicated, topics exchanged GPU to GPU every iteration"`
	Threads    int     `param:"threads" default:"0" min:"0" max:"65536" help:"goroutines for device=cpu (0: one per core)"`
	Format     string  `param:"format" default:"hybrid" choices:"hybrid,dense,sparse" help:"word-topic rows: dense for words with more than K tokens (hybrid), for all words, or for none"`
	Branches   int     `param:"branches" default:"3" min:"2" max:"3" help:"3: with the exact max-topic shortcut; 2: without"`
	Schedule   string  `param:"schedule" default:"balanced" choices:"balanced,static" help:"device=cpu: work units through an atomic counter, or fixed shares"`
	LLEvery    int     `param:"ll_every" default:"1" min:"0" help:"compute the log-likelihood every N sweeps (0: never)"`
	Check      bool    `param:"check" default:"false" help:"verify the count invariants after every sweep (on the device for a GPU)"`
	Output     string  `param:"output" help:"directory to write the model to when the job ends: topics.txt, word_topic.mtx, doc_topic.mtx, vocab.txt"`
	TopWords   int     `param:"top_words" default:"20" min:"1" help:"words a topic in topics.txt"`
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

// OpenCorpus reads the corpus parameters: a synthetic spec, a UCI docword
// file (named docword*), or plain text.
func OpenCorpus(spec, vocab string, text TextOptions, threads int) (*Corpus, error) {
	switch {
	case spec == "":
		return nil, fmt.Errorf("parameter corpus is empty: give %s..., a UCI docword file or a text file", SyntheticPrefix)
	case strings.HasPrefix(spec, SyntheticPrefix):
		s, err := ParseSynthetic(spec)
		if err != nil {
			return nil, err
		}
		return s.Generate(threads)
	case strings.HasPrefix(filepath.Base(spec), "docword"):
		if vocab == "" {
			guess := filepath.Join(filepath.Dir(spec), strings.Replace(strings.TrimSuffix(filepath.Base(spec), ".gz"), "docword", "vocab", 1))
			for _, g := range []string{guess, guess + ".gz"} {
				if _, err := os.Stat(g); err == nil {
					vocab = g
					break
				}
			}
		}
		return LoadUCI(spec, vocab)
	}
	if vocab != "" {
		return nil, fmt.Errorf("parameter vocab is for UCI docword files; %s is read as plain text", spec)
	}
	return LoadText(spec, text)
}

// jobConfig is what Start reads from the parameters.
type jobConfig struct {
	cfg     Config
	dev     Device
	sweeps  int
	llEvery int
	check   bool
	output  string
	top     int
}

func readParams(p Params) (*Corpus, jobConfig, error) {
	var jc jobConfig
	jc.cfg = DefaultConfig(p.Topics)
	if p.Alpha > 0 {
		jc.cfg.Alpha = p.Alpha
	}
	jc.cfg.Beta, jc.cfg.Seed = p.Beta, uint64(p.Seed)
	if err := jc.cfg.Validate(); err != nil {
		return nil, jc, err
	}
	gpu, err := kernels.ParseDevice(p.Device)
	if err != nil {
		return nil, jc, err
	}
	f, err := ParseFormat(p.Format)
	if err != nil {
		return nil, jc, err
	}
	if gpu < 0 && p.GPUs > 1 {
		return nil, jc, fmt.Errorf("gpus=%d needs a GPU device, not device=cpu", p.GPUs)
	}
	jc.dev = Device{GPU: gpu, GPUs: p.GPUs, Options: Options{Format: f, TwoBranch: p.Branches == 2,
		Static: p.Schedule == "static", Threads: p.Threads}}
	jc.sweeps, jc.llEvery, jc.check = p.Iterations, p.LLEvery, p.Check
	jc.output, jc.top = p.Output, p.TopWords
	text := TextOptions{PerFile: p.Documents == "file", StopWords: p.StopWords, MinCount: p.MinCount}
	c, err := OpenCorpus(p.Corpus, p.Vocab, text, jc.dev.Options.Threads)
	return c, jc, err
}

// Start implements workloads.Workload: it reads or generates the corpus,
// lays it out and prepares the device, so that a bad corpus or too little
// GPU memory fails before the experiment starts.
func (w Workload) Start(ctx context.Context, v workloads.Values) (workloads.Job, error) {
	p, err := w.Of(v)
	if err != nil {
		return nil, err
	}
	c, jc, err := readParams(p)
	if err != nil {
		return nil, err
	}
	tr, err := NewTrainer(ctx, c, jc.cfg, jc.dev)
	if err != nil {
		return nil, err
	}
	tr.Check = jc.check
	return &job{tr: tr, jc: jc}, nil
}

type job struct {
	tr *Trainer
	jc jobConfig
}

// Iterate implements workloads.Job.
func (j *job) Iterate(ctx context.Context) (workloads.Result, error) {
	var sample, rebuild, total time.Duration
	var last IterStats
	ll := math.NaN()
	for range j.jc.sweeps {
		withLL := j.jc.llEvery > 0 && (j.tr.Iteration()+1)%j.jc.llEvery == 0
		st, err := j.tr.Step(ctx, withLL)
		if err != nil {
			return workloads.Result{}, err
		}
		sample += st.Sample
		rebuild += st.Rebuild
		total += st.Time
		if !math.IsNaN(st.LogLik) {
			ll = st.LogLik
		}
		last = st
	}
	tokens := float64(last.Tokens) * float64(j.jc.sweeps)
	m := map[string]float64{
		"tokens_per_s":  tokens / total.Seconds(),
		"sample_s":      sample.Seconds(),
		"rebuild_s":     rebuild.Seconds(),
		"max_topic_pct": 100 * last.ShortcutFrac(),
		"sweeps":        float64(last.Iteration),
		"tokens":        float64(last.Tokens),
		"topics":        float64(j.jc.cfg.Topics),
		"device_bytes":  float64(j.tr.DeviceBytes()),
	}
	if !math.IsNaN(ll) {
		m["loglik_nats_per_token"] = ll
	}
	return workloads.Result{Work: tokens, WorkUnit: "tokens", Metrics: m}, nil
}

// Close implements workloads.Job: the model goes to the output directory,
// when one was given, and the device is released.
func (j *job) Close() error {
	var err error
	if j.jc.output != "" {
		m, merr := j.tr.Model(context.Background())
		if merr == nil {
			merr = m.WriteDir(j.jc.output, j.jc.top)
		}
		err = merr
	}
	return errors.Join(err, j.tr.Close())
}
