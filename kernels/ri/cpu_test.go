package ri

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
)

// The brute-force reference: the package comment's definition written as
// plainly as possible, document by document, with dense index vectors,
// float64 sums and no slicing, plans or occurrence lists.

type bruteModel struct {
	terms map[string]int
	ints  [][]int64     // pass-one term vectors
	final [][]float64   // after retraining and normalisation
	steps [][][]float64 // retraining passes' vectors
}

// splitDocs tokenises text with the package's tokenizer (tested on its own)
// into documents of term strings.
func splitDocs(t *testing.T, text string) [][]string {
	t.Helper()
	tk := NewTokenizer(strings.NewReader(text), Lines)
	var docs [][]string
	for {
		doc, err := tk.Next()
		if err != nil {
			break
		}
		var d []string
		for _, tok := range doc {
			d = append(d, string(tok))
		}
		docs = append(docs, d)
	}
	return docs
}

func denseIndex(key uint64, cfg Config) []int64 {
	e := make([]int32, cfg.Nonzeros)
	indexVector(key, cfg.Seed, cfg.Dim, e)
	v := make([]int64, cfg.Dim)
	for _, x := range e {
		if x >= 0 {
			v[x]++
		} else {
			v[-x-1]--
		}
	}
	return v
}

func mod(a, d int) int { return ((a % d) + d) % d }

func bruteForce(docs [][]string, cfg Config) bruteModel {
	m := bruteModel{terms: map[string]int{}}
	var vocab []string
	for _, doc := range docs {
		for _, w := range doc {
			if _, ok := m.terms[w]; !ok {
				m.terms[w] = len(vocab)
				vocab = append(vocab, w)
			}
		}
	}
	V, d := len(vocab), cfg.Dim
	m.ints = make([][]int64, V)
	for i := range m.ints {
		m.ints[i] = make([]int64, d)
	}
	// contexts(doc, i) lists (context row, rotation) pairs for token i.
	type ctxRef struct{ doc, pos, shift int }
	contexts := func(di, i int) []ctxRef {
		var out []ctxRef
		if cfg.Contexts == Document {
			return []ctxRef{{di, -1, 0}}
		}
		for j := range docs[di] {
			o := j - i
			if o == 0 || o < -cfg.Window || o > cfg.Window {
				continue
			}
			s := 0
			if cfg.Permute {
				s = mod(o, d)
			}
			out = append(out, ctxRef{di, j, s})
		}
		return out
	}
	for di, doc := range docs {
		for i, w := range doc {
			t := m.terms[w]
			for _, c := range contexts(di, i) {
				var iv []int64
				if c.pos < 0 {
					iv = denseIndex(DocKey(c.doc), cfg)
				} else {
					iv = denseIndex(TermKey(docs[c.doc][c.pos]), cfg)
				}
				for e := 0; e < d; e++ {
					m.ints[t][(e+c.shift)%d] += iv[e]
				}
			}
		}
	}
	unit := func(x []float64) []float64 {
		var s float64
		for _, v := range x {
			s += v * v
		}
		out := make([]float64, len(x))
		if s == 0 {
			return out
		}
		for i, v := range x {
			out[i] = v / math.Sqrt(s)
		}
		return out
	}
	prev := make([][]float64, V)
	for t := range prev {
		prev[t] = make([]float64, d)
		for e, v := range m.ints[t] {
			prev[t][e] = float64(v)
		}
	}
	for r := 0; r < cfg.Retrain; r++ {
		seeds := make([][]float64, V)
		for t := range seeds {
			seeds[t] = unit(prev[t])
		}
		next := make([][]float64, V)
		for t := range next {
			next[t] = make([]float64, d)
		}
		var docVec [][]float64
		if cfg.Contexts == Document {
			for _, doc := range docs {
				dv := make([]float64, d)
				for _, w := range doc {
					for e := range dv {
						dv[e] += seeds[m.terms[w]][e]
					}
				}
				docVec = append(docVec, dv)
			}
		}
		for di, doc := range docs {
			for i, w := range doc {
				t := m.terms[w]
				for _, c := range contexts(di, i) {
					var src []float64
					if c.pos < 0 {
						src = docVec[c.doc]
					} else {
						src = seeds[m.terms[docs[c.doc][c.pos]]]
					}
					for e := 0; e < d; e++ {
						next[t][(e+c.shift)%d] += src[e]
					}
				}
			}
		}
		m.steps = append(m.steps, next)
		prev = next
	}
	m.final = prev
	if cfg.Normalise {
		for t := range m.final {
			m.final[t] = unit(m.final[t])
		}
	}
	return m
}

// relErr is ||a - b|| / ||b|| (0 when both are zero).
func relErr(a []float32, b []float64) float64 {
	var num, den float64
	for i := range b {
		x := float64(a[i]) - b[i]
		num += x * x
		den += b[i] * b[i]
	}
	if den == 0 {
		return math.Sqrt(num)
	}
	return math.Sqrt(num / den)
}

const smallText = `In the beginning God created the heaven and the earth.
And the earth was without form, and void; and darkness was upon the face of the deep.
And the Spirit of God moved upon the face of the waters.
And God said, Let there be light: and there was light.
And God saw the light, that it was good: and God divided the light from the darkness.
Amen.
And God called the light Day, and the darkness he called Night.
`

func trainCPU(t *testing.T, c *Corpus, cfg Config, threads int) (*Trainer, Stats) {
	t.Helper()
	tr, err := NewTrainer(context.Background(), c, cfg, CPU(threads))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tr.Close() })
	st, err := tr.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return tr, st
}

func TestCPUMatchesBruteForce(t *testing.T) {
	docs := splitDocs(t, smallText)
	c, err := ReadCorpus(strings.NewReader(smallText), Lines)
	if err != nil {
		t.Fatal(err)
	}
	base := Config{Dim: 64, Nonzeros: 4, Window: 2, Seed: 7, Slice: 1024}
	cases := []struct {
		name string
		edit func(*Config)
	}{
		{"window", func(c *Config) {}},
		{"window permuted", func(c *Config) { c.Permute = true }},
		{"wide window permuted", func(c *Config) { c.Permute = true; c.Window = 40 }},
		{"window wider than d", func(c *Config) { c.Permute = true; c.Window = 70 }},
		{"window retrained twice normalised", func(c *Config) { c.Permute = true; c.Retrain = 2; c.Normalise = true }},
		{"window sliced", func(c *Config) { c.Slice = 2; c.Retrain = 1; c.Normalise = true }},
		{"document", func(c *Config) { c.Contexts = Document }},
		{"document retrained sliced", func(c *Config) { c.Contexts = Document; c.Retrain = 2; c.Slice = 3; c.Normalise = true }},
		{"normalised only", func(c *Config) { c.Normalise = true }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg := base
			tc.edit(&cfg)
			want := bruteForce(docs, cfg)
			tr, _ := trainCPU(t, c, cfg, 3)
			ints, err := tr.TermVectors(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if len(want.terms) != c.Vocab() {
				t.Fatalf("vocabulary: %d terms, brute force %d", c.Vocab(), len(want.terms))
			}
			for id, term := range c.Terms {
				w := want.ints[want.terms[term]]
				got := ints[id*cfg.Dim : (id+1)*cfg.Dim]
				for e := range w {
					if int64(got[e]) != w[e] {
						t.Fatalf("term %q element %d: %d, brute force %d", term, e, got[e], w[e])
					}
				}
			}
			vecs, err := tr.Vectors(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			for id, term := range c.Terms {
				w := want.final[want.terms[term]]
				if e := relErr(vecs[id*cfg.Dim:(id+1)*cfg.Dim], w); e > 1e-6 {
					t.Errorf("term %q: final vector off by %.3g relative to the brute force", term, e)
				}
			}
		})
	}
}

// A window stops at its half-width and at the edge of a document, and with
// permutation each neighbour is rotated by its offset.
func TestWindowEdgesAndDocumentBoundaries(t *testing.T) {
	cfg := Config{Dim: 32, Nonzeros: 3, Window: 2, Seed: 3, Slice: 8}
	iv := func(term string) []int32 {
		e := make([]int32, cfg.Nonzeros)
		indexVector(TermKey(term), cfg.Seed, cfg.Dim, e)
		return Dense(e, 0, cfg.Nonzeros, cfg.Dim)
	}
	rot := func(v []int32, s int) []int32 {
		out := make([]int32, len(v))
		for i := range v {
			out[mod(i+s, len(v))] = v[i]
		}
		return out
	}
	sum := func(vs ...[]int32) []int32 {
		out := make([]int32, cfg.Dim)
		for _, v := range vs {
			for i := range v {
				out[i] += v[i]
			}
		}
		return out
	}
	cases := []struct {
		name    string
		text    string
		permute bool
		want    map[string][]int32
	}{
		{"edges of one document", "a b c d e f\n", false, map[string][]int32{
			"a": sum(iv("b"), iv("c")),
			"c": sum(iv("a"), iv("b"), iv("d"), iv("e")),
			"f": sum(iv("d"), iv("e")),
		}},
		{"document boundary", "a b c\nd e f\n", false, map[string][]int32{
			"c": sum(iv("a"), iv("b")),
			"d": sum(iv("e"), iv("f")),
		}},
		{"one-token document has no context", "a\nb c\n", false, map[string][]int32{
			"a": sum(),
			"b": iv("c"),
		}},
		{"permuted", "a b c d e\n", true, map[string][]int32{
			"a": sum(rot(iv("b"), 1), rot(iv("c"), 2)),
			"c": sum(rot(iv("a"), -2), rot(iv("b"), -1), rot(iv("d"), 1), rot(iv("e"), 2)),
		}},
		{"repeated term sums its occurrences", "x y x\n", false, map[string][]int32{
			"x": sum(iv("y"), iv("x"), iv("y"), iv("x")),
			"y": sum(iv("x"), iv("x")),
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, err := ReadCorpus(strings.NewReader(tc.text), Lines)
			if err != nil {
				t.Fatal(err)
			}
			cfg := cfg
			cfg.Permute = tc.permute
			tr, _ := trainCPU(t, c, cfg, 2)
			ints, err := tr.TermVectors(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			ids := c.Lookup()
			for term, want := range tc.want {
				id := int(ids[term])
				if got := ints[id*cfg.Dim : (id+1)*cfg.Dim]; !slices.Equal(got, want) {
					t.Errorf("%q: %v\nwant %v", term, got, want)
				}
			}
		})
	}
}

// Document contexts add the index vector of every document a term occurs
// in, once per occurrence, and nothing from other documents.
func TestDocumentContexts(t *testing.T) {
	cfg := Config{Dim: 32, Nonzeros: 3, Contexts: Document, Seed: 5, Slice: 8}
	c, err := ReadCorpus(strings.NewReader("a b a\nb c\nc\n"), Lines)
	if err != nil {
		t.Fatal(err)
	}
	tr, _ := trainCPU(t, c, cfg, 2)
	ints, _ := tr.TermVectors(context.Background())
	dv := func(j int) []int32 {
		e := make([]int32, cfg.Nonzeros)
		indexVector(DocKey(j), cfg.Seed, cfg.Dim, e)
		return Dense(e, 0, cfg.Nonzeros, cfg.Dim)
	}
	want := map[string][][]int32{"a": {dv(0), dv(0)}, "b": {dv(0), dv(1)}, "c": {dv(1), dv(2)}}
	ids := c.Lookup()
	for term, parts := range want {
		w := make([]int32, cfg.Dim)
		for _, p := range parts {
			for i := range p {
				w[i] += p[i]
			}
		}
		id := int(ids[term])
		if got := ints[id*cfg.Dim : (id+1)*cfg.Dim]; !slices.Equal(got, w) {
			t.Errorf("%q: %v\nwant %v", term, got, w)
		}
	}
}

// The result does not depend on how many goroutines compute it: term
// vectors, retrained and normalised vectors are identical to the bit.
func TestDeterministicAcrossThreads(t *testing.T) {
	c, err := Zipf{Tokens: 20000, Vocab: 500, S: 1.1, DocLen: 50, Seed: 9}.Generate(3)
	if err != nil {
		t.Fatal(err)
	}
	for _, ctx := range []Contexts{Window, Document} {
		cfg := Config{Dim: 128, Nonzeros: 6, Window: 3, Permute: true, Contexts: ctx, Retrain: 1, Normalise: true, Seed: 2, Slice: 64}
		var first []float32
		var firstInts []int32
		for _, threads := range []int{1, 2, 5, 16} {
			tr, _ := trainCPU(t, c, cfg, threads)
			ints, _ := tr.TermVectors(context.Background())
			vecs, _ := tr.Vectors(context.Background())
			if first == nil {
				first, firstInts = slices.Clone(vecs), slices.Clone(ints)
				continue
			}
			if !slices.Equal(ints, firstInts) {
				t.Errorf("%v: term vectors with %d goroutines differ from 1", ctx, threads)
			}
			if !slices.Equal(vecs, first) {
				t.Errorf("%v: vectors with %d goroutines differ from 1", ctx, threads)
			}
		}
	}
}

// Slicing changes the floating-point order but never the integer term
// vectors, and the retrained vectors only within rounding.
func TestSliceLength(t *testing.T) {
	c, err := Zipf{Tokens: 5000, Vocab: 200, S: 1, DocLen: 40, Seed: 4}.Generate(2)
	if err != nil {
		t.Fatal(err)
	}
	cfg := Config{Dim: 96, Nonzeros: 5, Window: 4, Permute: true, Retrain: 1, Normalise: true, Seed: 8}
	var refInts []int32
	var refVecs []float32
	for _, slice := range []int{1 << 20, 1, 7, 100} {
		cfg.Slice = slice
		tr, _ := trainCPU(t, c, cfg, 2)
		ints, _ := tr.TermVectors(context.Background())
		vecs, _ := tr.Vectors(context.Background())
		if refInts == nil {
			refInts, refVecs = slices.Clone(ints), slices.Clone(vecs)
			continue
		}
		if !slices.Equal(ints, refInts) {
			t.Errorf("slice %d: term vectors differ", slice)
		}
		for id := 0; id < c.Vocab(); id++ {
			want := make([]float64, cfg.Dim)
			for e := range want {
				want[e] = float64(refVecs[id*cfg.Dim+e])
			}
			if e := relErr(vecs[id*cfg.Dim:(id+1)*cfg.Dim], want); e > 1e-6 {
				t.Errorf("slice %d: term %q off by %.3g", slice, c.Terms[id], e)
			}
		}
	}
}

// The row-sum check catches a corrupted term vector.
func TestCheckCatchesCorruption(t *testing.T) {
	c, err := ReadCorpus(strings.NewReader(smallText), Lines)
	if err != nil {
		t.Fatal(err)
	}
	tr, _ := trainCPU(t, c, Config{Dim: 64, Nonzeros: 4, Window: 2, Seed: 1, Slice: 4}, 2)
	if err := tr.check(context.Background()); err != nil {
		t.Fatalf("intact vectors: %v", err)
	}
	tr.eng.(*cpuEngine).ints[5*64+3]++
	err = tr.check(context.Background())
	if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("%q", c.Terms[5])) {
		t.Fatalf("corrupted term %q: check said %v", c.Terms[5], err)
	}
}

// Normalised vectors have unit length, zero vectors stay zero, and the lane
// order is the documented one.
func TestNormalise(t *testing.T) {
	x := make([]int32, 1000)
	var want float64
	for i := range x {
		x[i] = int32(i*7919%201) - 100
		want += float64(x[i]) * float64(x[i])
	}
	dst := make([]float32, len(x))
	unitInts(dst, x)
	var n float64
	for i, v := range dst {
		n += float64(v) * float64(v)
		if w := float64(x[i]) / math.Sqrt(want); math.Abs(float64(v)-w) > 1e-7*math.Abs(w)+1e-12 {
			t.Fatalf("element %d: %g, want %g", i, v, w)
		}
	}
	if math.Abs(n-1) > 1e-6 {
		t.Errorf("squared norm %g, want 1", n)
	}
	zero := make([]float32, 10)
	unitFloats(zero, make([]float32, 10))
	for _, v := range zero {
		if v != 0 || math.Signbit(float64(v)) {
			t.Fatalf("zero vector became %v", zero)
		}
	}
}

func TestConfigValidate(t *testing.T) {
	good := DefaultConfig()
	if err := good.Validate(); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		edit func(*Config)
		want string
	}{
		{func(c *Config) { c.Dim = 1 }, "dimension"},
		{func(c *Config) { c.Nonzeros = 0 }, "nonzeros"},
		{func(c *Config) { c.Dim, c.Nonzeros = 16, 9 }, "nonzeros"},
		{func(c *Config) { c.Window = 0 }, "window"},
		{func(c *Config) { c.Retrain = -1 }, "retrain"},
		{func(c *Config) { c.Slice = 0 }, "slice"},
	} {
		c := good
		tc.edit(&c)
		if err := c.Validate(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: error %v, want one naming %s", c, err, tc.want)
		}
	}
	// Document contexts ignore the window.
	c := good
	c.Contexts, c.Window = Document, 0
	if err := c.Validate(); err != nil {
		t.Errorf("document contexts with window 0: %v", err)
	}
}
