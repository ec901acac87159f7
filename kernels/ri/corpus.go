package ri

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"sort"
	"sync"
)

// Boundary marks the edges of documents in Corpus.Stream: one before the
// first document, one between each two, one after the last. A window stops
// at it, so no context crosses a document, and no scan needs a bounds check.
const Boundary int32 = -1

// MaxStream is the longest stream a corpus may have (tokens + documents +
// 1): positions are int32 on the CPU and the GPU.
const MaxStream = math.MaxInt32

// Corpus is a tokenised text: its vocabulary and its token stream.
type Corpus struct {
	// Terms[id] is term id's text. Ids run in descending count, ties in
	// byte order of the term, so they depend on the text alone.
	Terms []string
	// Counts[id] is how often term id occurs.
	Counts []int32
	// Stream is the text as term ids, documents separated by Boundary.
	Stream []int32
	// Bounds[j] is the position in Stream of the Boundary before document j
	// (Bounds[Docs()] the one after the last): document j is
	// Stream[Bounds[j]+1 : Bounds[j+1]].
	Bounds []int32
}

// Tokens is the number of tokens.
func (c *Corpus) Tokens() int { return len(c.Stream) - len(c.Bounds) }

// Docs is the number of documents.
func (c *Corpus) Docs() int { return len(c.Bounds) - 1 }

// Vocab is the number of distinct terms.
func (c *Corpus) Vocab() int { return len(c.Terms) }

// Lookup is a term-to-id map of the vocabulary.
func (c *Corpus) Lookup() map[string]int32 {
	m := make(map[string]int32, len(c.Terms))
	for i, t := range c.Terms {
		m[t] = int32(i)
	}
	return m
}

// LoadCorpus reads a plain-text corpus from path.
func LoadCorpus(path string, split Split) (*Corpus, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("corpus: %w", err)
	}
	defer f.Close()
	c, err := ReadCorpus(f, split)
	if err != nil {
		return nil, fmt.Errorf("corpus %s: %w", path, err)
	}
	return c, nil
}

// ReadCorpus tokenises plain text (see Tokenizer) into a corpus. Text with
// no token at all is an error: nothing could be trained from it.
func ReadCorpus(r io.Reader, split Split) (*Corpus, error) {
	tk := NewTokenizer(r, split)
	ids := map[string]int32{}
	var names []string
	stream := []int32{Boundary}
	docs := 0
	for {
		doc, err := tk.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		if len(stream)+len(doc)+1 > MaxStream {
			return nil, fmt.Errorf("more than %d tokens and documents: too large for int32 positions", MaxStream)
		}
		for _, tok := range doc {
			id, ok := ids[string(tok)]
			if !ok {
				id = int32(len(names))
				names = append(names, string(tok))
				ids[names[id]] = id
			}
			stream = append(stream, id)
		}
		stream = append(stream, Boundary)
		docs++
	}
	if docs == 0 {
		return nil, errors.New("no tokens: the text holds no letters or digits")
	}
	return newCorpus(names, stream, 1), nil
}

// newCorpus renumbers stream's provisional ids (indexes into names) by
// descending count, ties by term bytes, and finds the document bounds.
func newCorpus(names []string, stream []int32, threads int) *Corpus {
	counts := make([]int32, len(names))
	var bounds []int32
	for p, id := range stream {
		if id == Boundary {
			bounds = append(bounds, int32(p))
			continue
		}
		counts[id]++
	}
	order := make([]int32, len(names))
	for i := range order {
		order[i] = int32(i)
	}
	sort.Slice(order, func(a, b int) bool {
		ca, cb := counts[order[a]], counts[order[b]]
		if ca != cb {
			return ca > cb
		}
		return names[order[a]] < names[order[b]]
	})
	// Provisional ids never seen (a Zipf rank never drawn) sort last with
	// count 0 and are dropped.
	remap := make([]int32, len(names))
	c := &Corpus{Bounds: bounds}
	for newID, old := range order {
		remap[old] = int32(newID)
		if counts[old] > 0 {
			c.Terms = append(c.Terms, names[old])
			c.Counts = append(c.Counts, counts[old])
		}
	}
	parallel(len(stream), threads, func(_, lo, hi int) {
		for p := lo; p < hi; p++ {
			if id := stream[p]; id != Boundary {
				stream[p] = remap[id]
			}
		}
	})
	c.Stream = stream
	return c
}

// WriteText writes the corpus as plain text, one document a line, which
// ReadCorpus with Lines reads back as the same corpus.
func (c *Corpus) WriteText(w io.Writer) error {
	var buf bytes.Buffer
	for j := 0; j < c.Docs(); j++ {
		buf.Reset()
		for i, id := range c.Stream[c.Bounds[j]+1 : c.Bounds[j+1]] {
			if i > 0 {
				buf.WriteByte(' ')
			}
			buf.WriteString(c.Terms[id])
		}
		buf.WriteByte('\n')
		if _, err := w.Write(buf.Bytes()); err != nil {
			return err
		}
	}
	return nil
}

// occurrences are the corpus's occurrence lists: term t occurs at stream
// positions pos[start[t]:start[t+1]], in ascending order; doc, when built,
// holds the document of each of those occurrences.
type occurrences struct {
	start []int32
	pos   []int32
	doc   []int32
}

// buildOccurrences builds the occurrence lists (and, with docs, the
// document of each occurrence) with a parallel counting sort: each of
// threads chunks of the stream counts its terms, then fills its own share of
// every list, so the result does not depend on threads.
func buildOccurrences(c *Corpus, threads int, docs bool) occurrences {
	v := c.Vocab()
	chunks := chunkCount(len(c.Stream), threads)
	counts := make([][]int32, chunks)
	nbounds := make([]int32, chunks)
	parallel(len(c.Stream), chunks, func(ch, lo, hi int) {
		cnt := make([]int32, v)
		nb := int32(0)
		for _, id := range c.Stream[lo:hi] {
			if id == Boundary {
				nb++
				continue
			}
			cnt[id]++
		}
		counts[ch], nbounds[ch] = cnt, nb
	})
	o := occurrences{start: make([]int32, v+1), pos: make([]int32, c.Tokens())}
	for t := 0; t < v; t++ {
		o.start[t+1] = o.start[t] + c.Counts[t]
	}
	// Turn the per-chunk counts into each chunk's first slot in every list.
	for t := 0; t < v; t++ {
		next := o.start[t]
		for ch := range counts {
			n := counts[ch][t]
			counts[ch][t] = next
			next += n
		}
	}
	if docs {
		o.doc = make([]int32, c.Tokens())
	}
	firstDoc := make([]int32, chunks)
	for ch := 1; ch < chunks; ch++ {
		firstDoc[ch] = firstDoc[ch-1] + nbounds[ch-1]
	}
	parallel(len(c.Stream), chunks, func(ch, lo, hi int) {
		slot := counts[ch]
		doc := firstDoc[ch] - 1 // the Boundary at 0 opens document 0
		for p := lo; p < hi; p++ {
			id := c.Stream[p]
			if id == Boundary {
				doc++
				continue
			}
			i := slot[id]
			slot[id]++
			o.pos[i] = int32(p)
			if docs {
				o.doc[i] = doc
			}
		}
	})
	return o
}

// chunkCount is how many chunks parallel splits n items into for threads
// workers.
func chunkCount(n, threads int) int {
	return max(1, min(threads, n))
}

// parallel calls f(chunk, lo, hi) on chunks contiguous ranges covering
// [0, n), concurrently.
func parallel(n, chunks int, f func(ch, lo, hi int)) {
	chunks = chunkCount(n, chunks)
	if chunks == 1 {
		f(0, 0, n)
		return
	}
	var wg sync.WaitGroup
	for ch := 0; ch < chunks; ch++ {
		lo, hi := int(int64(n)*int64(ch)/int64(chunks)), int(int64(n)*int64(ch+1)/int64(chunks))
		wg.Add(1)
		go func() {
			defer wg.Done()
			f(ch, lo, hi)
		}()
	}
	wg.Wait()
}
