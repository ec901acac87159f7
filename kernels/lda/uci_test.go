package lda

import (
	"bytes"
	"slices"
	"strings"
	"testing"
)

// The UCI reader expands counts into tokens in file order and numbers
// words from 0; a gzipped docword file reads the same, and the vocabulary
// file beside it is found by name.
func TestLoadUCI(t *testing.T) {
	for _, docword := range []string{"testdata/docword.tiny.txt", "testdata/docword.tinygz.txt.gz"} {
		c, err := OpenCorpus(docword, "", TextOptions{}, 1)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(c.DocOff, []uint32{0, 3, 6, 10}) || !slices.Equal(c.Words, []uint32{0, 0, 2, 4, 4, 4, 1, 3, 3, 0}) {
			t.Errorf("%s: offsets %v words %v", docword, c.DocOff, c.Words)
		}
		if !slices.Equal(c.Vocab, []string{"apple", "banana", "cherry", "date", "elder"}) {
			t.Errorf("%s: vocabulary %q", docword, c.Vocab)
		}
	}
	// Without a vocabulary, words are named by id.
	c, err := LoadUCI("testdata/docword.tiny.txt", "")
	if err != nil {
		t.Fatal(err)
	}
	if c.Vocab[4] != "w5" {
		t.Errorf("word 4 without a vocabulary is %q, want w5", c.Vocab[4])
	}
}

// Every malformed file is refused with the file, the line and what was
// wrong.
func TestReadUCIErrors(t *testing.T) {
	vocab := []string{"a", "b", "c"}
	for _, tc := range []struct {
		name, in, want string
	}{
		{"empty", "", "d.txt: ends in the header: want the number of documents D on line 1"},
		{"short header", "2\n3\n", "d.txt: ends in the header: want the number of lines NNZ on line 3"},
		{"bad D", "two\n3\n1\n", "d.txt:1: want the number of documents D, got \"two\""},
		{"W differs from vocab", "2\n4\n1\n1 1 1\n", "d.txt:2: 4 words, but the vocabulary has 3"},
		{"no documents", "0\n3\n0\n", "d.txt:1: no documents"},
		{"fields", "2\n3\n1\n1 1\n", "d.txt:4: want \"docID wordID count\", got \"1 1\""},
		{"doc range", "2\n3\n1\n3 1 1\n", "d.txt:4: document id 3 outside [1, 2]"},
		{"word range", "2\n3\n1\n1 0 1\n", "d.txt:4: word id 0 outside [1, 3]"},
		{"zero count", "2\n3\n1\n1 1 0\n", "d.txt:4: count 0: want at least 1"},
		{"negative", "2\n3\n1\n1 -1 2\n", "d.txt:4: word id \"-1\" is not a number below 2^32"},
		{"unsorted", "2\n3\n2\n2 1 1\n1 1 1\n", "d.txt:5: document 1 after document 2: the lines must be sorted by document"},
		{"duplicate", "2\n3\n2\n1 2 1\n1 2 4\n", "d.txt:5: word 2 given twice for document 1"},
		{"too many lines", "2\n3\n1\n1 1 1\n2 2 2\n", "d.txt:5: more lines than the 1 the header declares"},
		{"too few lines", "2\n3\n3\n1 1 1\n2 2 2\n", "d.txt: 2 lines after the header, but the header declares 3"},
		{"blank line", "2\n3\n2\n1 1 1\n\n2 2 2\n", "d.txt:5: empty line"},
		{"too many tokens", "2\n3\n2\n1 1 3\n2 2 3\n", "d.txt:5: more than 5 tokens"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			lim := DefaultLimits()
			lim.Tokens = 5
			_, err := ReadUCI(strings.NewReader(tc.in), "d.txt", vocab, lim)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want %q", err, tc.want)
			}
		})
	}
	for _, tc := range []struct{ in, want string }{
		{"a\n\nc\n", "v.txt:2: empty word"},
		{"", "v.txt: no words"},
		{"a\nb\nc\nd\n", "v.txt:4: more than 3 words"},
		{"a\n\xff\n", "v.txt:2: word is not valid UTF-8"},
	} {
		_, err := ReadVocab(strings.NewReader(tc.in), "v.txt", Limits{Vocab: 3})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("vocabulary %q: error %v, want %q", tc.in, err, tc.want)
		}
	}
}

// Writing a corpus as UCI files and reading them back gives the same
// documents as bags of words (tokens of a word come together).
func TestUCIRoundTrip(t *testing.T) {
	c := synthetic(t, "tiny", func(s *Synthetic) { s.Docs = 40 })
	var dw, vb bytes.Buffer
	if err := WriteUCI(c, &dw, &vb); err != nil {
		t.Fatal(err)
	}
	vocab, err := ReadVocab(&vb, "vocab", DefaultLimits())
	if err != nil {
		t.Fatal(err)
	}
	back, err := ReadUCI(&dw, "docword", vocab, DefaultLimits())
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(back.DocOff, c.DocOff) || !slices.Equal(back.Vocab, c.Vocab) {
		t.Fatal("documents or vocabulary changed")
	}
	for d := range c.Docs() {
		a := slices.Sorted(slices.Values(c.Words[c.DocOff[d]:c.DocOff[d+1]]))
		b := slices.Sorted(slices.Values(back.Words[c.DocOff[d]:c.DocOff[d+1]]))
		if !slices.Equal(a, b) {
			t.Fatalf("document %d: %v, read back %v", d, a, b)
		}
	}
}

// The reader never panics, and what it accepts is a valid corpus whose
// token count is the sum of the counts.
func FuzzReadUCI(f *testing.F) {
	f.Add([]byte("3\n5\n6\n1 1 2\n1 3 1\n2 5 3\n3 2 1\n3 4 2\n3 1 1\n"))
	f.Add([]byte("1\n1\n1\n1 1 1"))
	f.Add([]byte("2\n3\n1\n2 3 4\r\n"))
	f.Add([]byte("0\n0\n0\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		lim := Limits{Docs: 1000, Vocab: 5, Tokens: 10000}
		c, err := ReadUCI(bytes.NewReader(data), "fuzz", []string{"a", "b", "c", "d", "e"}, lim)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "fuzz") {
				t.Errorf("error %q does not name the file", err)
			}
			return
		}
		if err := c.Validate(); err != nil {
			t.Errorf("accepted an invalid corpus: %v", err)
		}
		if c.Docs() > lim.Docs || c.Tokens() > lim.Tokens {
			t.Errorf("%d documents and %d tokens exceed the limits", c.Docs(), c.Tokens())
		}
	})
}
