package w2v

import (
	"math"
	"slices"
	"testing"
)

func TestUnigramTableFollowsCountsToThe075(t *testing.T) {
	counts := []int64{1000, 100, 10, 1}
	tab := unigramTable(counts, 100000)
	got := make([]float64, len(counts))
	for _, w := range tab {
		got[w]++
	}
	var z float64
	for _, c := range counts {
		z += math.Pow(float64(c), 0.75)
	}
	for i, c := range counts {
		want := math.Pow(float64(c), 0.75) / z
		if math.Abs(got[i]/float64(len(tab))-want) > 1e-3 {
			t.Errorf("word %d (count %d): %.4f of the table, want %.4f", i, c, got[i]/float64(len(tab)), want)
		}
	}
}

func samplerFor(t *testing.T, counts map[string]int64, sentences [][]string, cfg Config, eos int64) (*sampler, *Corpus) {
	t.Helper()
	v := NewVocab(counts, 1, eos)
	var ids [][]int32
	for _, s := range sentences {
		var row []int32
		for _, w := range s {
			id, _ := v.ID(w)
			row = append(row, id)
		}
		ids = append(ids, row)
	}
	c, err := NewCorpus(v, ids, 4096)
	if err != nil {
		t.Fatal(err)
	}
	return newSampler(c, cfg), c
}

// Subsampling keeps a word of count c with word2vec's probability
// (sqrt(c/(s*T)) + 1) * s*T/c, and never drops a rare word.
func TestSubsamplingKeepsWord2vecsFraction(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Sample, cfg.TableSize = 1e-3, 1000
	counts := map[string]int64{"the": 50000, "rare": 10}
	var sent []string
	for i := 0; i < 1000; i++ {
		sent = append(sent, "the")
	}
	for i := 0; i < 10; i++ {
		sent = append(sent, "rare")
	}
	s, c := samplerFor(t, counts, [][]string{sent}, cfg, 0)
	the, _ := c.Vocab.ID("the")
	tok, neg := make([]int32, len(sent)), make([]int32, len(sent)*cfg.Negatives)
	kept, keptRare, total := 0, 0, 0
	for e := 0; e < 200; e++ {
		k := s.prepare(e, 0, c.Sentence(0), tok, neg)
		for _, w := range tok[:k] {
			if w == the {
				kept++
			} else {
				keptRare++
			}
		}
		total += 1000
	}
	st := 1e-3 * 50010.0
	want := (math.Sqrt(50000/st) + 1) * st / 50000
	if got := float64(kept) / float64(total); math.Abs(got-want) > 0.01 {
		t.Errorf("kept %.4f of \"the\", want %.4f", got, want)
	}
	if keptRare != 200*10 {
		t.Errorf("kept %d of 2000 rare tokens, want all", keptRare)
	}
}

// Negatives are never the centre word, never </s>, and come in n per kept
// token; the same (seed, epoch, sentence) draws the same.
func TestNegativesAvoidTheCentreAndEOS(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Sample, cfg.TableSize, cfg.Negatives = 0, 1000, 7
	counts := map[string]int64{"a": 100, "b": 1, "c": 1}
	sent := []string{"a", "a", "b", "a", "c", "a"}
	s, c := samplerFor(t, counts, [][]string{sent}, cfg, 50) // </s> is frequent: the table draws it often
	tok, neg := make([]int32, 6), make([]int32, 6*7)
	k := s.prepare(0, 0, c.Sentence(0), tok, neg)
	if k != 6 {
		t.Fatalf("kept %d of 6 tokens with subsampling off", k)
	}
	for p, w := range tok {
		for _, x := range neg[p*7 : p*7+7] {
			if x == w || x == 0 || int(x) >= c.Vocab.Size() {
				t.Errorf("position %d (word %d): negative %d", p, w, x)
			}
		}
	}
	tok2, neg2 := make([]int32, 6), make([]int32, 6*7)
	s.prepare(0, 0, c.Sentence(0), tok2, neg2)
	if !slices.Equal(neg, neg2) {
		t.Error("the same sentence drew different negatives")
	}
	s.prepare(1, 0, c.Sentence(0), tok2, neg2)
	if slices.Equal(neg, neg2) {
		t.Error("another epoch drew the same negatives")
	}
}

func TestLearningRateDecaysLinearly(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Alpha, cfg.Epochs = 0.1, 2
	counts := map[string]int64{"a": 30}
	var sents [][]string
	for i := 0; i < 3; i++ {
		sents = append(sents, []string{"a", "a", "a", "a", "a", "a", "a", "a", "a", "a"})
	}
	s, _ := samplerFor(t, counts, sents, cfg, 0)
	// T = 30 words per epoch, 60 in all: sentence i of epoch e starts
	// after 30e + 10i words.
	for _, c := range []struct {
		e, i int
		want float64
	}{{0, 0, 0.1}, {0, 1, 0.1 * (1 - 10.0/61)}, {1, 2, 0.1 * (1 - 50.0/61)}} {
		if got := s.alpha(c.e, c.i); math.Abs(float64(got)-c.want) > 1e-7 {
			t.Errorf("alpha(epoch %d, sentence %d) = %g, want %g", c.e, c.i, got, c.want)
		}
	}
	s.cfg.Epochs = 1
	s.counted = 1 << 40 // far past the end: the floor
	if got := s.alpha(3, 0); got != float32(0.1*1e-4) {
		t.Errorf("alpha past the end = %g, want the floor %g", got, 0.1*1e-4)
	}
}

// negativesOf draws exactly what negative does one draw at a time, where
// a draw hits the centre or </s> (and is redrawn) and where none does,
// for counts of negatives on both sides of its batch of 16.
func TestNegativesOfMatchesOneAtATime(t *testing.T) {
	for _, c := range []struct {
		name   string
		counts map[string]int64
		eos    int64
		n      int
	}{
		{"collisions and eos", map[string]int64{"a": 100, "b": 1, "c": 1}, 50, 7},
		{"wide vocabulary", map[string]int64{"a": 5, "b": 4, "c": 3, "d": 2, "e": 2, "f": 1, "g": 1}, 0, 5},
		{"more than a batch", map[string]int64{"a": 100, "b": 3, "c": 2}, 0, 20},
	} {
		cfg := DefaultConfig()
		cfg.Sample, cfg.TableSize, cfg.Negatives = 0, 1000, c.n
		s, _ := samplerFor(t, c.counts, [][]string{{"a"}}, cfg, c.eos)
		redrawn, plain := 0, 0
		for pos := int64(0); pos < 2000; pos++ {
			w := int32(pos % int64(s.vocab))
			r1, r2 := newStream(7, 1, pos), newStream(7, 1, pos)
			got, want := make([]int32, c.n), make([]int32, c.n)
			s.negativesOf(&r1, w, got)
			for j := range want {
				want[j] = s.negative(&r2, w)
			}
			if !slices.Equal(got, want) || r1 != r2 {
				t.Fatalf("%s: position %d, word %d: %v (stream %v), want %v (stream %v)", c.name, pos, w, got, r1, want, r2)
			}
			if r3 := newStream(7, 1, pos); func() bool {
				for range c.n {
					r3.next()
				}
				return r3 != r2
			}() {
				redrawn++
			} else {
				plain++
			}
		}
		if c.n <= 16 && (redrawn == 0 || plain == 0) {
			t.Errorf("%s: %d draws redrawn, %d not: the case does not reach both paths", c.name, redrawn, plain)
		}
	}
}
