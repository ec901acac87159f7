package lda

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
)

// Synthetic describes a corpus sampled from LDA's generative process, so
// that what a sampler learns can be compared with the topics that made
// the corpus:
//
//	for each topic k:     φ_k ~ Dirichlet(Beta·V·p), p(v) ∝ (v+1)^-Zipf
//	for each document d:  L_d ~ max(1, round(Gamma(2, DocLen/2)))
//	                      θ_d ~ Dirichlet(Alpha, ..., Alpha)
//	                      each token: z ~ θ_d, word ~ φ_z
//
// The Zipf base measure gives word frequencies the long tail of real text
// (word 0 is the most frequent), which is what the hybrid word-topic
// format is for. Every random choice comes from a PCG stream keyed by the
// seed and what it is for (a topic, a document), so a corpus is the same
// whatever the number of threads.
type Synthetic struct {
	Docs, Vocab, Topics int
	DocLen              float64 // mean document length
	Alpha, Beta, Zipf   float64
	Seed                uint64
}

// Truth is the model a synthetic corpus was sampled from.
type Truth struct {
	Topics int
	// Phi is topic k's word distribution at Phi[k*V : (k+1)*V].
	Phi []float64
}

// SyntheticPrefix starts a synthetic corpus parameter:
// synthetic:preset=NAME[,docs=D][,vocab=V][,topics=K][,len=L][,alpha=A][,beta=B][,zipf=S][,seed=X].
const SyntheticPrefix = "synthetic:"

// SyntheticPresets are named corpora: tiny and small for tests, medium for
// convergence checks, nytimes shaped like the UCI NYTimes set EZLDA was
// measured on (299,752 documents, 102,660 words, 99.5 M tokens, 332
// tokens a document), and nytimes-tenth, a tenth of its documents.
func SyntheticPresets() map[string]Synthetic {
	nyt := Synthetic{Docs: 299_752, Vocab: 102_660, Topics: 100, DocLen: 332.1, Alpha: 0.1, Beta: 0.01, Zipf: 1, Seed: 1}
	tenth := nyt
	tenth.Docs /= 10
	return map[string]Synthetic{
		"tiny":          {Docs: 400, Vocab: 300, Topics: 5, DocLen: 60, Alpha: 0.2, Beta: 0.05, Zipf: 0, Seed: 1},
		"small":         {Docs: 2000, Vocab: 2000, Topics: 20, DocLen: 100, Alpha: 0.1, Beta: 0.02, Zipf: 0.5, Seed: 1},
		"medium":        {Docs: 20_000, Vocab: 20_000, Topics: 50, DocLen: 100, Alpha: 0.1, Beta: 0.01, Zipf: 1, Seed: 1},
		"nytimes":       nyt,
		"nytimes-tenth": tenth,
	}
}

// ParseSynthetic reads a synthetic: parameter. Numbers may end in k or M.
func ParseSynthetic(spec string) (Synthetic, error) {
	rest, ok := strings.CutPrefix(spec, SyntheticPrefix)
	if !ok {
		return Synthetic{}, fmt.Errorf("corpus %q: not %s...", spec, SyntheticPrefix)
	}
	s := SyntheticPresets()["small"]
	kv := map[string]string{}
	for _, part := range strings.Split(rest, ",") {
		if part == "" {
			continue
		}
		k, v, ok := strings.Cut(part, "=")
		if !ok {
			return s, fmt.Errorf("corpus %q: %q is not key=value", spec, part)
		}
		if _, dup := kv[k]; dup {
			return s, fmt.Errorf("corpus %q: %s given twice", spec, k)
		}
		kv[k] = v
	}
	if name, ok := kv["preset"]; ok {
		p, ok := SyntheticPresets()[name]
		if !ok {
			names := make([]string, 0)
			for n := range SyntheticPresets() {
				names = append(names, n)
			}
			sort.Strings(names)
			return s, fmt.Errorf("corpus %q: no preset %q (known: %s)", spec, name, strings.Join(names, ", "))
		}
		s = p
		delete(kv, "preset")
	}
	for k, v := range kv {
		var err error
		switch k {
		case "docs":
			s.Docs, err = parseCount(v)
		case "vocab":
			s.Vocab, err = parseCount(v)
		case "topics":
			s.Topics, err = parseCount(v)
		case "len":
			s.DocLen, err = strconv.ParseFloat(v, 64)
		case "alpha":
			s.Alpha, err = strconv.ParseFloat(v, 64)
		case "beta":
			s.Beta, err = strconv.ParseFloat(v, 64)
		case "zipf":
			s.Zipf, err = strconv.ParseFloat(v, 64)
		case "seed":
			s.Seed, err = strconv.ParseUint(v, 0, 64)
		default:
			return s, fmt.Errorf("corpus %q: unknown key %q (preset, docs, vocab, topics, len, alpha, beta, zipf, seed)", spec, k)
		}
		if err != nil {
			return s, fmt.Errorf("corpus %q: %s=%q is not a number", spec, k, v)
		}
	}
	return s, s.Validate()
}

func parseCount(s string) (int, error) {
	mult := 1
	switch {
	case strings.HasSuffix(s, "k"):
		mult, s = 1000, strings.TrimSuffix(s, "k")
	case strings.HasSuffix(s, "M"):
		mult, s = 1_000_000, strings.TrimSuffix(s, "M")
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || f < 0 || f*float64(mult) > math.MaxInt32 {
		return 0, fmt.Errorf("bad count %q", s)
	}
	return int(f * float64(mult)), nil
}

// Validate checks the parameters' ranges.
func (s Synthetic) Validate() error {
	switch {
	case s.Docs < 1 || s.Docs > MaxDocs:
		return fmt.Errorf("synthetic corpus: %d documents, want 1 to %d", s.Docs, MaxDocs)
	case s.Vocab < 1 || s.Vocab > 1<<24:
		return fmt.Errorf("synthetic corpus: %d words, want 1 to %d", s.Vocab, 1<<24)
	case s.Topics < 1 || s.Topics > 4096:
		return fmt.Errorf("synthetic corpus: %d topics, want 1 to 4096", s.Topics)
	case !(s.DocLen >= 1) || float64(s.Docs)*s.DocLen > MaxTokens/10*9:
		return fmt.Errorf("synthetic corpus: mean length %g: want at least 1, and under %d tokens in all", s.DocLen, MaxTokens/10*9)
	case !(s.Alpha > 0) || !(s.Beta > 0) || !(s.Zipf >= 0) || math.IsInf(s.Alpha+s.Beta+s.Zipf, 0):
		return fmt.Errorf("synthetic corpus: alpha %g, beta %g and zipf %g must be positive (zipf may be 0)", s.Alpha, s.Beta, s.Zipf)
	}
	return nil
}

func (s Synthetic) rng(stream, i uint64) *rand.Rand {
	return rand.New(rand.NewPCG(s.Seed, stream<<40|i))
}

// Generate samples the corpus with up to threads goroutines (0: one per
// core).
func (s Synthetic) Generate(threads int) (*Corpus, error) {
	if err := s.Validate(); err != nil {
		return nil, err
	}
	if threads <= 0 {
		threads = runtime.GOMAXPROCS(0)
	}
	v, kt := s.Vocab, s.Topics
	base := make([]float64, v)
	for w := range base {
		base[w] = math.Pow(float64(w+1), -s.Zipf)
	}
	norm := 0.0
	for _, b := range base {
		norm += b
	}
	truth := &Truth{Topics: kt, Phi: make([]float64, kt*v)}
	tables := make([]alias, kt)
	parallelFor(kt, threads, 1, func(k int) {
		r := s.rng(1, uint64(k))
		phi := truth.Phi[k*v : (k+1)*v]
		for w := range phi {
			phi[w] = logGamma(r, s.Beta*float64(v)*base[w]/norm)
		}
		expNormalise(phi)
		tables[k] = newAlias(phi)
	})
	// Lengths, then offsets.
	r := s.rng(2, 0)
	c := &Corpus{Vocab: idVocab(v), DocOff: make([]uint32, s.Docs+1), Truth: truth}
	total := 0
	for d := 0; d < s.Docs; d++ {
		l := max(1, int(math.Round(math.Exp(logGamma(r, 2))*s.DocLen/2)))
		l = min(l, MaxDocLen)
		if total+l > MaxTokens {
			return nil, fmt.Errorf("synthetic corpus: more than %d tokens", MaxTokens)
		}
		total += l
		c.DocOff[d+1] = uint32(total)
	}
	c.Words = make([]uint32, total)
	parallelFor(s.Docs, threads, 64, func(d int) {
		r := s.rng(3, uint64(d))
		cum := make([]float64, kt)
		for k := range cum {
			cum[k] = logGamma(r, s.Alpha)
		}
		expNormalise(cum)
		for k := 1; k < kt; k++ {
			cum[k] += cum[k-1]
		}
		for i := c.DocOff[d]; i < c.DocOff[d+1]; i++ {
			u := r.Float64() * cum[kt-1]
			z := min(sort.Search(kt, func(k int) bool { return cum[k] > u }), kt-1)
			c.Words[i] = tables[z].sample(r)
		}
	})
	return c, c.Validate()
}

// parallelFor runs f(0..n-1) on up to threads goroutines, handing out
// indices in blocks of block.
func parallelFor(n, threads, block int, f func(i int)) {
	var next atomic.Int64
	var wg sync.WaitGroup
	for t := 0; t < min(threads, (n+block-1)/block); t++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				lo := int(next.Add(int64(block))) - block
				if lo >= n {
					return
				}
				for i := lo; i < min(lo+block, n); i++ {
					f(i)
				}
			}
		}()
	}
	wg.Wait()
}

// logGamma draws the logarithm of a Gamma(a, 1) variate (Marsaglia and
// Tsang; for a < 1, G(a) = G(a+1)·U^(1/a)), in logarithms so that the tiny
// shapes of a Dirichlet over a large vocabulary do not underflow to zero
// before normalisation.
func logGamma(r *rand.Rand, a float64) float64 {
	if a < 1 {
		return logGamma(r, a+1) + math.Log(1-r.Float64())/a
	}
	d := a - 1.0/3
	c := 1 / math.Sqrt(9*d)
	for {
		x := r.NormFloat64()
		v := 1 + c*x
		if v <= 0 {
			continue
		}
		v = v * v * v
		u := 1 - r.Float64()
		if u < 1-0.0331*x*x*x*x || math.Log(u) < 0.5*x*x+d*(1-v+math.Log(v)) {
			return math.Log(d * v)
		}
	}
}

// expNormalise turns logarithms into a probability vector.
func expNormalise(x []float64) {
	m := math.Inf(-1)
	for _, v := range x {
		m = max(m, v)
	}
	sum := 0.0
	for i, v := range x {
		x[i] = math.Exp(v - m)
		sum += x[i]
	}
	for i := range x {
		x[i] /= sum
	}
}

// alias is Vose's alias table: O(1) draws from a discrete distribution.
type alias struct {
	prob  []float64
	alias []uint32
}

func newAlias(p []float64) alias {
	n := len(p)
	a := alias{prob: make([]float64, n), alias: make([]uint32, n)}
	var small, large []int
	scaled := make([]float64, n)
	for i, v := range p {
		scaled[i] = v * float64(n)
		if scaled[i] < 1 {
			small = append(small, i)
		} else {
			large = append(large, i)
		}
	}
	for len(small) > 0 && len(large) > 0 {
		s, l := small[len(small)-1], large[len(large)-1]
		small = small[:len(small)-1]
		a.prob[s], a.alias[s] = scaled[s], uint32(l)
		scaled[l] -= 1 - scaled[s]
		if scaled[l] < 1 {
			large = large[:len(large)-1]
			small = append(small, l)
		}
	}
	for _, i := range append(small, large...) {
		a.prob[i], a.alias[i] = 1, uint32(i)
	}
	return a
}

func (a alias) sample(r *rand.Rand) uint32 {
	i := r.IntN(len(a.prob))
	if r.Float64() < a.prob[i] {
		return uint32(i)
	}
	return a.alias[i]
}
