package ri

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"unicode"
	"unicode/utf8"
)

// Split says where one document ends and the next begins in plain text.
type Split int

const (
	// Lines makes every line a document (the KJV script writes one verse a
	// line).
	Lines Split = iota
	// Paragraphs makes every run of lines up to a blank line (one holding
	// only white space) a document.
	Paragraphs
)

// ParseSplit reads "line" or "paragraph".
func ParseSplit(s string) (Split, error) {
	switch s {
	case "line":
		return Lines, nil
	case "paragraph":
		return Paragraphs, nil
	}
	return 0, fmt.Errorf("document split %q: want line or paragraph", s)
}

func (s Split) String() string {
	if s == Paragraphs {
		return "paragraph"
	}
	return "line"
}

// Tokenizer turns plain text into documents of tokens. A token is a maximal
// run of Unicode letters, digits and non-spacing marks (so decomposed
// accents stay in their word), lower-cased (unicode.ToLower, rune by rune);
// everything else (white space, punctuation, symbols, bytes that are
// not UTF-8) separates tokens, so "LORD's" is "lord" and "s", and
// "well-favoured" is "well" and "favoured". Documents with no token are
// dropped.
type Tokenizer struct {
	r     *bufio.Reader
	split Split
	line  int // 1-based line being read, for errors

	tok  []byte   // the token being built
	doc  [][]byte // tokens of the document being built
	pool []byte   // backing store of doc's tokens
	err  error
	// blankSoFar is true while the current line has held only white space.
	blankSoFar bool
}

// maxTokenBytes bounds one token; a longer run of letters is an error that
// names its line (it is not text).
const maxTokenBytes = 1 << 16

// NewTokenizer reads documents from r.
func NewTokenizer(r io.Reader, split Split) *Tokenizer {
	return &Tokenizer{r: bufio.NewReaderSize(r, 1<<16), split: split, line: 1, blankSoFar: true}
}

// Next returns the next document's tokens, valid until the next call, or
// io.EOF after the last one.
func (t *Tokenizer) Next() ([][]byte, error) {
	if t.err != nil {
		return nil, t.err
	}
	t.doc, t.pool = t.doc[:0], t.pool[:0]
	for {
		b, err := t.r.ReadByte()
		if err != nil {
			if !errors.Is(err, io.EOF) {
				t.err = fmt.Errorf("line %d: %w", t.line, err)
				return nil, t.err
			}
			t.endToken()
			t.err = io.EOF
			if len(t.doc) > 0 {
				return t.doc, nil
			}
			return nil, io.EOF
		}
		if b < utf8.RuneSelf {
			switch {
			case 'a' <= b && b <= 'z', '0' <= b && b <= '9':
				t.tok = append(t.tok, b)
				t.blankSoFar = false
			case 'A' <= b && b <= 'Z':
				t.tok = append(t.tok, b+'a'-'A')
				t.blankSoFar = false
			case b == '\n':
				t.endToken()
				blank := t.blankSoFar
				t.line++
				t.blankSoFar = true
				if len(t.doc) > 0 && (t.split == Lines || blank) {
					return t.doc, nil
				}
			default:
				t.endToken()
				if b != ' ' && b != '\t' && b != '\r' && b != '\v' && b != '\f' {
					t.blankSoFar = false
				}
			}
		} else {
			if err := t.r.UnreadByte(); err != nil {
				t.err = err
				return nil, err
			}
			r, _, err := t.r.ReadRune()
			if err != nil {
				t.err = fmt.Errorf("line %d: %w", t.line, err)
				return nil, t.err
			}
			switch {
			case r != utf8.RuneError && (unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.Is(unicode.Mn, r)):
				t.tok = utf8.AppendRune(t.tok, unicode.ToLower(r))
				t.blankSoFar = false
			default:
				t.endToken()
				if !unicode.IsSpace(r) {
					t.blankSoFar = false
				}
			}
		}
		if len(t.tok) > maxTokenBytes {
			t.err = fmt.Errorf("line %d: a token longer than %d bytes: not text", t.line, maxTokenBytes)
			return nil, t.err
		}
	}
}

// endToken closes the token being built, if any.
func (t *Tokenizer) endToken() {
	if len(t.tok) == 0 {
		return
	}
	// A token keeps pointing at the bytes it was copied into even when a
	// later append moves the pool, so nothing needs re-slicing.
	start := len(t.pool)
	t.pool = append(t.pool, t.tok...)
	t.doc = append(t.doc, t.pool[start:len(t.pool):len(t.pool)])
	t.tok = t.tok[:0]
}
