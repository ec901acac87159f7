package ri

import (
	"bytes"
	"errors"
	"io"
	"slices"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

func docsOf(t *testing.T, text string, split Split) [][]string {
	t.Helper()
	tk := NewTokenizer(strings.NewReader(text), split)
	var out [][]string
	for {
		doc, err := tk.Next()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		var d []string
		for _, tok := range doc {
			d = append(d, string(tok))
		}
		out = append(out, d)
	}
}

func TestTokenizer(t *testing.T) {
	for _, tc := range []struct {
		name  string
		text  string
		split Split
		want  [][]string
	}{
		{"lower-cases and strips punctuation", "And God said, Let there be light: and there was light.\n", Lines,
			[][]string{{"and", "god", "said", "let", "there", "be", "light", "and", "there", "was", "light"}}},
		{"apostrophes and hyphens separate", "the LORD's well-favoured kine\n", Lines,
			[][]string{{"the", "lord", "s", "well", "favoured", "kine"}}},
		{"digits are tokens", "Psalm 23, verse 1\n", Lines, [][]string{{"psalm", "23", "verse", "1"}}},
		{"a line per document, empty ones dropped", "a b\n\n  \n...\nc\n", Lines, [][]string{{"a", "b"}, {"c"}}},
		{"no final newline", "a b\nc", Lines, [][]string{{"a", "b"}, {"c"}}},
		{"CRLF", "a\r\nb\r\n", Lines, [][]string{{"a"}, {"b"}}},
		{"paragraphs", "a b\nc\n\t \nd\n\n\ne\n", Paragraphs, [][]string{{"a", "b", "c"}, {"d"}, {"e"}}},
		{"a punctuation line does not end a paragraph", "a\n--\nb\n", Paragraphs, [][]string{{"a", "b"}}},
		{"unicode letters lower-cased", "Ünïcödé ΣΟΦΙΑ straße\n", Lines, [][]string{{"ünïcödé", "σοφια", "straße"}}},
		{"combining marks stay in the word", "cafe\u0301 noe\u0308l\n", Lines, [][]string{{"cafe\u0301", "noe\u0308l"}}},
		{"unicode punctuation separates", "a—b«c»d…e\n", Lines, [][]string{{"a", "b", "c", "d", "e"}}},
		{"invalid UTF-8 separates", "ab\xffcd\n", Lines, [][]string{{"ab", "cd"}}},
		{"empty", "", Lines, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := docsOf(t, tc.text, tc.split); !slices.EqualFunc(got, tc.want, slices.Equal) {
				t.Errorf("%q: %q, want %q", tc.text, got, tc.want)
			}
		})
	}
}

func TestTokenizerRejectsHugeToken(t *testing.T) {
	text := "ok\n" + strings.Repeat("a", maxTokenBytes+1) + "\n"
	tk := NewTokenizer(strings.NewReader(text), Lines)
	if _, err := tk.Next(); err != nil {
		t.Fatal(err)
	}
	_, err := tk.Next()
	if err == nil || !strings.Contains(err.Error(), "line 2") {
		t.Fatalf("error %v, want one naming line 2", err)
	}
}

// Tokens are non-empty runs of lower-case letters, digits and marks; the
// tokenizer never fails on text of any bytes short of a huge token.
func FuzzTokenizer(f *testing.F) {
	f.Add("In the beginning God created the heaven and the earth.\n", true)
	f.Add("a\n\n b \xff\xfe c\r\n", false)
	f.Add("ΣΟΦΙΑ — straße, İstanbul\n", true)
	f.Fuzz(func(t *testing.T, text string, lines bool) {
		split := Paragraphs
		if lines {
			split = Lines
		}
		tk := NewTokenizer(strings.NewReader(text), split)
		docs := 0
		for {
			doc, err := tk.Next()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			docs++
			if len(doc) == 0 {
				t.Fatal("empty document")
			}
			for _, tok := range doc {
				if len(tok) == 0 || !utf8.Valid(tok) {
					t.Fatalf("token %q", tok)
				}
				for _, r := range string(tok) {
					if !(unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.Is(unicode.Mn, r)) {
						t.Fatalf("token %q holds %q", tok, r)
					}
				}
			}
		}
		if lines && docs > strings.Count(text, "\n")+1 {
			t.Fatalf("%d documents from %d lines", docs, strings.Count(text, "\n")+1)
		}
	})
}

func TestReadCorpus(t *testing.T) {
	c, err := ReadCorpus(strings.NewReader("b a b\n\nc b a\n"), Lines)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"b", "a", "c"}; !slices.Equal(c.Terms, want) {
		t.Errorf("terms %q, want %q (by count, ties by bytes)", c.Terms, want)
	}
	if want := []int32{3, 2, 1}; !slices.Equal(c.Counts, want) {
		t.Errorf("counts %v, want %v", c.Counts, want)
	}
	if want := []int32{-1, 0, 1, 0, -1, 2, 0, 1, -1}; !slices.Equal(c.Stream, want) {
		t.Errorf("stream %v, want %v", c.Stream, want)
	}
	if want := []int32{0, 4, 8}; !slices.Equal(c.Bounds, want) {
		t.Errorf("bounds %v, want %v", c.Bounds, want)
	}
	if c.Tokens() != 6 || c.Docs() != 2 || c.Vocab() != 3 {
		t.Errorf("tokens %d docs %d vocab %d, want 6 2 3", c.Tokens(), c.Docs(), c.Vocab())
	}
	var buf bytes.Buffer
	if err := c.WriteText(&buf); err != nil {
		t.Fatal(err)
	}
	if buf.String() != "b a b\nc b a\n" {
		t.Errorf("WriteText: %q", buf.String())
	}
	if _, err := ReadCorpus(strings.NewReader(" ,.;\n\n"), Lines); err == nil || !strings.Contains(err.Error(), "no tokens") {
		t.Errorf("text without tokens: error %v", err)
	}
}

// The occurrence lists hold every position of every term in order, with
// its document, whatever the number of chunks that built them.
func TestOccurrences(t *testing.T) {
	c, err := Zipf{Tokens: 3000, Vocab: 50, S: 1, DocLen: 7, Seed: 3}.Generate(2)
	if err != nil {
		t.Fatal(err)
	}
	ref := buildOccurrences(c, 1, true)
	for _, threads := range []int{2, 3, 8, 64} {
		o := buildOccurrences(c, threads, true)
		if !slices.Equal(o.start, ref.start) || !slices.Equal(o.pos, ref.pos) || !slices.Equal(o.doc, ref.doc) {
			t.Fatalf("%d chunks: lists differ from one chunk's", threads)
		}
	}
	for term := 0; term < c.Vocab(); term++ {
		var want, wantDoc []int32
		doc := int32(-1)
		for p, id := range c.Stream {
			if id == Boundary {
				doc++
				continue
			}
			if int(id) == term {
				want = append(want, int32(p))
				wantDoc = append(wantDoc, doc)
			}
		}
		lo, hi := ref.start[term], ref.start[term+1]
		if !slices.Equal(ref.pos[lo:hi], want) || !slices.Equal(ref.doc[lo:hi], wantDoc) {
			t.Fatalf("term %d: positions %v docs %v, want %v %v", term, ref.pos[lo:hi], ref.doc[lo:hi], want, wantDoc)
		}
	}
}

func TestPlan(t *testing.T) {
	seg := [][2]int32{{0, 5}, {5, 5}, {5, 17}, {17, 20}}
	p := newPlan(len(seg), func(i int) (int32, int32) { return seg[i][0], seg[i][1] }, 5)
	wantUnits := []int32{0, 5, 0, 5, 5, 1, 5, 10, 4, 10, 15, 5, 15, 17, 6, 17, 20, 3}
	if !slices.Equal(p.units, wantUnits) {
		t.Errorf("units %v, want %v", p.units, wantUnits)
	}
	if want := []int32{2, 4, 3}; !slices.Equal(p.combine, want) {
		t.Errorf("combine %v, want %v", p.combine, want)
	}
	if p.rows != 7 || p.partials() != 3 {
		t.Errorf("rows %d partials %d, want 7 3", p.rows, p.partials())
	}
}
