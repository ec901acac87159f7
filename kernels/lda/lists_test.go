package lda

import (
	"fmt"
	"os"
	"testing"
)

// listShare is what one of the sampler's lists (dense, medium and small
// words: lda_sample_dense twice, then lda_sample_sparse) holds: where an
// iteration's sampling time can go is bounded by these, so the profile
// of bench/kernels-profile.sh is read against them.
type listShare struct {
	name                 string
	words, tokens, units int
	// same is the tokens with the word and document of the token before
	// them, which reuse its document pass on the GPU.
	same int
}

// listShares is the three lists of layout l.
func listShares(l *layout) [numLists]listShare {
	bounds := [numLists + 1]int{0, l.dense, l.medium, l.v}
	units := [numLists]int{l.nDenseUnits(), l.nMediumUnits(), l.nSparseUnits()}
	var s [numLists]listShare
	for li := range numLists {
		s[li] = listShare{name: [numLists]string{"dense", "medium", "small"}[li], words: bounds[li+1] - bounds[li], units: units[li]}
		for w := bounds[li]; w < bounds[li+1]; w++ {
			s[li].tokens += int(l.wordOff[w+1] - l.wordOff[w])
			for p := l.wordOff[w] + 1; p < l.wordOff[w+1]; p++ {
				if l.tokDoc[p] == l.tokDoc[p-1] {
					s[li].same++
				}
			}
		}
	}
	return s
}

// printListShares prints each list's words, tokens (and their share),
// units and tokens that reuse the document pass.
func printListShares(l *layout) {
	for _, s := range listShares(l) {
		fmt.Printf("  %-6s words %7d, tokens %11d (%5.1f %%), units %6d, reusing the previous token's document pass %5.1f %%\n",
			s.name, s.words, s.tokens, 100*float64(s.tokens)/float64(max(l.n, 1)), s.units, 100*float64(s.same)/float64(max(s.tokens, 1)))
	}
}

// The three lists cut the vocabulary by frequency (dense: more than K
// tokens; medium: more than mediumMin(K); small: the rest) and hold every
// token once. With LDA_LISTS_CORPUS (e.g. synthetic:preset=nytimes) the
// test prints that corpus' lists at LDA_BENCH_K (1024), without a GPU.
func TestListSharesCutTheVocabularyByFrequency(t *testing.T) {
	c := synthetic(t, "tiny", func(s *Synthetic) { s.Zipf = 1.2; s.Vocab = 1500; s.Docs = 200 })
	k := 128
	l, err := newLayout(c, k, Hybrid)
	if err != nil {
		t.Fatal(err)
	}
	s := listShares(l)
	words, tokens := 0, 0
	for li, x := range s {
		if x.words == 0 {
			t.Fatalf("list %s is empty at K=%d: the fixture no longer exercises it", x.name, k)
		}
		if x.same > x.tokens {
			t.Errorf("list %s: %d tokens reuse a document pass, of %d", x.name, x.same, x.tokens)
		}
		lo, hi := words, words+x.words
		for w := lo; w < hi; w++ {
			n := int(l.wordOff[w+1] - l.wordOff[w])
			if got := []bool{n > k, n <= k && n > mediumMin(k), n <= mediumMin(k)}[li]; !got {
				t.Fatalf("word %d with %d tokens is in list %s at K=%d", w, n, x.name, k)
			}
		}
		words, tokens = hi, tokens+x.tokens
	}
	if words != l.v || tokens != l.n {
		t.Fatalf("the lists hold %d words and %d tokens, the layout %d and %d", words, tokens, l.v, l.n)
	}
	if s[listDense].units != l.nDenseUnits() || s[listSparse].units != l.nSparseUnits() {
		t.Fatalf("units %d, %d, %d; the layout's %d, %d, %d", s[0].units, s[1].units, s[2].units, l.nDenseUnits(), l.nMediumUnits(), l.nSparseUnits())
	}

	spec := os.Getenv("LDA_LISTS_CORPUS")
	if spec == "" {
		return
	}
	c, err = OpenCorpus(spec, "", TextOptions{}, 0)
	if err != nil {
		t.Fatal(err)
	}
	k = 1024
	if v := os.Getenv("LDA_BENCH_K"); v != "" {
		if _, err := fmt.Sscan(v, &k); err != nil {
			t.Fatalf("LDA_BENCH_K=%q: %v", v, err)
		}
	}
	if l, err = newLayout(c, k, Hybrid); err != nil {
		t.Fatal(err)
	}
	fmt.Printf("corpus %s (%s), K=%d, the sampler's lists:\n", spec, c.Describe(), k)
	printListShares(l)
}
