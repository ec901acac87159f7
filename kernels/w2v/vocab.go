package w2v

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
)

// EOS is word2vec's end-of-sentence word: a line end read as a word.
const EOS = "</s>"

// Vocab is the training vocabulary: words by descending count (ties in
// byte order), with </s> first when the corpus is read word2vec's way.
type Vocab struct {
	Words  []string
	Counts []int64
	// EOS says Words[0] is </s>, counted once per line end; it is never
	// trained as a word, but counts as one (word2vec's convention).
	EOS   bool
	index map[string]int32
}

// NewVocab keeps the words of counts seen at least minCount times. With
// eos > 0 (word2vec's convention) </s> comes first with count eos,
// whatever minCount.
func NewVocab(counts map[string]int64, minCount int64, eos int64) *Vocab {
	type wc struct {
		w string
		c int64
	}
	var list []wc
	for w, c := range counts {
		if c >= minCount && w != EOS {
			list = append(list, wc{w, c})
		}
	}
	slices.SortFunc(list, func(a, b wc) int {
		if a.c != b.c {
			if a.c > b.c {
				return -1
			}
			return 1
		}
		return strings.Compare(a.w, b.w)
	})
	v := &Vocab{}
	if eos > 0 {
		v.EOS = true
		v.Words = append(v.Words, EOS)
		v.Counts = append(v.Counts, eos)
	}
	for _, x := range list {
		v.Words = append(v.Words, x.w)
		v.Counts = append(v.Counts, x.c)
	}
	v.buildIndex()
	return v
}

func (v *Vocab) buildIndex() {
	v.index = make(map[string]int32, len(v.Words))
	for i, w := range v.Words {
		v.index[w] = int32(i)
	}
}

// Size is the number of words.
func (v *Vocab) Size() int { return len(v.Words) }

// ID returns w's index.
func (v *Vocab) ID(w string) (int32, bool) {
	i, ok := v.index[w]
	return i, ok
}

func (v *Vocab) idBytes(w []byte) (int32, bool) {
	i, ok := v.index[string(w)]
	return i, ok
}

// TrainWords is the sum of the counts: word2vec's train_words, the T of
// subsampling's threshold.
func (v *Vocab) TrainWords() int64 {
	var n int64
	for _, c := range v.Counts {
		n += c
	}
	return n
}

// Write saves the vocabulary as word2vec's -save-vocab does: "word count"
// per line, in order.
func (v *Vocab) Write(w io.Writer) error {
	bw := bufio.NewWriter(w)
	for i, word := range v.Words {
		bw.WriteString(word)
		bw.WriteByte(' ')
		bw.WriteString(strconv.FormatInt(v.Counts[i], 10))
		bw.WriteByte('\n')
	}
	return bw.Flush()
}

// Save writes the vocabulary to path.
func (v *Vocab) Save(path string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := v.Write(f); err != nil {
		f.Close()
		return fmt.Errorf("write vocabulary %s: %w", path, err)
	}
	return f.Close()
}

// ReadVocab reads a vocabulary in Write's format (word2vec's -read-vocab),
// keeping words counted at least minCount times (</s> always); it sorts
// them as NewVocab does. A line that is not "word count", a count that is
// not a positive integer, or a word given twice is an error naming the line.
func ReadVocab(r io.Reader, minCount int64) (*Vocab, error) {
	counts := map[string]int64{}
	var eos int64
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	line := 0
	for sc.Scan() {
		line++
		f := bytes.Fields(sc.Bytes())
		if len(f) == 0 {
			continue
		}
		if len(f) != 2 {
			return nil, fmt.Errorf("vocabulary line %d: want \"word count\", got %d fields", line, len(f))
		}
		c, err := strconv.ParseInt(string(f[1]), 10, 64)
		if err != nil || c < 1 {
			return nil, fmt.Errorf("vocabulary line %d: count %q is not a positive integer", line, f[1])
		}
		w := string(f[0])
		if _, dup := counts[w]; dup || (w == EOS && eos > 0) {
			return nil, fmt.Errorf("vocabulary line %d: %q given twice", line, w)
		}
		if w == EOS {
			eos = c
			continue
		}
		counts[w] = c
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("vocabulary line %d: %w", line+1, err)
	}
	v := NewVocab(counts, minCount, eos)
	if v.Size() == 0 {
		return nil, fmt.Errorf("vocabulary: no word counted %d times or more", minCount)
	}
	return v, nil
}

// LoadVocab reads a vocabulary file.
func LoadVocab(path string, minCount int64) (*Vocab, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	v, err := ReadVocab(f, minCount)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return v, nil
}
