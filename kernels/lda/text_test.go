package lda

import (
	"bytes"
	"slices"
	"strings"
	"testing"
)

func words(c *Corpus, d int) []string {
	var out []string
	for _, w := range c.Words[c.DocOff[d]:c.DocOff[d+1]] {
		out = append(out, c.Vocab[w])
	}
	return out
}

func TestReadTextOneDocumentPerLine(t *testing.T) {
	in := "In the beginning God created the heaven and the earth.\n\n  \nGod's LIGHT, 1:3 light\r\nA b\n"
	c, err := ReadText(strings.NewReader(in), "gen.txt", TextOptions{StopWords: true})
	if err != nil {
		t.Fatal(err)
	}
	// Blank lines are not documents; "A b" is one, now empty (one-letter
	// runs are not words).
	if c.Docs() != 3 {
		t.Fatalf("%d documents, want 3", c.Docs())
	}
	if got := words(c, 0); !slices.Equal(got, []string{"beginning", "god", "created", "heaven", "earth"}) {
		t.Errorf("document 0: %q", got)
	}
	if got := words(c, 1); !slices.Equal(got, []string{"gods", "light", "light"}) {
		t.Errorf("document 1: %q", got)
	}
	if c.DocLen(2) != 0 {
		t.Errorf("document 2 has %d tokens, want 0", c.DocLen(2))
	}
	if !slices.IsSorted(c.Vocab) {
		t.Errorf("vocabulary not in alphabetical order: %q", c.Vocab)
	}
	// Without stop words "the" stays; min-count drops words seen once.
	c, err = ReadText(strings.NewReader(in), "gen.txt", TextOptions{MinCount: 2})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(c.Vocab, []string{"light", "the"}) {
		t.Errorf("vocabulary with min-count 2: %q", c.Vocab)
	}
	c, err = ReadText(strings.NewReader(in), "gen.txt", TextOptions{StopWords: true, Extra: []string{"GOD", "Light"}})
	if err != nil {
		t.Fatal(err)
	}
	if slices.Contains(c.Vocab, "god") || slices.Contains(c.Vocab, "light") {
		t.Errorf("extra stop words kept: %q", c.Vocab)
	}
}

func TestLoadTextDirectory(t *testing.T) {
	c, err := LoadText("testdata/perfile", TextOptions{PerFile: true, StopWords: true})
	if err != nil {
		t.Fatal(err)
	}
	if c.Docs() != 2 {
		t.Fatalf("%d documents, want one per file", c.Docs())
	}
	if got := words(c, 1); !slices.Equal(got, []string{"god", "light", "light", "god", "saw", "light", "good", "gods", "light"}) {
		t.Errorf("document 1 (b.txt): %q", got)
	}
	c, err = LoadText("testdata/perfile", TextOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if c.Docs() != 4 {
		t.Errorf("%d documents, want one per non-blank line of both files", c.Docs())
	}
}

func TestTextErrors(t *testing.T) {
	_, err := ReadText(strings.NewReader("good line\nbad \xff line\n"), "x.txt", TextOptions{})
	if err == nil || err.Error() != "x.txt:2: not valid UTF-8" {
		t.Errorf("invalid UTF-8: %v", err)
	}
	_, err = ReadText(strings.NewReader("the and of\n"), "x.txt", TextOptions{StopWords: true})
	if err == nil || !strings.Contains(err.Error(), "x.txt: no words left") {
		t.Errorf("only stop words: %v", err)
	}
	if _, err := LoadText("testdata/perfile/a.txt", TextOptions{PerFile: true}); err == nil || !strings.Contains(err.Error(), "needs a directory") {
		t.Errorf("one document per file of a file: %v", err)
	}
	if _, err := LoadText("testdata/no-such", TextOptions{}); err == nil {
		t.Error("a missing file was read")
	}
}

// The text reader never panics; what it accepts is a valid corpus whose
// words are lower-case letter runs.
func FuzzReadText(f *testing.F) {
	f.Add([]byte("In the beginning God created the heaven and the earth.\n"), false, 1)
	f.Add([]byte("Ünïcödé wörds ΑΒΓ, and 123 numbers\n\nx\n"), true, 2)
	f.Fuzz(func(t *testing.T, data []byte, perFile bool, minCount int) {
		c, err := ReadText(bytes.NewReader(data), "fuzz", TextOptions{PerFile: perFile, StopWords: true, MinCount: minCount % 5})
		if err != nil {
			if !strings.HasPrefix(err.Error(), "fuzz") {
				t.Errorf("error %q does not name the file", err)
			}
			return
		}
		if err := c.Validate(); err != nil {
			t.Errorf("accepted an invalid corpus: %v", err)
		}
		for _, w := range c.Vocab {
			if w != strings.ToLower(w) || len([]rune(w)) < 2 {
				t.Errorf("word %q", w)
			}
		}
	})
}
