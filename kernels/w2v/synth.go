package w2v

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
)

// Synthetic corpus specs: "zipf:key=value,..." and "planted:key=value,...".
const (
	ZipfPrefix    = "zipf:"
	PlantedPrefix = "planted:"
)

// Text8 is text8's shape after word2vec's min-count of 5: 71,291 words and
// 16,718,844 training words (Mahoney's first 10^8 bytes of Wikipedia,
// cleaned), the corpus FULL-W2V reports its speed on.
const (
	Text8Words  = 71291
	Text8Tokens = 16718844
)

// specValues parses "prefix:k=v,k=v" into a map, rejecting unknown keys.
func specValues(spec, prefix string, known ...string) (map[string]string, error) {
	body := strings.TrimPrefix(spec, prefix)
	out := map[string]string{}
	if strings.TrimSpace(body) == "" {
		return out, nil
	}
	for _, kv := range strings.Split(body, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(kv), "=")
		if !ok || k == "" {
			return nil, fmt.Errorf("corpus %q: %q is not key=value", spec, kv)
		}
		if !slices.Contains(known, k) {
			return nil, fmt.Errorf("corpus %q: unknown key %q (known: %s)", spec, k, strings.Join(known, ", "))
		}
		if _, dup := out[k]; dup {
			return nil, fmt.Errorf("corpus %q: %s given twice", spec, k)
		}
		out[k] = v
	}
	return out, nil
}

// parseCount reads a count with an optional K, M or G (10^3, 10^6, 10^9)
// suffix: "16.7M", "500k".
func parseCount(s string) (int64, error) {
	mult := 1.0
	switch {
	case strings.HasSuffix(s, "k"), strings.HasSuffix(s, "K"):
		mult, s = 1e3, s[:len(s)-1]
	case strings.HasSuffix(s, "M"):
		mult, s = 1e6, s[:len(s)-1]
	case strings.HasSuffix(s, "G"):
		mult, s = 1e9, s[:len(s)-1]
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || f < 0 || f*mult > 1<<40 {
		return 0, fmt.Errorf("%q is not a count", s)
	}
	return int64(math.Round(f * mult)), nil
}

type specReader struct {
	spec string
	m    map[string]string
	err  error
}

func (r *specReader) count(key string, def, lo, hi int64) int64 {
	s, ok := r.m[key]
	if !ok || r.err != nil {
		return def
	}
	n, err := parseCount(s)
	if err == nil && (n < lo || n > hi) {
		err = fmt.Errorf("%d is outside %d to %d", n, lo, hi)
	}
	if err != nil {
		r.err = fmt.Errorf("corpus %q: %s: %w", r.spec, key, err)
	}
	return n
}

func (r *specReader) float(key string, def, lo, hi float64) float64 {
	s, ok := r.m[key]
	if !ok || r.err != nil {
		return def
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || !(f >= lo && f <= hi) {
		r.err = fmt.Errorf("corpus %q: %s=%s: want a number in [%g, %g]", r.spec, key, s, lo, hi)
	}
	return f
}

func (r *specReader) bool(key string) bool {
	s, ok := r.m[key]
	if !ok || r.err != nil {
		return false
	}
	b, err := strconv.ParseBool(s)
	if err != nil {
		r.err = fmt.Errorf("corpus %q: %s=%s: want true or false", r.spec, key, s)
	}
	return b
}

// Zipf is a synthetic corpus for throughput: Words words whose counts
// follow Zipf's law with exponent S (the count of the r-th word is
// proportional to r^-S, at least MinCount), Tokens tokens in all, in a
// random order (no structure to learn), as one stream cut into sentences
// of the maximum length, as text8 is. Its default is text8's shape.
type Zipf struct {
	Words, Tokens int64
	S             float64
	MinCount      int64
	Seed          uint64
}

// ParseZipf reads "zipf:words=W,tokens=T,s=S,seed=X" (each optional).
func ParseZipf(spec string) (Zipf, error) {
	m, err := specValues(spec, ZipfPrefix, "words", "tokens", "s", "seed")
	if err != nil {
		return Zipf{}, err
	}
	r := &specReader{spec: spec, m: m}
	z := Zipf{
		Words:    r.count("words", Text8Words, 2, 1<<26),
		Tokens:   r.count("tokens", Text8Tokens, 2, 1<<32),
		S:        r.float("s", 1, 0, 10),
		MinCount: 5,
		Seed:     uint64(r.count("seed", 1, 0, 1<<62)),
	}
	if r.err != nil {
		return Zipf{}, r.err
	}
	if z.Tokens < z.Words*z.MinCount {
		return Zipf{}, fmt.Errorf("corpus %q: %d tokens cannot give %d words %d occurrences each", spec, z.Tokens, z.Words, z.MinCount)
	}
	return z, nil
}

// counts are the words' exact counts: Zipf's expectation rounded, at least
// MinCount, the remainder given to or taken from the most frequent words.
func (z Zipf) counts() []int64 {
	c := make([]int64, z.Words)
	var h float64
	for r := int64(1); r <= z.Words; r++ {
		h += math.Pow(float64(r), -z.S)
	}
	var sum int64
	for r := range c {
		c[r] = max(z.MinCount, int64(math.Round(float64(z.Tokens)*math.Pow(float64(r+1), -z.S)/h)))
		sum += c[r]
	}
	for i := 0; sum != z.Tokens; i = (i + 1) % len(c) {
		switch {
		case sum < z.Tokens:
			c[i]++
			sum++
		case c[i] > z.MinCount:
			c[i]--
			sum--
		}
	}
	return c
}

// Generate makes the corpus: the words are "w1", "w2", ... by rank.
func (z Zipf) Generate(maxSentence int) *Corpus {
	counts := z.counts()
	m := make(map[string]int64, len(counts))
	for r, c := range counts {
		m["w"+strconv.Itoa(r+1)] = c
	}
	v := NewVocab(m, 1, 0)
	toks := make([]int32, 0, z.Tokens)
	for id := range v.Words {
		for n := v.Counts[id]; n > 0; n-- {
			toks = append(toks, int32(id))
		}
	}
	rng := rand.New(rand.NewPCG(z.Seed, 0x7a697066))
	rng.Shuffle(len(toks), func(i, j int) { toks[i], toks[j] = toks[j], toks[i] })
	c := &Corpus{Vocab: v, tokens: toks, starts: []int64{0}}
	for lo := 0; lo < len(toks); lo += maxSentence {
		hi := min(lo+maxSentence, len(toks))
		c.starts = append(c.starts, int64(hi))
		c.counted = append(c.counted, int32(hi-lo))
	}
	return c
}
