package lda

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
)

// Entry is one nonzero count of a row of W or D.
type Entry struct{ Topic, Count uint32 }

// Model is a sampler's counts in the corpus's word and document ids: the
// trained model.
type Model struct {
	Config Config
	Vocab  []string
	// T[k] is topic k's number of tokens.
	T []uint32
	// Word v's nonzero counts, by topic: Words[WordOff[v]:WordOff[v+1]];
	// document d's: Docs[DocOff[d]:DocOff[d+1]].
	WordOff, DocOff []int
	Words, Docs     []Entry
}

func newModel(l *layout, cfg Config, corp *Corpus, c *counts) *Model {
	m := &Model{Config: cfg, Vocab: corp.Vocab, T: slices.Clone(c.t), WordOff: make([]int, l.v+1), DocOff: make([]int, l.d+1)}
	k := l.k
	rows := make([][]Entry, l.v)
	for w := 0; w < l.v; w++ {
		var row []Entry
		if w < l.dense {
			for t, n := range c.wd[w*k : (w+1)*k] {
				if n > 0 {
					row = append(row, Entry{uint32(t), n})
				}
			}
		} else {
			base := l.wordOff[w] - l.sparseBase
			for i := range c.wLen[w] {
				row = append(row, Entry{c.wTop[base+i], c.wCnt[base+i]})
			}
		}
		rows[l.orig[w]] = row
	}
	for v, row := range rows {
		m.Words = append(m.Words, row...)
		m.WordOff[v+1] = len(m.Words)
	}
	m.Docs = make([]Entry, 0, l.n)
	for d := 0; d < l.d; d++ {
		lo := l.docOff[d]
		for i := range c.dLen[d] {
			m.Docs = append(m.Docs, Entry{c.dTop[lo+i], c.dCnt[lo+i]})
		}
		m.DocOff[d+1] = len(m.Docs)
	}
	return m
}

// TopWords are each topic's n words with the most tokens, most first
// (ties by word id).
func (m *Model) TopWords(n int) [][]string {
	type wc struct{ w, c uint32 }
	byTopic := make([][]wc, len(m.T))
	for v := range m.Vocab {
		for _, e := range m.Words[m.WordOff[v]:m.WordOff[v+1]] {
			byTopic[e.Topic] = append(byTopic[e.Topic], wc{uint32(v), e.Count})
		}
	}
	out := make([][]string, len(m.T))
	for k, all := range byTopic {
		slices.SortStableFunc(all, func(a, b wc) int { return int(b.c) - int(a.c) })
		for _, x := range all[:min(n, len(all))] {
			out[k] = append(out[k], m.Vocab[x.w])
		}
	}
	return out
}

// WriteTopics writes one line per topic: its number, its share of the
// tokens and its n top words.
//
//	topic 3 (4.1% of tokens): lord israel king house
func (m *Model) WriteTopics(w io.Writer, n int) error {
	total := 0
	for _, t := range m.T {
		total += int(t)
	}
	top := m.TopWords(n)
	bw := bufio.NewWriter(w)
	for k := range m.T {
		fmt.Fprintf(bw, "topic %d (%.1f%% of tokens):", k, 100*float64(m.T[k])/float64(total))
		for _, word := range top[k] {
			fmt.Fprintf(bw, " %s", word)
		}
		fmt.Fprintln(bw)
	}
	return bw.Flush()
}

// WriteMatrixMarket writes W (rows words, in vocabulary order) or D (rows
// documents, in corpus order) as a Matrix Market coordinate matrix of
// integers: a header line, a comment, "rows columns nonzeros", then one
// "row column count" line per nonzero, 1-based, by row and then column
// (so row i of W is line i of the vocabulary file, and column k+1 is
// topic k).
func (m *Model) WriteMatrixMarket(w io.Writer, docs bool) error {
	off, ent, rows, what := m.WordOff, m.Words, len(m.Vocab), "word-topic counts W (rows: vocabulary lines; columns: topics 1..K)"
	if docs {
		off, ent, rows, what = m.DocOff, m.Docs, len(m.DocOff)-1, "document-topic counts D (rows: documents in corpus order; columns: topics 1..K)"
	}
	bw := bufio.NewWriterSize(w, 1<<20)
	fmt.Fprintf(bw, "%%%%MatrixMarket matrix coordinate integer general\n%% heatsink ezlda: %s\n%d %d %d\n", what, rows, len(m.T), len(ent))
	for r := 0; r < rows; r++ {
		for _, e := range ent[off[r]:off[r+1]] {
			fmt.Fprintf(bw, "%d %d %d\n", r+1, e.Topic+1, e.Count)
		}
	}
	return bw.Flush()
}

// Output files WriteDir writes.
const (
	TopicsFile     = "topics.txt"
	WordTopicFile  = "word_topic.mtx"
	DocTopicFile   = "doc_topic.mtx"
	VocabularyFile = "vocab.txt"
)

// WriteDir writes the model into dir: topics.txt (n top words a topic),
// word_topic.mtx and doc_topic.mtx (W and D, see WriteMatrixMarket) and
// vocab.txt (the vocabulary, one word a line, for W's rows).
func (m *Model) WriteDir(dir string, n int) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	write := func(name string, f func(io.Writer) error) error {
		path := filepath.Join(dir, name)
		out, err := os.Create(path)
		if err != nil {
			return err
		}
		if err := errors.Join(f(out), out.Close()); err != nil {
			return fmt.Errorf("write %s: %w", path, err)
		}
		return nil
	}
	return errors.Join(
		write(TopicsFile, func(w io.Writer) error { return m.WriteTopics(w, n) }),
		write(WordTopicFile, func(w io.Writer) error { return m.WriteMatrixMarket(w, false) }),
		write(DocTopicFile, func(w io.Writer) error { return m.WriteMatrixMarket(w, true) }),
		write(VocabularyFile, func(w io.Writer) error {
			bw := bufio.NewWriter(w)
			for _, v := range m.Vocab {
				fmt.Fprintln(bw, v)
			}
			return bw.Flush()
		}),
	)
}
