package w2v

import (
	"math"
)

// lcg is word2vec's random generator: next = next*25214903917 + 11.
type lcg uint64

func (r *lcg) next() uint64 {
	*r = *r*25214903917 + 11
	return uint64(*r)
}

// mix64 is splitmix64's finaliser, to seed a sentence's generator from
// (seed, epoch, sentence) so that any worker can prepare any sentence and
// get the same draws.
func mix64(z uint64) uint64 {
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

func sentenceSeed(seed uint64, epoch, sentence int) lcg {
	return lcg(mix64(seed ^ mix64(uint64(epoch)+0x9e3779b97f4a7c15) ^ mix64(uint64(sentence)*0xd1b54a32d192ed03+1)))
}

// sampler draws what the host decides for each sentence: which tokens
// subsampling keeps, the negatives, the learning rate. It is read-only
// once built, so every worker shares one.
type sampler struct {
	cfg     Config
	keep    []float64 // per word: word2vec's ran; a token is kept when ran >= u
	table   []int32   // the unigram^0.75 table
	vocab   int
	eos     bool    // word 0 is </s>: a draw of it becomes a uniform other word
	cum     []int64 // words counted before each sentence (the learning rate's progress)
	counted int64   // words an epoch counts
}

// newSampler prepares c's draws under cfg.
func newSampler(c *Corpus, cfg Config) *sampler {
	v := c.Vocab
	s := &sampler{cfg: cfg, vocab: v.Size(), eos: v.EOS}
	if cfg.Sample > 0 {
		st := cfg.Sample * float64(v.TrainWords())
		s.keep = make([]float64, v.Size())
		for i, n := range v.Counts {
			cn := float64(max(n, 1))
			s.keep[i] = (math.Sqrt(cn/st) + 1) * st / cn
		}
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

// prepare draws sentence i of epoch e: its kept tokens go to tok and their
// negatives (n per kept token) to neg, both long enough for every raw
// token; it returns the number kept.
func (s *sampler) prepare(e, i int, raw, tok, neg []int32) int {
	r := sentenceSeed(s.cfg.Seed, e, i)
	k := 0
	if s.keep == nil {
		k = copy(tok, raw)
	} else {
		for _, w := range raw {
			if s.keep[w] < float64(r.next()&0xFFFF)/65536 {
				continue
			}
			tok[k] = w
			k++
		}
	}
	n := s.cfg.Negatives
	for p, w := range tok[:k] {
		for j := 0; j < n; j++ {
			neg[p*n+j] = s.negative(&r, w)
		}
	}
	return k
}

// negative draws a negative for centre word w from the table; a draw of
// </s> becomes a uniform other word (as in word2vec), and a draw of w
// itself is redrawn, up to 16 times, then replaced by a uniform word
// other than w.
func (s *sampler) negative(r *lcg, w int32) int32 {
	for try := 0; try < 16; try++ {
		x := r.next()
		t := s.table[(x>>16)%uint64(len(s.table))]
		if s.eos && t == 0 && s.vocab > 1 {
			t = int32(x%uint64(s.vocab-1)) + 1
		}
		if t != w {
			return t
		}
	}
	if s.vocab < 2 {
		return w
	}
	return (w + 1 + int32(r.next()%uint64(s.vocab-1))) % int32(s.vocab)
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
