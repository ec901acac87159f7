package lda

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"os"
	"strconv"
	"unicode/utf8"
)

// The UCI bag-of-words format (archive.ics.uci.edu, "Bag of Words": the
// NYTimes, PubMed, Enron, KOS and NIPS sets), two files:
//
//	docword.NAME.txt   three header lines D (documents), W (words), NNZ
//	                   (lines that follow), then NNZ lines "docID wordID
//	                   count", 1-based, sorted by docID
//	vocab.NAME.txt     W lines: line i is word i
//
// Either file may be gzip-compressed (as the UCI distributes the large
// ones). The reader expands each line into count tokens of the word; a
// document that has no line is empty.

// Limits bounds what a corpus file may declare, so that a corrupt header
// cannot make a reader allocate without bound.
type Limits struct {
	Docs, Vocab, Tokens int
}

// DefaultLimits are the package's limits.
func DefaultLimits() Limits { return Limits{Docs: MaxDocs, Vocab: MaxVocab, Tokens: MaxTokens} }

// LoadUCI reads docword and vocab files (vocab "" names words w1, w2...).
func LoadUCI(docword, vocab string) (*Corpus, error) {
	var words []string
	if vocab != "" {
		f, err := openMaybeGzip(vocab)
		if err != nil {
			return nil, err
		}
		words, err = ReadVocab(f, vocab, DefaultLimits())
		f.Close()
		if err != nil {
			return nil, err
		}
	}
	f, err := openMaybeGzip(docword)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return ReadUCI(f, docword, words, DefaultLimits())
}

// openMaybeGzip opens path, decompressing it when it starts with gzip's
// magic number.
func openMaybeGzip(path string) (io.ReadCloser, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	br := bufio.NewReaderSize(f, 1<<20)
	magic, _ := br.Peek(2)
	if !bytes.Equal(magic, []byte{0x1f, 0x8b}) {
		return readCloser{br, f}, nil
	}
	zr, err := gzip.NewReader(br)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return readCloser{zr, f}, nil
}

type readCloser struct {
	io.Reader
	c io.Closer
}

func (r readCloser) Close() error { return r.c.Close() }

// lineReader reads lines of any length, counting them for error messages.
type lineReader struct {
	r    *bufio.Reader
	name string
	line int
	buf  []byte
}

func newLineReader(r io.Reader, name string) *lineReader {
	return &lineReader{r: bufio.NewReaderSize(r, 1<<16), name: name}
}

// next returns the next line without its end of line; io.EOF after the last.
func (lr *lineReader) next() ([]byte, error) {
	lr.buf = lr.buf[:0]
	for {
		chunk, err := lr.r.ReadSlice('\n')
		lr.buf = append(lr.buf, chunk...)
		if err == bufio.ErrBufferFull {
			continue
		}
		if err == io.EOF && len(lr.buf) > 0 {
			err = nil
		}
		if err != nil {
			if err != io.EOF {
				err = fmt.Errorf("%s: line %d: %w", lr.name, lr.line+1, err)
			}
			return nil, err
		}
		lr.line++
		b := bytes.TrimSuffix(lr.buf, []byte("\n"))
		return bytes.TrimSuffix(b, []byte("\r")), nil
	}
}

func (lr *lineReader) errorf(format string, a ...any) error {
	return fmt.Errorf("%s:%d: %s", lr.name, lr.line, fmt.Sprintf(format, a...))
}

// ReadVocab reads a vocabulary: one word per line, none empty.
func ReadVocab(r io.Reader, name string, lim Limits) ([]string, error) {
	lr := newLineReader(r, name)
	var words []string
	for {
		b, err := lr.next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		w := string(bytes.TrimSpace(b))
		switch {
		case w == "":
			return nil, lr.errorf("empty word (every line names the word of that id)")
		case !utf8.ValidString(w):
			return nil, lr.errorf("word is not valid UTF-8")
		case len(words) == lim.Vocab:
			return nil, lr.errorf("more than %d words", lim.Vocab)
		}
		words = append(words, w)
	}
	if len(words) == 0 {
		return nil, fmt.Errorf("%s: no words", name)
	}
	return words, nil
}

// ReadUCI reads a docword file. vocab, when not nil, must have the W words
// the header declares.
func ReadUCI(r io.Reader, name string, vocab []string, lim Limits) (*Corpus, error) {
	lr := newLineReader(r, name)
	var header [3]int
	for i, what := range []string{"number of documents D", "number of words W", "number of lines NNZ"} {
		b, err := lr.next()
		if err == io.EOF {
			return nil, fmt.Errorf("%s: ends in the header: want the %s on line %d", name, what, i+1)
		}
		if err != nil {
			return nil, err
		}
		n, err := strconv.ParseUint(string(bytes.TrimSpace(b)), 10, 63)
		if err != nil {
			return nil, lr.errorf("want the %s, got %q", what, truncate(b))
		}
		header[i] = int(n)
	}
	docs, vsize, nnz := header[0], header[1], header[2]
	switch {
	case docs > lim.Docs:
		return nil, fmt.Errorf("%s:1: %d documents, above the limit of %d", name, docs, lim.Docs)
	case vsize == 0:
		return nil, fmt.Errorf("%s:2: no words", name)
	case vsize > lim.Vocab:
		return nil, fmt.Errorf("%s:2: %d words, above the limit of %d", name, vsize, lim.Vocab)
	case vocab != nil && len(vocab) != vsize:
		return nil, fmt.Errorf("%s:2: %d words, but the vocabulary has %d", name, vsize, len(vocab))
	}
	if vocab == nil {
		vocab = idVocab(vsize)
	}
	c := &Corpus{Vocab: vocab, DocOff: make([]uint32, 1, min(docs, 1<<20)+1)}
	// seen[w] is 1 + the last document word w appeared in, to reject a
	// pair given twice.
	seen := make([]uint32, vsize)
	lastDoc, lines := 0, 0
	for {
		b, err := lr.next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		if len(bytes.TrimSpace(b)) == 0 {
			return nil, lr.errorf("empty line (want \"docID wordID count\")")
		}
		if lines == nnz {
			return nil, lr.errorf("more lines than the %d the header declares", nnz)
		}
		lines++
		f := bytes.Fields(b)
		if len(f) != 3 {
			return nil, lr.errorf("want \"docID wordID count\", got %q", truncate(b))
		}
		var v [3]uint64
		for i, what := range []string{"document id", "word id", "count"} {
			if v[i], err = strconv.ParseUint(string(f[i]), 10, 32); err != nil {
				return nil, lr.errorf("%s %q is not a number below 2^32", what, truncate(f[i]))
			}
		}
		d, w, n := int(v[0]), int(v[1]), int(v[2])
		switch {
		case d < 1 || d > docs:
			return nil, lr.errorf("document id %d outside [1, %d]", d, docs)
		case w < 1 || w > vsize:
			return nil, lr.errorf("word id %d outside [1, %d]", w, vsize)
		case n < 1:
			return nil, lr.errorf("count %d: want at least 1", n)
		case d < lastDoc:
			return nil, lr.errorf("document %d after document %d: the lines must be sorted by document", d, lastDoc)
		case d == lastDoc && seen[w-1] == uint32(d):
			return nil, lr.errorf("word %d given twice for document %d", w, d)
		case len(c.Words)+n > lim.Tokens:
			return nil, lr.errorf("more than %d tokens", lim.Tokens)
		}
		seen[w-1] = uint32(d)
		for ; lastDoc < d; lastDoc++ {
			// Documents lastDoc+1 .. d-1 (if any) are empty; the
			// entry appended last ends document lastDoc.
			if lastDoc > 0 {
				c.DocOff = append(c.DocOff, uint32(len(c.Words)))
			}
		}
		for ; n > 0; n-- {
			c.Words = append(c.Words, uint32(w-1))
		}
	}
	if lines != nnz {
		return nil, fmt.Errorf("%s: %d lines after the header, but the header declares %d", name, lines, nnz)
	}
	for len(c.DocOff) < docs+1 {
		c.DocOff = append(c.DocOff, uint32(len(c.Words)))
	}
	if docs == 0 {
		return nil, fmt.Errorf("%s:1: no documents", name)
	}
	return c, c.Validate()
}

func truncate(b []byte) string {
	if len(b) > 40 {
		return string(b[:40]) + "..."
	}
	return string(b)
}

// WriteUCI writes c as a UCI docword file and, when vocab is not nil, its
// vocabulary, so a synthetic or text corpus can be saved and reread.
func WriteUCI(c *Corpus, docword, vocab io.Writer) error {
	bw := bufio.NewWriterSize(docword, 1<<20)
	type pair struct{ w, n uint32 }
	var lines []pair
	nnz := 0
	count := make([]uint32, len(c.Vocab))
	for pass := 0; pass < 2; pass++ {
		if pass == 1 {
			fmt.Fprintf(bw, "%d\n%d\n%d\n", c.Docs(), len(c.Vocab), nnz)
		}
		for d := 0; d < c.Docs(); d++ {
			lines = lines[:0]
			for _, w := range c.Words[c.DocOff[d]:c.DocOff[d+1]] {
				if count[w] == 0 {
					lines = append(lines, pair{w: w})
				}
				count[w]++
			}
			for i := range lines {
				lines[i].n = count[lines[i].w]
				count[lines[i].w] = 0
			}
			if pass == 0 {
				nnz += len(lines)
				continue
			}
			for _, p := range lines {
				if _, err := fmt.Fprintf(bw, "%d %d %d\n", d+1, p.w+1, p.n); err != nil {
					return err
				}
			}
		}
	}
	if err := bw.Flush(); err != nil {
		return err
	}
	if vocab == nil {
		return nil
	}
	vw := bufio.NewWriter(vocab)
	for _, w := range c.Vocab {
		fmt.Fprintln(vw, w)
	}
	return vw.Flush()
}
