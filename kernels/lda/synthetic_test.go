package lda

import (
	"math"
	"slices"
	"strings"
	"testing"
)

// A synthetic corpus depends on its parameters only, not on the number
// of threads; its shape follows them; its true topics are distributions.
func TestSyntheticIsDeterministicAndShaped(t *testing.T) {
	s := SyntheticPresets()["small"]
	a, err := s.Generate(1)
	if err != nil {
		t.Fatal(err)
	}
	b, err := s.Generate(3)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(a.Words, b.Words) || !slices.Equal(a.DocOff, b.DocOff) || !slices.Equal(a.Truth.Phi, b.Truth.Phi) {
		t.Fatal("the corpus depends on the number of threads")
	}
	s.Seed++
	c, err := s.Generate(2)
	if err != nil {
		t.Fatal(err)
	}
	if slices.Equal(a.Words[:1000], c.Words[:1000]) {
		t.Error("another seed gave the same corpus")
	}
	if a.Docs() != s.Docs || a.VocabSize() != s.Vocab {
		t.Errorf("%d documents and %d words, want %d and %d", a.Docs(), a.VocabSize(), s.Docs, s.Vocab)
	}
	mean := float64(a.Tokens()) / float64(a.Docs())
	if math.Abs(mean-s.DocLen) > 0.05*s.DocLen {
		t.Errorf("mean document length %.1f, want about %g", mean, s.DocLen)
	}
	v := s.Vocab
	for k := range s.Topics {
		sum := 0.0
		for _, p := range a.Truth.Phi[k*v : (k+1)*v] {
			sum += p
		}
		if math.Abs(sum-1) > 1e-9 {
			t.Errorf("true topic %d sums to %g", k, sum)
		}
	}
	// The Zipf base measure makes low word ids frequent.
	n := a.WordCounts()
	if !(n[0] > n[v/2]*5) {
		t.Errorf("word 0 has %d tokens, word %d %d: no long tail", n[0], v/2, n[v/2])
	}
}

func TestParseSynthetic(t *testing.T) {
	s, err := ParseSynthetic("synthetic:preset=nytimes,docs=1.5k,seed=0x10,zipf=0.8")
	if err != nil {
		t.Fatal(err)
	}
	want := SyntheticPresets()["nytimes"]
	want.Docs, want.Seed, want.Zipf = 1500, 16, 0.8
	if s != want {
		t.Errorf("got %+v, want %+v", s, want)
	}
	// The NYTimes preset is shaped like the UCI set: about 100 M tokens.
	ny := SyntheticPresets()["nytimes"]
	if tokens := float64(ny.Docs) * ny.DocLen; tokens < 99e6 || tokens > 100e6 {
		t.Errorf("nytimes preset: %.3g tokens expected", tokens)
	}
	for spec, want := range map[string]string{
		"synthetic:preset=huge":        `no preset "huge" (known: medium, nytimes, nytimes-tenth, small, tiny)`,
		"synthetic:docs=10,docs=3":     "docs given twice",
		"synthetic:docs":               `"docs" is not key=value`,
		"synthetic:colour=red":         `unknown key "colour"`,
		"synthetic:alpha=x":            `alpha="x" is not a number`,
		"synthetic:topics=0":           "0 topics",
		"synthetic:len=0.5":            "mean length 0.5",
		"synthetic:docs=4M,len=2000":   "under 3865470561 tokens",
		"synthetic:beta=-1":            "must be positive",
		"random:docs=1":                "not synthetic:",
		"synthetic:preset=tiny,vocab=": `vocab="" is not a number`,
	} {
		if _, err := ParseSynthetic(spec); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: error %v, want %q", spec, err, want)
		}
	}
}
