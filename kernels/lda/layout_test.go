package lda

import (
	"slices"
	"strings"
	"testing"
)

// The layout relabels words by decreasing frequency, stores tokens
// word-major with their documents and corpus indices, inverts that into
// each document's token list, gives dense rows to words with more than K
// tokens, and cuts the work into units that cover every token once.
func TestLayout(t *testing.T) {
	c := synthetic(t, "tiny", func(s *Synthetic) { s.Zipf = 1.2; s.Vocab = 1500; s.Docs = 200 })
	for _, f := range []Format{Hybrid, AllDense, AllSparse} {
		k := 16
		l, err := newLayout(c, k, f)
		if err != nil {
			t.Fatal(err)
		}
		count := c.WordCounts()
		for w := 0; w < l.v; w++ {
			n := int(l.wordOff[w+1] - l.wordOff[w])
			if n != count[l.orig[w]] {
				t.Fatalf("%s: word %d (corpus %d) has %d tokens, the corpus %d", f, w, l.orig[w], n, count[l.orig[w]])
			}
			if w > 0 && n > int(l.wordOff[w]-l.wordOff[w-1]) {
				t.Fatalf("%s: word %d has more tokens than word %d", f, w, w-1)
			}
			dense := w < l.dense
			want := map[Format]bool{Hybrid: n > k, AllDense: n > 0, AllSparse: false}[f]
			if dense != want {
				t.Fatalf("%s: word %d with %d tokens dense=%v", f, w, n, dense)
			}
		}
		for p := range l.n {
			j := l.tokIdx[p]
			if l.docTok[j] != uint32(p) {
				t.Fatalf("%s: inverted index of corpus token %d is %d, not %d", f, j, l.docTok[j], p)
			}
			if d := l.tokDoc[p]; j < c.DocOff[d] || j >= c.DocOff[d+1] {
				t.Fatalf("%s: token %d is in document %d by the layout, not by the corpus", f, j, d)
			}
			if w := l.wordOf(uint32(p), 0, uint32(l.v-1)); l.orig[w] != c.Words[j] {
				t.Fatalf("%s: token %d is word %d by the layout, %d by the corpus", f, j, l.orig[w], c.Words[j])
			}
		}
		covered := make([]int, l.n)
		for list, units := range [][]uint32{l.denseUnits, l.mediumUnits} {
			for u := range len(units) / 3 {
				w, lo, hi := units[3*u], units[3*u+1], units[3*u+2]
				if lo < l.wordOff[w] || hi > l.wordOff[w+1] || hi-lo > DenseUnit || lo >= hi {
					t.Fatalf("%s: unit %d [%d, %d) is not inside word %d", f, u, lo, hi, w)
				}
				if medium := int(w) >= l.dense; medium != (list == 1) || (medium && int(w) >= l.medium) {
					t.Fatalf("%s: unit %d of word %d in the wrong list", f, u, w)
				}
				for p := lo; p < hi; p++ {
					covered[p]++
				}
			}
		}
		for w := l.dense; w < l.v; w++ {
			if n := int(l.wordOff[w+1] - l.wordOff[w]); (w < l.medium) != (n > mediumMin(k)) {
				t.Fatalf("%s: sparse word %d with %d tokens medium=%v", f, w, n, w < l.medium)
			}
		}
		for u := range l.nSparseUnits() {
			lo, hi, first, last := l.sparseUnits[4*u], l.sparseUnits[4*u+1], l.sparseUnits[4*u+2], l.sparseUnits[4*u+3]
			if l.wordOf(lo, 0, uint32(l.v-1)) != first || l.wordOf(hi-1, 0, uint32(l.v-1)) != last || hi-lo > SparseChunk {
				t.Fatalf("%s: sparse unit %d [%d, %d) has words %d..%d", f, u, lo, hi, first, last)
			}
			for p := lo; p < hi; p++ {
				covered[p]++
			}
		}
		if i := slices.IndexFunc(covered, func(n int) bool { return n != 1 }); i >= 0 {
			t.Fatalf("%s: token %d is in %d units", f, i, covered[i])
		}
		rows := len(l.smallDocs) + len(l.largeDocs)
		for d := range c.Docs() {
			if c.DocLen(d) == 0 {
				rows++
			}
		}
		if rows != c.Docs() {
			t.Errorf("%s: %d document rows planned for %d documents", f, rows, c.Docs())
		}
	}
}

// A very frequent word's tokens are spread over many units.
func TestLayoutSplitsLargeWords(t *testing.T) {
	c := &Corpus{Vocab: []string{"the", "rare"}, DocOff: []uint32{0, 10000, 10001}}
	c.Words = make([]uint32, 10001)
	c.Words[10000] = 1
	l, err := newLayout(c, 8, Hybrid)
	if err != nil {
		t.Fatal(err)
	}
	if l.dense != 1 || l.nDenseUnits() != 3 || l.nSparseUnits() != 1 {
		t.Errorf("%d dense words in %d units and %d sparse units, want 1 in 3 and 1", l.dense, l.nDenseUnits(), l.nSparseUnits())
	}
	if _, err := newLayout(&Corpus{Vocab: []string{"a"}, DocOff: []uint32{0, 0}}, 8, Hybrid); err == nil || !strings.Contains(err.Error(), "no tokens") {
		t.Errorf("empty corpus: %v", err)
	}
}

// The invariant check finds every kind of damage to the counts.
func TestCheckCountsCatchesCorruption(t *testing.T) {
	c := synthetic(t, "tiny", func(s *Synthetic) { s.Docs = 100; s.Zipf = 1 })
	cfg := DefaultConfig(8)
	for _, tc := range []struct {
		name   string
		damage func(e *cpuEngine)
		want   string
	}{
		{"T", func(e *cpuEngine) { e.c.t[3]++ }, "T sums to"},
		{"T and a column", func(e *cpuEngine) { e.c.t[3]++; e.c.t[4]-- }, "T[3]"},
		{"dense row", func(e *cpuEngine) { e.c.wd[2]++ }, "dense row of word 0"},
		{"sparse count", func(e *cpuEngine) { e.c.wCnt[0]++ }, "a recount gives"},
		{"sparse order", func(e *cpuEngine) {
			w := slices.IndexFunc(e.c.wLen, func(n uint32) bool { return n > 1 })
			base := e.l.wordOff[w] - e.l.sparseBase
			e.c.wTop[base], e.c.wTop[base+1] = e.c.wTop[base+1], e.c.wTop[base]
			e.c.wCnt[base], e.c.wCnt[base+1] = e.c.wCnt[base+1], e.c.wCnt[base]
		}, "not strictly increasing"},
		{"missing entry", func(e *cpuEngine) {
			w := slices.IndexFunc(e.c.wLen, func(n uint32) bool { return n > 1 })
			e.c.wLen[w]--
		}, "the row has"},
		{"document", func(e *cpuEngine) { e.c.dCnt[e.l.docOff[5]] += 2 }, "row of document 5"},
		{"topic", func(e *cpuEngine) { e.z[0] = 8 }, "outside [0, 8)"},
	} {
		e := newEngine(t, c, cfg, Options{Threads: 2})
		e.step()
		if err := checkCounts(e.l, e.c, e.z); err != nil {
			t.Fatal(err)
		}
		tc.damage(e)
		if err := checkCounts(e.l, e.c, e.z); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want an error with %q", tc.name, err, tc.want)
		}
	}
}
