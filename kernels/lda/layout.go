package lda

import (
	"fmt"
	"math"
	"slices"
)

// Format chooses which words get dense rows of the word-topic matrix.
type Format int

const (
	// Hybrid gives dense rows to words with more than K tokens (EZLDA's
	// rule) and sparse rows to the rest.
	Hybrid Format = iota
	// AllDense gives every word a dense row: the dense-W sampler, for
	// comparison.
	AllDense
	// AllSparse gives every word a sparse row.
	AllSparse
)

// ParseFormat reads hybrid, dense or sparse.
func ParseFormat(s string) (Format, error) {
	switch s {
	case "hybrid":
		return Hybrid, nil
	case "dense":
		return AllDense, nil
	case "sparse":
		return AllSparse, nil
	}
	return 0, fmt.Errorf("word-topic format %q: want hybrid, dense or sparse", s)
}

func (f Format) String() string { return [...]string{"hybrid", "dense", "sparse"}[f] }

// Work units (see the package comment).
const (
	DenseUnit   = 4096 // most tokens of one dense word a unit holds
	SparseChunk = 256  // tokens of sparse words a unit holds
	// smallRow is the longest row (document or sparse word) the GPU
	// rebuilds with one thread; longer rows take a block.
	smallRow = 32
)

// layout is a corpus laid out for sampling: words relabelled by
// frequency, tokens word-major, the inverted index, and the work units.
type layout struct {
	k, v, d, n int
	// orig[w] is the corpus id of word w (relabelled).
	orig []uint32
	// Word w's tokens are [wordOff[w], wordOff[w+1]) in word-major order.
	wordOff []uint32
	// Words [0, dense) have dense rows; sparseBase is wordOff[dense],
	// where the sparse words' tokens (and their rows' room) begin. Sparse
	// words [dense, medium) are medium, the rest small.
	dense, medium int
	sparseBase    uint32
	// Per word-major token: its document and its corpus index.
	tokDoc, tokIdx []uint32
	// docOff is the corpus's; docTok[j] is the word-major position of
	// corpus token j, so document d's tokens are docTok[docOff[d]:docOff[d+1]].
	docOff, docTok []uint32
	// denseUnits and mediumUnits: (word, lo, hi) triples; sparseUnits:
	// (lo, hi, first word, last word) quadruples over the small words; in
	// word-major token positions.
	denseUnits, mediumUnits, sparseUnits []uint32
	// Rows the rebuild handles per thread (small) or per block (large).
	smallDocs, largeDocs, smallWords, largeWords []uint32
	// Largest document, for the CPU's scratch space.
	maxDocLen int
}

func (l *layout) nDenseUnits() int  { return len(l.denseUnits) / 3 }
func (l *layout) nMediumUnits() int { return len(l.mediumUnits) / 3 }
func (l *layout) nSparseUnits() int { return len(l.sparseUnits) / 4 }

// newLayout lays c out for k topics.
func newLayout(c *Corpus, k int, f Format) (*layout, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	if c.Tokens() == 0 {
		return nil, fmt.Errorf("corpus has no tokens")
	}
	l := &layout{k: k, v: c.VocabSize(), d: c.Docs(), n: c.Tokens(), docOff: c.DocOff}
	count := c.WordCounts()
	l.orig = make([]uint32, l.v)
	for i := range l.orig {
		l.orig[i] = uint32(i)
	}
	// By decreasing count, then by id: a stable, total order.
	slices.SortStableFunc(l.orig, func(a, b uint32) int { return count[b] - count[a] })
	relab := make([]uint32, l.v)
	l.wordOff = make([]uint32, l.v+1)
	for w, o := range l.orig {
		relab[o] = uint32(w)
		l.wordOff[w+1] = l.wordOff[w] + uint32(count[o])
	}
	denseMin := k
	switch f {
	case AllDense:
		denseMin = 0
	case AllSparse:
		denseMin = math.MaxInt
	}
	for l.dense < l.v && count[l.orig[l.dense]] > denseMin {
		l.dense++
	}
	l.sparseBase = l.wordOff[l.dense]

	next := slices.Clone(l.wordOff[:l.v])
	l.tokDoc, l.tokIdx, l.docTok = make([]uint32, l.n), make([]uint32, l.n), make([]uint32, l.n)
	for d := 0; d < l.d; d++ {
		l.maxDocLen = max(l.maxDocLen, c.DocLen(d))
		for j := c.DocOff[d]; j < c.DocOff[d+1]; j++ {
			w := relab[c.Words[j]]
			p := next[w]
			next[w]++
			l.tokDoc[p], l.tokIdx[p], l.docTok[j] = uint32(d), j, p
		}
	}

	l.medium = l.dense
	for l.medium < l.v && count[l.orig[l.medium]] > mediumMin(k) {
		l.medium++
	}
	for w := 0; w < l.medium; w++ {
		for lo := l.wordOff[w]; lo < l.wordOff[w+1]; lo += DenseUnit {
			u := []uint32{uint32(w), lo, min(lo+DenseUnit, l.wordOff[w+1])}
			if w < l.dense {
				l.denseUnits = append(l.denseUnits, u...)
			} else {
				l.mediumUnits = append(l.mediumUnits, u...)
			}
		}
	}
	w := l.medium
	for lo := l.wordOff[l.medium]; lo < uint32(l.n); lo += SparseChunk {
		hi := min(lo+SparseChunk, uint32(l.n))
		for l.wordOff[w+1] <= lo {
			w++
		}
		last := w
		for l.wordOff[last+1] < hi {
			last++
		}
		l.sparseUnits = append(l.sparseUnits, lo, hi, uint32(w), uint32(last))
	}
	for d := 0; d < l.d; d++ {
		if n := c.DocLen(d); n > smallRow {
			l.largeDocs = append(l.largeDocs, uint32(d))
		} else if n > 0 {
			l.smallDocs = append(l.smallDocs, uint32(d))
		}
	}
	for w := l.dense; w < l.v; w++ {
		if n := l.wordOff[w+1] - l.wordOff[w]; n > smallRow {
			l.largeWords = append(l.largeWords, uint32(w))
		} else if n > 0 {
			l.smallWords = append(l.smallWords, uint32(w))
		}
	}
	return l, nil
}

// mediumMin is the most tokens a small word has at k topics. A sparse
// word with more is medium: it gets units of its own, and its row is
// expanded into K φ̂ values (in shared memory on the GPU) for them, so a
// token finds φ̂ of its document's topics at once; a small word's tokens
// are packed into chunks, and find φ̂ by merging the word's row (at most
// mediumMin entries) with the document's.
func mediumMin(k int) int { return max(smallRow, k/16) }

// wordOf is the word of word-major token p among words [lo, hi].
func (l *layout) wordOf(p uint32, lo, hi uint32) uint32 {
	for lo < hi {
		mid := (lo + hi + 1) / 2
		if l.wordOff[mid] <= p {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	return lo
}

// docLen is document d's length.
func (l *layout) docLen(d uint32) uint32 { return l.docOff[d+1] - l.docOff[d] }

// Bytes is what the layout's arrays take, for the memory comparison.
func (l *layout) bytes() int64 {
	return 4 * int64(len(l.wordOff)+len(l.tokDoc)+len(l.tokIdx)+len(l.docOff)+len(l.docTok)+
		len(l.denseUnits)+len(l.mediumUnits)+len(l.sparseUnits)+len(l.smallDocs)+len(l.largeDocs)+len(l.smallWords)+len(l.largeWords))
}
