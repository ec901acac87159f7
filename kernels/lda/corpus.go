package lda

import (
	"fmt"
	"math"
	"strings"
)

// Corpus is a bag-of-words corpus: documents of word tokens, in document
// order. A token's index in Words is its identity: the sampler's random
// draws are keyed by it, whatever order an engine visits tokens in.
type Corpus struct {
	// Vocab names word ids; len(Vocab) is the vocabulary size V, which
	// enters the model through V·β even for words that never occur.
	Vocab []string
	// DocOff has one entry more than there are documents: document d's
	// tokens are Words[DocOff[d]:DocOff[d+1]].
	DocOff []uint32
	Words  []uint32
	// Truth, for a synthetic corpus, is the model that generated it.
	Truth *Truth
}

// Limits of a corpus. Token and document indices are uint32 on the CPU
// and the GPU.
const (
	MaxTokens = math.MaxUint32 - 1
	MaxDocs   = 1 << 30
	MaxVocab  = 1 << 28
	// MaxDocLen bounds a document's length so that a token's integer
	// weights cannot overflow (see the package comment).
	MaxDocLen = 1 << 30
)

// Docs is the number of documents.
func (c *Corpus) Docs() int { return len(c.DocOff) - 1 }

// Tokens is the number of tokens.
func (c *Corpus) Tokens() int { return len(c.Words) }

// VocabSize is V.
func (c *Corpus) VocabSize() int { return len(c.Vocab) }

// DocLen is document d's length.
func (c *Corpus) DocLen(d int) int { return int(c.DocOff[d+1] - c.DocOff[d]) }

// Validate checks the corpus's structure: offsets that cover Words in
// order, word ids inside the vocabulary, and the limits.
func (c *Corpus) Validate() error {
	switch {
	case len(c.DocOff) == 0:
		return fmt.Errorf("corpus: no document offsets")
	case c.Docs() > MaxDocs:
		return fmt.Errorf("corpus: %d documents, above the limit of %d", c.Docs(), MaxDocs)
	case len(c.Words) > MaxTokens:
		return fmt.Errorf("corpus: %d tokens, above the limit of %d", len(c.Words), MaxTokens)
	case len(c.Vocab) == 0:
		return fmt.Errorf("corpus: empty vocabulary")
	case len(c.Vocab) > MaxVocab:
		return fmt.Errorf("corpus: vocabulary of %d words, above the limit of %d", len(c.Vocab), MaxVocab)
	case c.DocOff[0] != 0 || int(c.DocOff[len(c.DocOff)-1]) != len(c.Words):
		return fmt.Errorf("corpus: document offsets span [%d, %d), want [0, %d)", c.DocOff[0], c.DocOff[len(c.DocOff)-1], len(c.Words))
	}
	for d := 0; d < c.Docs(); d++ {
		if c.DocOff[d+1] < c.DocOff[d] {
			return fmt.Errorf("corpus: document %d ends before it starts", d)
		}
		if c.DocLen(d) > MaxDocLen {
			return fmt.Errorf("corpus: document %d has %d tokens, above the limit of %d", d, c.DocLen(d), MaxDocLen)
		}
	}
	v := uint32(len(c.Vocab))
	for i, w := range c.Words {
		if w >= v {
			return fmt.Errorf("corpus: token %d is word %d, outside the vocabulary of %d", i, w, v)
		}
	}
	return nil
}

// WordCounts is each word's number of tokens.
func (c *Corpus) WordCounts() []int {
	n := make([]int, len(c.Vocab))
	for _, w := range c.Words {
		n[w]++
	}
	return n
}

// Describe is a one-line summary: "1,234 documents, 5,678 words, 90,123 tokens".
func (c *Corpus) Describe() string {
	return fmt.Sprintf("%s documents, %s words, %s tokens", thousands(c.Docs()), thousands(len(c.Vocab)), thousands(len(c.Words)))
}

func thousands(n int) string {
	s := fmt.Sprint(n)
	var b strings.Builder
	for i, r := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// idVocab names words by their 1-based id, for corpora without a
// vocabulary file.
func idVocab(v int) []string {
	out := make([]string, v)
	for i := range out {
		out[i] = fmt.Sprintf("w%d", i+1)
	}
	return out
}
