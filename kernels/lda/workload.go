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
type Workload struct{}

// Name implements workloads.Workload.
func (Workload) Name() string { return "ezlda" }

// Summary implements workloads.Workload.
func (Workload) Summary() string {
	return "EZLDA topic model (collapsed Gibbs, three-branch sampling, hybrid word-topic matrix) on a GPU or the CPU; tokens/s, log-likelihood"
}

// Params implements workloads.Workload.
func (Workload) Params() []workloads.ParamSpec {
	return []workloads.ParamSpec{
		{Name: "corpus", Type: workloads.String, Default: SyntheticPrefix + "preset=nytimes-tenth",
			Help: "a synthetic corpus " + SyntheticPrefix + "preset=NAME[,docs=D][,vocab=V][,topics=K][,len=L][,alpha=A][,beta=B][,zipf=S][,seed=X] " +
				"(presets tiny, small, medium, nytimes, nytimes-tenth), a UCI docword file (docword.NAME.txt[.gz]), or plain text (a file, or a directory)"},
		{Name: "vocab", Type: workloads.String, Default: "",
			Help: "the UCI vocabulary file (default: vocab.NAME.txt beside docword.NAME.txt, if there)"},
		{Name: "documents", Type: workloads.String, Default: "line", Choices: []string{"line", "file"},
			Help: "what a document of plain text is: a line, or a file of the directory"},
		{Name: "stopwords", Type: workloads.Bool, Default: "true", Help: "drop English stop words from plain text"},
		{Name: "min_count", Type: workloads.Int, Default: "3", Min: workloads.Bound(1),
			Help: "drop words of plain text with fewer tokens in the whole corpus"},
		{Name: "topics", Type: workloads.Int, Default: "1024", Min: workloads.Bound(2), Max: workloads.Bound(MaxTopics), Help: "K"},
		{Name: "alpha", Type: workloads.Float, Default: "0", Min: workloads.Bound(0),
			Help: "document-topic prior α (0: 50/K)"},
		{Name: "beta", Type: workloads.Float, Default: "0.01", Min: workloads.Bound(MinBeta), Max: workloads.Bound(MaxBeta),
			Help: "topic-word prior β"},
		{Name: "iterations", Type: workloads.Int, Default: "1", Min: workloads.Bound(1), Max: workloads.Bound(1 << 20),
			Help: "Gibbs sweeps per workload iteration (the chain continues across them)"},
		{Name: "seed", Type: workloads.Int, Default: "1", Min: workloads.Bound(0), Help: "seed of the sampler's random draws"},
		{Name: "device", Type: workloads.String, Default: "0", Help: "GPU index (see heatsink gpus) or cpu"},
		{Name: "gpus", Type: workloads.Int, Default: "1", Min: workloads.Bound(1), Max: workloads.Bound(64),
			Help: "GPUs sampling one chain, from device on: W replicated, topics exchanged GPU to GPU every iteration"},
		{Name: "threads", Type: workloads.Int, Default: "0", Min: workloads.Bound(0), Max: workloads.Bound(1 << 16),
			Help: "goroutines for device=cpu (0: one per core)"},
		{Name: "format", Type: workloads.String, Default: "hybrid", Choices: []string{"hybrid", "dense", "sparse"},
			Help: "word-topic rows: dense for words with more than K tokens (hybrid), for all words, or for none"},
		{Name: "branches", Type: workloads.Int, Default: "3", Min: workloads.Bound(2), Max: workloads.Bound(3),
			Help: "3: with the exact max-topic shortcut; 2: without"},
		{Name: "schedule", Type: workloads.String, Default: "balanced", Choices: []string{"balanced", "static"},
			Help: "device=cpu: work units through an atomic counter, or fixed shares"},
		{Name: "ll_every", Type: workloads.Int, Default: "1", Min: workloads.Bound(0),
			Help: "compute the log-likelihood every N sweeps (0: never)"},
		{Name: "check", Type: workloads.Bool, Default: "false",
			Help: "verify the count invariants after every sweep (on the device for a GPU)"},
		{Name: "output", Type: workloads.String, Default: "",
			Help: "directory to write the model to when the job ends: topics.txt, word_topic.mtx, doc_topic.mtx, vocab.txt"},
		{Name: "top_words", Type: workloads.Int, Default: "20", Min: workloads.Bound(1), Help: "words a topic in topics.txt"},
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

func readValues(v workloads.Values) (*Corpus, jobConfig, error) {
	var jc jobConfig
	k := int(v.Int("topics"))
	jc.cfg = DefaultConfig(k)
	if a := v.Float("alpha"); a > 0 {
		jc.cfg.Alpha = a
	}
	jc.cfg.Beta, jc.cfg.Seed = v.Float("beta"), uint64(v.Int("seed"))
	if err := jc.cfg.Validate(); err != nil {
		return nil, jc, err
	}
	gpu, err := kernels.ParseDevice(v.String("device"))
	if err != nil {
		return nil, jc, err
	}
	f, err := ParseFormat(v.String("format"))
	if err != nil {
		return nil, jc, err
	}
	gpus := int(v.Int("gpus"))
	if gpu < 0 && gpus > 1 {
		return nil, jc, fmt.Errorf("gpus=%d needs a GPU device, not device=cpu", gpus)
	}
	jc.dev = Device{GPU: gpu, GPUs: gpus, Options: Options{Format: f, TwoBranch: v.Int("branches") == 2,
		Static: v.String("schedule") == "static", Threads: int(v.Int("threads"))}}
	jc.sweeps, jc.llEvery, jc.check = int(v.Int("iterations")), int(v.Int("ll_every")), v.Bool("check")
	jc.output, jc.top = v.String("output"), int(v.Int("top_words"))
	text := TextOptions{PerFile: v.String("documents") == "file", StopWords: v.Bool("stopwords"), MinCount: int(v.Int("min_count"))}
	c, err := OpenCorpus(v.String("corpus"), v.String("vocab"), text, jc.dev.Options.Threads)
	return c, jc, err
}

// Start implements workloads.Workload: it reads or generates the corpus,
// lays it out and prepares the device, so that a bad corpus or too little
// GPU memory fails before the experiment starts.
func (Workload) Start(ctx context.Context, v workloads.Values) (workloads.Job, error) {
	c, jc, err := readValues(v)
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
