package lda

import (
	"fmt"
	"testing"
)

func synthetic(t testing.TB, preset string, edit func(*Synthetic)) *Corpus {
	t.Helper()
	s := SyntheticPresets()[preset]
	if edit != nil {
		edit(&s)
	}
	c, err := s.Generate(2)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// canonical returns an engine's topics in corpus order.
func canonical(l *layout, z []uint32) []uint32 {
	out := make([]uint32, len(z))
	for j, p := range l.docTok {
		out[j] = z[p]
	}
	return out
}

func newEngine(t testing.TB, c *Corpus, cfg Config, opt Options) *cpuEngine {
	t.Helper()
	l, err := newLayout(c, cfg.Topics, opt.Format)
	if err != nil {
		t.Fatal(err)
	}
	e := newCPUEngine(cfg, opt, l)
	e.initialise()
	return e
}

// Every engine variant (two- and three-branch; dense, hybrid and sparse
// word-topic rows; static and balanced schedules) draws exactly the plain
// O(K) sampler's topics, token for token, iteration after iteration, and
// its counts keep every invariant after every iteration.
func TestVariantsMatchThePlainSampler(t *testing.T) {
	// A corpus with a long tail: words with more tokens than K (dense
	// rows, split over units when DenseUnit is exceeded) and rare ones.
	c := synthetic(t, "tiny", func(s *Synthetic) { s.Zipf = 1.1; s.Vocab = 2000; s.Docs = 300; s.DocLen = 40 })
	// And a corpus with empty documents, a one-token document, a word
	// that never occurs and one that fills a document.
	edge := &Corpus{Vocab: []string{"a", "b", "c", "unused", "e"}, DocOff: []uint32{0, 0, 1, 1, 41, 47, 47}}
	edge.Words = []uint32{4}
	for i := range 40 {
		edge.Words = append(edge.Words, uint32(i%3))
	}
	edge.Words = append(edge.Words, 0, 0, 0, 0, 0, 0)
	for _, tc := range []struct {
		c *Corpus
		k int
	}{{c, 8}, {c, 61}, {edge, 2}, {edge, 50}} {
		c, k := tc.c, tc.k
		cfg := DefaultConfig(k)
		cfg.Seed = 7
		var variants []Options
		for _, f := range []Format{Hybrid, AllDense, AllSparse} {
			for _, two := range []bool{false, true} {
				for _, static := range []bool{false, true} {
					variants = append(variants, Options{Format: f, TwoBranch: two, Static: static, Threads: 3})
				}
			}
		}
		plain := newPlainSampler(cfg, c)
		engines := make([]*cpuEngine, len(variants))
		for i, opt := range variants {
			engines[i] = newEngine(t, c, cfg, opt)
		}
		shortcuts := map[bool]int64{}
		for it := 1; it <= 6; it++ {
			plain.step()
			for _, e := range engines {
				name := fmt.Sprintf("K=%d %s two-branch=%v static=%v iteration %d", k, e.opt.Format, e.opt.TwoBranch, e.opt.Static, it)
				n := e.step().shortcuts
				if err := checkCounts(e.l, e.c, e.z); err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				got := canonical(e.l, e.z)
				for j := range got {
					if got[j] != plain.z[j] {
						t.Fatalf("%s: token %d took topic %d, the plain sampler %d", name, j, got[j], plain.z[j])
					}
				}
				if e.opt.TwoBranch && n != 0 {
					t.Errorf("%s: the two-branch sampler took %d shortcuts", name, n)
				}
				if !e.opt.TwoBranch && it == 6 {
					shortcuts[e.opt.Format == Hybrid] = n
				}
			}
		}
		t.Logf("K=%d: %d of %d tokens took the max-topic shortcut in iteration 6", k, shortcuts[true], c.Tokens())
		if shortcuts[true] == 0 && c.Tokens() > 1000 {
			t.Errorf("K=%d: no token took the shortcut", k)
		}
	}
}
