package w2v

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/heatsink-hpc/heatsink/workloads"
)

// cpuChunk is the sentences a CPU worker takes at a time: the workers take
// chunks in corpus order, so the learning rate of each sentence (set by its
// position) follows the progress of training as word2vec's shared word
// count does.
const cpuChunk = 16

// cpuEngine trains on goroutines sharing one model without locks (Hogwild).
type cpuEngine struct {
	t       *Trainer
	m       *model
	threads int
}

func newCPUEngine(t *Trainer) *cpuEngine {
	return &cpuEngine{t: t, threads: t.dev.threads(),
		m: &model{dim: t.cfg.Dim, lay: t.lay, table: newExpTable(), fresh: t.cfg.Fresh, hs: t.hs, wombat: t.cfg.Wombat()}}
}

func (g *cpuEngine) name() string {
	what := "sgns"
	switch {
	case g.m.wombat && g.m.hs != nil:
		what = "wombat sghs"
	case g.m.wombat:
		what = "wombat sgns"
	case g.m.hs != nil:
		what = "sghs"
	}
	if g.threads == 1 {
		return fmt.Sprintf("cpu %s (1 goroutine, deterministic)", what)
	}
	return fmt.Sprintf("cpu %s (%d goroutines, Hogwild)", what, g.threads)
}

func (g *cpuEngine) reset(syn0, syn1 []float32) error {
	g.m.syn0, g.m.syn1 = syn0, syn1
	return nil
}

func (g *cpuEngine) vectors(context.Context) ([]float32, error) {
	return append([]float32(nil), g.m.syn0...), nil
}

func (g *cpuEngine) close() error { return nil }

func (g *cpuEngine) epoch(ctx context.Context, e int) (epochStats, error) {
	t := g.t
	c, s := t.c, t.s
	n, wf := s.negatives(), t.cfg.WindowFixed()
	longest := 0
	for i := 0; i < c.Sentences(); i++ {
		longest = max(longest, len(c.Sentence(i)))
	}
	var next, kept atomic.Int64
	errs := make([]error, g.threads)
	var wg sync.WaitGroup
	for w := 0; w < g.threads; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			// Each worker pauses at its own Checkpoint: the job has
			// stopped once all of them wait there.
			defer workloads.Worker(ctx)()
			sc := g.m.newScratch(n, wf)
			tok, neg := make([]int32, longest), make([]int32, longest*n)
			var k int64
			defer func() { kept.Add(k) }()
			for {
				lo := int(next.Add(cpuChunk)) - cpuChunk
				if lo >= c.Sentences() {
					return
				}
				if err := workloads.Checkpoint(ctx); err != nil {
					errs[w] = err
					return
				}
				for i := lo; i < min(lo+cpuChunk, c.Sentences()); i++ {
					L := s.prepare(e, c.starts[i], c.Sentence(i), tok, neg)
					g.m.train(tok[:L], neg[:L*n], n, wf, s.alpha(e, i), sc)
					k += int64(L)
				}
			}
		}(w)
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return epochStats{}, err
		}
	}
	return epochStats{kept: kept.Load()}, nil
}

// scratch is one worker's working memory, for whichever trainer the
// model runs.
type scratch struct {
	sgns   *sentenceScratch
	hs     *hsScratch
	wombat *wombatScratch
}

func (m *model) newScratch(n, wf int) scratch {
	switch {
	case m.wombat:
		return scratch{wombat: newWombatScratch(m.dim, wf, m.wombatOutputs(n))}
	case m.hs != nil:
		return scratch{hs: newHSScratch(m.dim)}
	}
	return scratch{sgns: newSentenceScratch(m.dim, wf)}
}

// train trains one sentence with the model's objective and kernel: Wombat's
// batches, word2vec's SGHS, or FULL-W2V's SGNS.
func (m *model) train(toks, negs []int32, n, wf int, alpha float32, sc scratch) {
	switch {
	case m.wombat:
		m.trainSentenceWombat(toks, negs, n, wf, alpha, sc.wombat)
	case m.hs != nil:
		m.trainSentenceHS(toks, wf, alpha, sc.hs)
	default:
		m.trainSentence(toks, negs, n, wf, alpha, sc.sgns)
	}
}

// trainBatch trains a batch's sentences one after another: what the GPU
// computes when it runs them one at a time.
func (m *model) trainBatch(b *batch, n, wf int) {
	sc := newSentenceScratch(m.dim, wf)
	for i := 0; i < b.sentences(); i++ {
		toks, negs := b.sentence(i, n)
		m.trainSentence(toks, negs, n, wf, b.alphas[i], sc)
	}
}
