package ri

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Zipf describes a synthetic corpus for scale: Tokens tokens drawn
// independently from Vocab terms "w1", "w2", ... with P(rank r) proportional
// to 1/r^S, cut into documents of DocLen tokens (the last one shorter). The
// corpus depends only on these fields: token i is drawn from SplitMix64
// output i of the seed through Walker's alias table, so it is the same for
// any number of threads and on any machine.
type Zipf struct {
	Tokens int
	Vocab  int
	S      float64
	DocLen int
	Seed   uint64
}

// ZipfPrefix starts a synthetic corpus spec.
const ZipfPrefix = "zipf:"

// zipfSalt separates the corpus generator's stream from index vectors'.
const zipfSalt = 0x7a697066 // "zipf"

// ParseZipf reads a spec "zipf:tokens=100M,vocab=100k,s=1,doc=1000,seed=1";
// only tokens is required (defaults: vocab=100k, s=1, doc=1000, seed=1).
// Counts take the decimal suffixes k, M and G.
func ParseZipf(spec string) (Zipf, error) {
	z := Zipf{Vocab: 100000, S: 1, DocLen: 1000, Seed: 1}
	rest, ok := strings.CutPrefix(spec, ZipfPrefix)
	if !ok {
		return z, fmt.Errorf("synthetic corpus %q: want %skey=value,...", spec, ZipfPrefix)
	}
	seen := map[string]bool{}
	for _, kv := range strings.Split(rest, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(kv), "=")
		if !ok {
			return z, fmt.Errorf("synthetic corpus %q: %q is not key=value", spec, kv)
		}
		if seen[k] {
			return z, fmt.Errorf("synthetic corpus %q: %s given twice", spec, k)
		}
		seen[k] = true
		var err error
		switch k {
		case "tokens":
			z.Tokens, err = parseCount(v)
		case "vocab":
			z.Vocab, err = parseCount(v)
		case "doc":
			z.DocLen, err = parseCount(v)
		case "s":
			z.S, err = strconv.ParseFloat(v, 64)
		case "seed":
			z.Seed, err = strconv.ParseUint(v, 0, 64)
		default:
			return z, fmt.Errorf("synthetic corpus %q: unknown key %q (known: tokens, vocab, s, doc, seed)", spec, k)
		}
		if err != nil {
			return z, fmt.Errorf("synthetic corpus %q: %s=%q: %w", spec, k, v, err)
		}
	}
	if !seen["tokens"] {
		return z, fmt.Errorf("synthetic corpus %q: tokens= is required", spec)
	}
	if err := z.Validate(); err != nil {
		return z, fmt.Errorf("synthetic corpus %q: %w", spec, err)
	}
	return z, nil
}

// String is the spec ParseZipf reads back.
func (z Zipf) String() string {
	return fmt.Sprintf("%stokens=%d,vocab=%d,s=%g,doc=%d,seed=%d", ZipfPrefix, z.Tokens, z.Vocab, z.S, z.DocLen, z.Seed)
}

// Validate checks the fields' ranges.
func (z Zipf) Validate() error {
	switch {
	case z.Tokens < 1:
		return fmt.Errorf("tokens=%d: want at least 1", z.Tokens)
	case z.Vocab < 1 || z.Vocab > 1<<26:
		return fmt.Errorf("vocab=%d: want 1 to %d", z.Vocab, 1<<26)
	case !(z.S >= 0 && z.S <= 10):
		return fmt.Errorf("s=%g: want 0 to 10", z.S)
	case z.DocLen < 1:
		return fmt.Errorf("doc=%d: want at least 1", z.DocLen)
	}
	if n := int64(z.Tokens) + int64(z.docs()) + 1; n > MaxStream {
		return fmt.Errorf("tokens=%d: with its documents the stream would hold %d positions, above %d", z.Tokens, n, MaxStream)
	}
	return nil
}

func (z Zipf) docs() int { return (z.Tokens + z.DocLen - 1) / z.DocLen }

// parseCount reads a non-negative integer with an optional k, M or G
// (decimal) suffix.
func parseCount(s string) (int, error) {
	mult := 1
	switch {
	case strings.HasSuffix(s, "k"):
		mult, s = 1e3, strings.TrimSuffix(s, "k")
	case strings.HasSuffix(s, "M"):
		mult, s = 1e6, strings.TrimSuffix(s, "M")
	case strings.HasSuffix(s, "G"):
		mult, s = 1e9, strings.TrimSuffix(s, "G")
	}
	n, err := strconv.ParseUint(s, 10, 31)
	if err != nil {
		return 0, fmt.Errorf("not a count (e.g. 100M)")
	}
	if n > math.MaxInt32/uint64(mult) {
		return 0, fmt.Errorf("above %d", math.MaxInt32)
	}
	return int(n) * mult, nil
}

// aliasTable is Walker's alias method (Vose's construction, deterministic):
// column c is kept with probability keep[c]/2^32, else replaced by
// alias[c].
type aliasTable struct {
	keep  []uint64
	alias []int32
}

func newZipfAlias(v int, s float64) aliasTable {
	w := make([]float64, v)
	var sum float64
	for r := range w {
		w[r] = math.Pow(float64(r+1), -s)
		sum += w[r]
	}
	t := aliasTable{keep: make([]uint64, v), alias: make([]int32, v)}
	scaled := make([]float64, v)
	var small, large []int32
	for r := range w {
		scaled[r] = w[r] * float64(v) / sum
		if scaled[r] < 1 {
			small = append(small, int32(r))
		} else {
			large = append(large, int32(r))
		}
	}
	for len(small) > 0 && len(large) > 0 {
		l := small[len(small)-1]
		small = small[:len(small)-1]
		g := large[len(large)-1]
		t.keep[l] = uint64(scaled[l] * (1 << 32))
		t.alias[l] = g
		scaled[g] = (scaled[g] + scaled[l]) - 1
		if scaled[g] < 1 {
			large = large[:len(large)-1]
			small = append(small, g)
		}
	}
	// What is left has probability 1 up to rounding.
	for _, r := range append(small, large...) {
		t.keep[r] = 1 << 32
		t.alias[r] = r
	}
	return t
}

// Generate builds the corpus with threads goroutines.
func (z Zipf) Generate(threads int) (*Corpus, error) {
	if err := z.Validate(); err != nil {
		return nil, err
	}
	at := newZipfAlias(z.Vocab, z.S)
	docs := z.docs()
	stream := make([]int32, z.Tokens+docs+1)
	base := mix64(z.Seed ^ zipfSalt)
	v := uint64(z.Vocab)
	parallel(z.Tokens, threads, func(_, lo, hi int) {
		for i := lo; i < hi; i++ {
			r := mix64(base + uint64(i+1)*golden64)
			col := (r >> 32) * v >> 32
			id := int32(col)
			if r&0xffffffff >= at.keep[col] {
				id = at.alias[col]
			}
			stream[1+i+i/z.DocLen] = id
		}
	})
	for j := 0; j <= docs; j++ {
		stream[min(j*(z.DocLen+1), len(stream)-1)] = Boundary
	}
	names := make([]string, z.Vocab)
	for r := range names {
		names[r] = "w" + strconv.Itoa(r+1)
	}
	return newCorpus(names, stream, threads), nil
}
