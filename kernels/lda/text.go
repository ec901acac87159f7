package lda

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"
)

// TextOptions say how plain text becomes a bag-of-words corpus.
type TextOptions struct {
	// PerFile makes each file of a directory one document; otherwise each
	// non-blank line of the file (or of each file of the directory, in
	// name order) is one.
	PerFile bool
	// StopWords drops the built-in English stop words (StopWordList).
	StopWords bool
	// Extra are more words to drop, lower case.
	Extra []string
	// MinCount drops words with fewer tokens in the whole corpus.
	MinCount int
}

// Tokenising: a token is a maximal run of letters (apostrophes inside a
// word are dropped: "lord's" is "lords"), lower-cased; runs of one letter
// and anything without a letter (numbers, verse references) are not
// tokens.

// LoadText reads a text file, or every regular file of a directory
// (sorted by name, not recursing), into a corpus.
func LoadText(path string, opt TextOptions) (*Corpus, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	var files []string
	if st.IsDir() {
		ents, err := os.ReadDir(path)
		if err != nil {
			return nil, err
		}
		for _, e := range ents {
			if e.Type().IsRegular() {
				files = append(files, filepath.Join(path, e.Name()))
			}
		}
		if len(files) == 0 {
			return nil, fmt.Errorf("%s: no files", path)
		}
	} else {
		if opt.PerFile {
			return nil, fmt.Errorf("%s: one document per file needs a directory", path)
		}
		files = []string{path}
	}
	b := newTextBuilder(opt)
	for _, name := range files {
		f, err := os.Open(name)
		if err != nil {
			return nil, err
		}
		err = b.read(f, name)
		f.Close()
		if err != nil {
			return nil, err
		}
	}
	return b.corpus(path)
}

// ReadText reads one text of documents (one per non-blank line, or the
// whole text as one when opt.PerFile).
func ReadText(r io.Reader, name string, opt TextOptions) (*Corpus, error) {
	b := newTextBuilder(opt)
	if err := b.read(r, name); err != nil {
		return nil, err
	}
	return b.corpus(name)
}

type textBuilder struct {
	opt    TextOptions
	stop   map[string]bool
	ids    map[string]uint32
	vocab  []string
	docOff []uint32
	words  []uint32
}

func newTextBuilder(opt TextOptions) *textBuilder {
	b := &textBuilder{opt: opt, ids: map[string]uint32{}, docOff: []uint32{0}}
	if opt.StopWords || len(opt.Extra) > 0 {
		b.stop = map[string]bool{}
		if opt.StopWords {
			for _, w := range StopWordList() {
				b.stop[w] = true
			}
		}
		for _, w := range opt.Extra {
			b.stop[strings.ToLower(w)] = true
		}
	}
	return b
}

func (b *textBuilder) read(r io.Reader, name string) error {
	lr := newLineReader(r, name)
	inDoc := false
	for {
		line, err := lr.next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
		if !utf8.Valid(line) {
			return lr.errorf("not valid UTF-8")
		}
		if !b.opt.PerFile && len(strings.TrimSpace(string(line))) == 0 {
			continue
		}
		if err := b.tokens(string(line)); err != nil {
			return lr.errorf("%v", err)
		}
		inDoc = true
		if !b.opt.PerFile {
			b.endDoc()
		}
	}
	if b.opt.PerFile && inDoc {
		b.endDoc()
	}
	return nil
}

func (b *textBuilder) endDoc() { b.docOff = append(b.docOff, uint32(len(b.words))) }

func (b *textBuilder) tokens(line string) error {
	var word []rune
	flush := func() error {
		if len(word) > 1 {
			w := string(word)
			if !b.stop[w] {
				id, ok := b.ids[w]
				if !ok {
					if len(b.vocab) == MaxVocab {
						return fmt.Errorf("more than %d distinct words", MaxVocab)
					}
					id = uint32(len(b.vocab))
					b.ids[w] = id
					b.vocab = append(b.vocab, w)
				}
				if len(b.words) == MaxTokens {
					return fmt.Errorf("more than %d tokens", MaxTokens)
				}
				b.words = append(b.words, id)
			}
		}
		word = word[:0]
		return nil
	}
	for _, r := range line {
		switch {
		case unicode.IsLetter(r):
			word = append(word, unicode.ToLower(r))
		case (r == '\'' || r == '’') && len(word) > 0:
		default:
			if err := flush(); err != nil {
				return err
			}
		}
	}
	return flush()
}

// corpus applies the minimum count and numbers the words alphabetically.
func (b *textBuilder) corpus(name string) (*Corpus, error) {
	count := make([]int, len(b.vocab))
	for _, w := range b.words {
		count[w]++
	}
	var kept []string
	for id, w := range b.vocab {
		if count[id] >= b.opt.MinCount {
			kept = append(kept, w)
		}
	}
	if len(kept) == 0 {
		return nil, fmt.Errorf("%s: no words left (%d distinct before the stop words and the minimum count of %d)", name, len(b.vocab), b.opt.MinCount)
	}
	sort.Strings(kept)
	newID := make([]int32, len(b.vocab))
	for id, w := range b.vocab {
		newID[id] = -1
		if i, ok := slices.BinarySearch(kept, w); ok {
			newID[id] = int32(i)
		}
	}
	c := &Corpus{Vocab: kept, DocOff: make([]uint32, 1, len(b.docOff))}
	c.Words = make([]uint32, 0, len(b.words))
	for d := 0; d+1 < len(b.docOff); d++ {
		for _, w := range b.words[b.docOff[d]:b.docOff[d+1]] {
			if id := newID[w]; id >= 0 {
				c.Words = append(c.Words, uint32(id))
			}
		}
		c.DocOff = append(c.DocOff, uint32(len(c.Words)))
	}
	if c.Docs() == 0 {
		return nil, fmt.Errorf("%s: no documents", name)
	}
	return c, c.Validate()
}

// StopWordList is the built-in English stop-word list: function words,
// the auxiliary verbs and pronouns, and their Early Modern forms (thou,
// thee, hath, unto...), which otherwise fill the topics of older texts
// such as the King James Bible.
func StopWordList() []string { return strings.Fields(stopWords) }

const stopWords = `
about above after again against all also am an and another any are around as at
be because been before being below between both but by can cannot could did do does
doing done down during each either else even ever every few for from further get gets
got had has have having he her here hers herself him himself his how however if in
into is it its itself just least less let like made make many may me might mine more
most much must my myself neither no nor not now of off often on once one only or other
others ought our ours ourselves out over own per perhaps quite rather said same say
says see she should since so some such than that the their theirs them themselves then
there these they thing things this those though through thus to too toward towards
under until up upon us very was we well were what when where whether which while who
whom whose why will with within without would yet you your yours yourself yourselves
thou thee thy thine ye hath hast doth dost art shalt wilt shall unto saith said
hither thither whither wherefore therefore lo behold verily yea nay
`
