package w2v

import (
	"math"
)

// lcg is word2vec's random generator: next = next*25214903917 + 11. It
// seeds the initial weights; the sampler draws from Philox (philox.go).
type lcg uint64

func (r *lcg) next() uint64 {
	*r = *r*25214903917 + 11
	return uint64(*r)
}

// sampler draws what is random in each sentence: which tokens
// subsampling keeps and the negatives, from each token's Philox stream
// (philox.go), and sets the learning rate. It is read-only once built, so
// every worker shares one; the GPU gets its tables and draws the same.
type sampler struct {
	cfg Config
	// keep is, per word, the threshold of a kept token: it is kept when the
	// first word of its stream is below it (2^32: always).
	keep    []uint64
	table   []int32 // the unigram^0.75 table
	vocab   int
	eos     bool    // word 0 is </s>: a draw of it becomes a uniform other word
	cum     []int64 // words counted before each sentence (the learning rate's progress)
	counted int64   // words an epoch counts
}

// newSampler prepares c's draws under cfg.
func newSampler(c *Corpus, cfg Config) *sampler {
	v := c.Vocab
	s := &sampler{cfg: cfg, vocab: v.Size(), eos: v.EOS, keep: make([]uint64, v.Size())}
	st := cfg.Sample * float64(v.TrainWords())
	for i, n := range v.Counts {
		// word2vec keeps a token of a word of count c with probability
		// (sqrt(c/(s*T)) + 1) * s*T/c.
		p := 1.0
		if cfg.Sample > 0 {
			cn := float64(max(n, 1))
			p = min(1, (math.Sqrt(cn/st)+1)*st/cn)
		}
		s.keep[i] = uint64(p * (1 << 32))
	}
	s.table = unigramTable(v.Counts, cfg.TableSize)
	s.cum = make([]int64, c.Sentences()+1)
	for i := 0; i < c.Sentences(); i++ {
		s.cum[i+1] = s.cum[i] + c.Counted(i)
	}
	s.counted = s.cum[c.Sentences()]
	return s
}

// unigramTable is word2vec's InitUnigramTable: word i fills a share of the
// table proportional to count^0.75.
func unigramTable(counts []int64, size int) []int32 {
	t := make([]int32, size)
	if len(counts) == 0 {
		return t
	}
	var total float64
	for _, c := range counts {
		total += math.Pow(float64(c), 0.75)
	}
	i := 0
	d1 := math.Pow(float64(counts[0]), 0.75) / total
	for a := range t {
		t[a] = int32(i)
		if float64(a)/float64(size) > d1 {
			i++
			if i < len(counts) {
				d1 += math.Pow(float64(counts[i]), 0.75) / total
			}
		}
		if i >= len(counts) {
			i = len(counts) - 1
		}
	}
	return t
}

// negatives is the negatives drawn per kept token: N, or none for
// hierarchical softmax (whose stream then gives only the subsampling draw,
// so both objectives keep the same tokens).
func (s *sampler) negatives() int {
	if s.cfg.HS() {
		return 0
	}
	return s.cfg.Negatives
}

// negativeTries is how many draws a negative may take before the
// fallback (W2V_NEG_TRIES in w2v.cu).
const negativeTries = 16

// prepare draws a sentence of epoch e whose raw tokens raw start at corpus
// position pos: its kept tokens go to tok and their negatives (n per kept
// token) to neg, both long enough for every raw token; it returns the
// number kept. Each token's stream gives its subsampling draw, then its
// negatives', so a token's draws do not depend on the others'.
func (s *sampler) prepare(e int, pos int64, raw, tok, neg []int32) int {
	n := s.negatives()
	k := 0
	for i, w := range raw {
		r := newStream(s.cfg.Seed, e, pos+int64(i))
		if uint64(r.next()) >= s.keep[w] {
			continue
		}
		tok[k] = w
		s.negativesOf(&r, w, neg[k*n:k*n+n])
		k++
	}
	return k
}

// prepareForDevice is prepare for a GPU that draws the negatives itself
// (w2v.cu's wombat_negatives): it makes only the subsampling draws, and
// writes in each kept token's first negative slot its corpus position
// less base, from which the device restarts the token's stream and draws
// what negativesOf would (the other slots get 0). The host then never
// reads the unigram table, whose reads missed every cache and bound
// Wombat's words/s. pos - base + len(raw) must fit in an int32.
func (s *sampler) prepareForDevice(e int, pos, base int64, raw, tok, neg []int32) int {
	n := s.negatives()
	k := 0
	for i, w := range raw {
		// A word always kept (threshold 2^32) needs no draw: its stream's
		// first word is below it whatever it is.
		if s.keep[w] < 1<<32 {
			r := newStream(s.cfg.Seed, e, pos+int64(i))
			if uint64(r.next()) >= s.keep[w] {
				continue
			}
		}
		tok[k] = w
		if n > 0 {
			d := neg[k*n : k*n+n]
			clear(d)
			d[0] = int32(pos + int64(i) - base)
		}
		k++
	}
	return k
}

// negative draws a negative for centre word w from the table; a draw of
// </s> becomes a uniform other word (as in word2vec), and a draw of w
// itself is redrawn, up to negativeTries times, then replaced by a uniform
// word other than w.
func (s *sampler) negative(r *stream, w int32) int32 {
	for try := 0; try < negativeTries; try++ {
		t := s.table[scale(r.next(), len(s.table))]
		if s.eos && t == 0 && s.vocab > 1 {
			t = int32(scale(r.next(), s.vocab-1)) + 1
		}
		if t != w {
			return t
		}
	}
	if s.vocab < 2 {
		return w
	}
	return (w + 1 + int32(scale(r.next(), s.vocab-1))) % int32(s.vocab)
}

// negativesOf draws len(dst) negatives for w as negative does, one after
// another. The unigram table is too large for the caches, so the draws'
// table reads are issued together first, on the guess that none needs a
// redraw (the table's reads then overlap); where one would, the draws are
// made again one by one from the same stream position: the same numbers.
func (s *sampler) negativesOf(r *stream, w int32, dst []int32) {
	const most = 16
	if len(dst) > most {
		for j := range dst {
			dst[j] = s.negative(r, w)
		}
		return
	}
	start := *r
	var at [most]uint32
	for j := range dst {
		at[j] = scale(r.next(), len(s.table))
	}
	for j := range dst {
		dst[j] = s.table[at[j]]
	}
	for _, t := range dst {
		if t == w || s.eos && t == 0 && s.vocab > 1 {
			*r = start
			for j := range dst {
				dst[j] = s.negative(r, w)
			}
			return
		}
	}
}

// alpha is the learning rate of sentence i in epoch e: word2vec's linear
// decay over the words counted before it, floored at 1e-4 of the start.
func (s *sampler) alpha(e, i int) float32 {
	done := float64(e)*float64(s.counted) + float64(s.cum[i])
	a := s.cfg.Alpha * (1 - done/(float64(s.cfg.Epochs)*float64(s.counted)+1))
	return float32(max(a, s.cfg.Alpha*1e-4))
}

// initWeights fills syn0 as word2vec does, from its generator started at
// seed: ((next & 0xFFFF)/65536 - 0.5)/d, row by row; syn1neg starts at zero.
func initWeights(syn0, syn1 []float32, dim int, seed uint64) {
	r := lcg(seed)
	for i := range syn0 {
		syn0[i] = float32((float64(r.next()&0xFFFF)/65536 - 0.5) / float64(dim))
	}
	clear(syn1)
}
