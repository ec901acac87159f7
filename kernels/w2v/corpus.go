package w2v

import (
	"bufio"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
)

// Sentences says how a text corpus is cut into sentences.
type Sentences string

const (
	// Lines: a line is a sentence; line ends are not words.
	Lines Sentences = "line"
	// Word2Vec is word2vec.c's convention: a line end is the word </s>,
	// which ends the sentence and counts as a word (first in the
	// vocabulary, in the training-word total and the learning rate's
	// progress), though it is never trained.
	Word2Vec Sentences = "word2vec"
)

// DefaultMaxSentence is word2vec's MAX_SENTENCE_LENGTH.
const DefaultMaxSentence = 1000

// Corpus is a list of sentences of vocabulary ids. Sentences are cut at
// line ends (text) and after MaxSentence in-vocabulary words; words not in
// the vocabulary are dropped, as word2vec drops them.
type Corpus struct {
	Vocab  *Vocab
	tokens []int32
	starts []int64 // sentence i is tokens[starts[i]:starts[i+1]]
	// counted[i] is the words sentence i counts for the learning rate: its
	// tokens, plus the </s> words read since the previous sentence.
	counted []int32
}

// Sentences is the number of sentences.
func (c *Corpus) Sentences() int { return len(c.starts) - 1 }

// Sentence returns sentence i's word ids.
func (c *Corpus) Sentence(i int) []int32 { return c.tokens[c.starts[i]:c.starts[i+1]] }

// Tokens is the number of in-vocabulary words (no </s>).
func (c *Corpus) Tokens() int64 { return int64(len(c.tokens)) }

// Counted is the words sentence i counts: its tokens and the </s> before it.
func (c *Corpus) Counted(i int) int64 { return int64(c.counted[i]) }

// CountedWords is what an epoch counts: word2vec's words per epoch.
func (c *Corpus) CountedWords() int64 {
	var n int64
	for _, x := range c.counted {
		n += int64(x)
	}
	return n
}

// builder appends words to a corpus, cutting sentences.
type builder struct {
	c       *Corpus
	max     int
	pending int32 // </s> words not yet attributed to a sentence
}

func newBuilder(v *Vocab, maxSentence int, sizeHint int) *builder {
	return &builder{c: &Corpus{Vocab: v, tokens: make([]int32, 0, sizeHint), starts: []int64{0}}, max: maxSentence}
}

func (b *builder) open() int { return len(b.c.tokens) - int(b.c.starts[len(b.c.starts)-1]) }

func (b *builder) add(id int32) {
	b.c.tokens = append(b.c.tokens, id)
	if b.open() >= b.max {
		b.cut()
	}
}

// cut ends the open sentence, if it has words.
func (b *builder) cut() {
	n := b.open()
	if n == 0 {
		return
	}
	b.c.starts = append(b.c.starts, int64(len(b.c.tokens)))
	b.c.counted = append(b.c.counted, int32(n)+b.pending)
	b.pending = 0
}

// eol is a line end: with </s> in the vocabulary it counts as a word.
func (b *builder) eol() {
	if b.c.Vocab.EOS {
		b.pending++
	}
	b.cut()
}

func (b *builder) done() *Corpus {
	b.cut()
	return b.c
}

// NewCorpus builds a corpus from sentences of ids of v, cut at maxSentence.
func NewCorpus(v *Vocab, sentences [][]int32, maxSentence int) (*Corpus, error) {
	n := 0
	for _, s := range sentences {
		n += len(s)
	}
	b := newBuilder(v, maxSentence, n)
	for i, s := range sentences {
		for _, id := range s {
			if id < 0 || int(id) >= v.Size() || (v.EOS && id == 0) {
				return nil, fmt.Errorf("sentence %d: word id %d is not a trainable word of the %d-word vocabulary", i, id, v.Size())
			}
			b.add(id)
		}
		b.eol()
	}
	return b.done(), nil
}

// scanWords calls word for every whitespace-separated word of r and eol at
// every line end, as word2vec's ReadWord splits: space, tab, vertical tab
// and form feed separate, '\n' separates and ends a line, '\r' is dropped.
// The word slice is valid only during the call.
func scanWords(r io.Reader, word func([]byte), eol func()) error {
	buf := make([]byte, 1<<20)
	var carry []byte
	for {
		n, err := r.Read(buf)
		chunk := buf[:n]
		start := -1
		for i, ch := range chunk {
			switch ch {
			case ' ', '\t', '\n', '\v', '\f', '\r':
				if start >= 0 {
					if len(carry) > 0 || ch == '\r' {
						carry = append(carry, chunk[start:i]...)
					} else {
						word(chunk[start:i])
					}
					start = -1
				}
				if ch == '\r' {
					continue
				}
				if len(carry) > 0 {
					word(carry)
					carry = carry[:0]
				}
				if ch == '\n' {
					eol()
				}
			default:
				if start < 0 {
					start = i
				}
			}
		}
		if start >= 0 {
			carry = append(carry, chunk[start:]...)
		}
		if err == io.EOF {
			if len(carry) > 0 {
				word(carry)
			}
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// CorpusOptions say how a text corpus becomes sentences.
type CorpusOptions struct {
	Sentences   Sentences // Lines (default) or Word2Vec
	MinCount    int64     // words seen fewer times are dropped (word2vec: 5)
	MaxSentence int       // in-vocabulary words per sentence at most (default 1000)
	// Vocab, when set, is used instead of one counted from the corpus (a
	// saved vocabulary reused); MinCount does not apply to it.
	Vocab *Vocab
}

func (o CorpusOptions) withDefaults() (CorpusOptions, error) {
	if o.Sentences == "" {
		o.Sentences = Lines
	}
	if o.Sentences != Lines && o.Sentences != Word2Vec {
		return o, fmt.Errorf("sentences %q: want %s or %s", o.Sentences, Lines, Word2Vec)
	}
	if o.MaxSentence == 0 {
		o.MaxSentence = DefaultMaxSentence
	}
	if o.MaxSentence < 1 {
		return o, fmt.Errorf("maximum sentence length %d: want at least 1", o.MaxSentence)
	}
	if o.MinCount < 1 {
		o.MinCount = 1
	}
	return o, nil
}

// CountWords counts r's words, and its line ends for </s>.
func CountWords(r io.Reader) (counts map[string]int64, lineEnds int64, err error) {
	// Pointers, so that counting a known word does not allocate its key.
	seen := map[string]*int64{}
	err = scanWords(r, func(w []byte) {
		if c, ok := seen[string(w)]; ok {
			*c++
		} else {
			n := int64(1)
			seen[string(w)] = &n
		}
	}, func() { lineEnds++ })
	counts = make(map[string]int64, len(seen))
	for w, c := range seen {
		counts[w] = *c
	}
	return counts, lineEnds, err
}

// ReadCorpus reads r's words as sentences of v.
func ReadCorpus(r io.Reader, v *Vocab, maxSentence int) (*Corpus, error) {
	b := newBuilder(v, maxSentence, 1<<16)
	err := scanWords(r, func(w []byte) {
		if id, ok := v.idBytes(w); ok && !(v.EOS && id == 0) {
			b.add(id)
		}
	}, b.eol)
	if err != nil {
		return nil, err
	}
	return b.done(), nil
}

// openText opens a text file, decompressing it if its name ends in .gz.
func openText(path string) (io.ReadCloser, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	if !strings.HasSuffix(path, ".gz") {
		return f, nil
	}
	z, err := gzip.NewReader(bufio.NewReaderSize(f, 1<<20))
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return struct {
		io.Reader
		io.Closer
	}{z, closers{z, f}}, nil
}

type closers []io.Closer

func (cs closers) Close() error {
	var errs []error
	for _, c := range cs {
		errs = append(errs, c.Close())
	}
	return errors.Join(errs...)
}

// LoadCorpus reads a text file (gzip-compressed if named .gz): one pass to
// count the vocabulary unless o.Vocab is given, one to read the sentences.
func LoadCorpus(path string, o CorpusOptions) (*Corpus, error) {
	o, err := o.withDefaults()
	if err != nil {
		return nil, err
	}
	v := o.Vocab
	if v == nil {
		f, err := openText(path)
		if err != nil {
			return nil, err
		}
		counts, eols, err := CountWords(f)
		f.Close()
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", path, err)
		}
		if o.Sentences == Lines {
			eols = 0
		}
		v = NewVocab(counts, o.MinCount, eols)
	}
	if v.Size()-btoi(v.EOS) < 1 {
		return nil, fmt.Errorf("%s: no word occurs %d times or more", path, o.MinCount)
	}
	f, err := openText(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	c, err := ReadCorpus(f, v, o.MaxSentence)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	if c.Tokens() == 0 {
		return nil, fmt.Errorf("%s: no word of the vocabulary in the text", path)
	}
	return c, nil
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// WriteText writes the corpus as text, a sentence per line.
func (c *Corpus) WriteText(w io.Writer) error {
	bw := bufio.NewWriterSize(w, 1<<20)
	for i := 0; i < c.Sentences(); i++ {
		for j, id := range c.Sentence(i) {
			if j > 0 {
				bw.WriteByte(' ')
			}
			bw.WriteString(c.Vocab.Words[id])
		}
		bw.WriteByte('\n')
	}
	return bw.Flush()
}
