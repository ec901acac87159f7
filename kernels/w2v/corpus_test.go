package w2v

import (
	"bytes"
	"compress/gzip"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"testing/iotest"
)

func TestScanWordsSplitsAsWord2vec(t *testing.T) {
	in := "the  quick\tbr\rown\r\nfox\v\fjumps\n\nover"
	want := []string{"the", "quick", "brown", "|", "fox", "jumps", "|", "|", "over"}
	for name, r := range map[string]func() *strings.Reader{"whole": func() *strings.Reader { return strings.NewReader(in) }} {
		for _, one := range []bool{false, true} {
			var got []string
			var src = iotestReader(r(), one)
			err := scanWords(src, func(w []byte) { got = append(got, string(w)) }, func() { got = append(got, "|") })
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, want) {
				t.Errorf("%s (one byte at a time: %v): %q, want %q", name, one, got, want)
			}
		}
	}
}

func iotestReader(r *strings.Reader, oneByte bool) interface{ Read([]byte) (int, error) } {
	if oneByte {
		return iotest.OneByteReader(r)
	}
	return r
}

func TestVocabMinCountAndOrder(t *testing.T) {
	counts, eols, err := CountWords(strings.NewReader("b a c a b a d\nb c e\n"))
	if err != nil {
		t.Fatal(err)
	}
	if eols != 2 || counts["a"] != 3 || counts["e"] != 1 {
		t.Fatalf("counts %v, line ends %d", counts, eols)
	}
	v := NewVocab(counts, 2, 0)
	// a:3, b:3, c:2; ties in byte order; d and e dropped.
	if !slices.Equal(v.Words, []string{"a", "b", "c"}) || !slices.Equal(v.Counts, []int64{3, 3, 2}) || v.EOS {
		t.Errorf("vocabulary %v %v", v.Words, v.Counts)
	}
	w := NewVocab(counts, 3, eols)
	if !slices.Equal(w.Words, []string{EOS, "a", "b"}) || w.Counts[0] != 2 || !w.EOS || w.TrainWords() != 8 {
		t.Errorf("word2vec vocabulary %v %v (train words %d)", w.Words, w.Counts, w.TrainWords())
	}
}

func TestVocabSavedAndReused(t *testing.T) {
	v := NewVocab(map[string]int64{"x": 7, "y": 3, "z": 1}, 1, 4)
	var buf bytes.Buffer
	if err := v.Write(&buf); err != nil {
		t.Fatal(err)
	}
	if buf.String() != "</s> 4\nx 7\ny 3\nz 1\n" {
		t.Errorf("saved as %q (word2vec's -save-vocab format)", buf.String())
	}
	got, err := ReadVocab(bytes.NewReader(buf.Bytes()), 2)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got.Words, []string{EOS, "x", "y"}) || !got.EOS {
		t.Errorf("read back with min-count 2: %v", got.Words)
	}
	for _, c := range []struct{ in, want string }{
		{"a 1\nb\n", "line 2"},
		{"a 0\n", "positive"},
		{"a x\n", "positive"},
		{"a 1\na 2\n", "twice"},
		{"a 1\n", "no word"},
	} {
		min := int64(1)
		if c.want == "no word" {
			min = 5
		}
		if _, err := ReadVocab(strings.NewReader(c.in), min); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("ReadVocab(%q): %v, want an error mentioning %q", c.in, err, c.want)
		}
	}
}

func FuzzReadVocab(f *testing.F) {
	f.Add([]byte("</s> 4\nx 7\ny 3\n"))
	f.Add([]byte("a 1\n\n b  2 \n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		v, err := ReadVocab(bytes.NewReader(data), 1)
		if err != nil {
			return
		}
		var buf bytes.Buffer
		if err := v.Write(&buf); err != nil {
			t.Fatal(err)
		}
		w, err := ReadVocab(&buf, 1)
		if err != nil {
			t.Fatalf("saved vocabulary of %q does not read back: %v", data, err)
		}
		if !slices.Equal(v.Words, w.Words) || !slices.Equal(v.Counts, w.Counts) || v.EOS != w.EOS {
			t.Fatalf("round trip of %q changed the vocabulary", data)
		}
	})
}

func writeFile(t *testing.T, name, text string, gz bool) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	data := []byte(text)
	if gz {
		var buf bytes.Buffer
		z := gzip.NewWriter(&buf)
		z.Write(data)
		z.Close()
		data = buf.Bytes()
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func sentenceWords(c *Corpus) [][]string {
	var out [][]string
	for i := 0; i < c.Sentences(); i++ {
		var s []string
		for _, id := range c.Sentence(i) {
			s = append(s, c.Vocab.Words[id])
		}
		out = append(out, s)
	}
	return out
}

func TestCorpusSentences(t *testing.T) {
	text := "a b rare c\n\nb a a b a\nc\n"
	for _, gz := range []bool{false, true} {
		path := writeFile(t, "c.txt", text, gz)
		if gz {
			path = writeFile(t, "c.txt.gz", text, true)
		}
		c, err := LoadCorpus(path, CorpusOptions{MinCount: 2, MaxSentence: 3})
		if err != nil {
			t.Fatal(err)
		}
		got := sentenceWords(c)
		want := [][]string{{"a", "b", "c"}, {"b", "a", "a"}, {"b", "a"}, {"c"}}
		if len(got) != len(want) {
			t.Fatalf("gz %v: sentences %q, want %q", gz, got, want)
		}
		for i := range want {
			if !slices.Equal(got[i], want[i]) {
				t.Errorf("gz %v: sentence %d is %q, want %q", gz, i, got[i], want[i])
			}
		}
		if c.CountedWords() != 9 || c.Tokens() != 9 {
			t.Errorf("lines: counted %d words, %d tokens, want 9 and 9", c.CountedWords(), c.Tokens())
		}
	}
	// word2vec's convention: each of the 4 line ends is a word </s>.
	c, err := LoadCorpus(writeFile(t, "c.txt", text, false), CorpusOptions{Sentences: Word2Vec, MinCount: 2, MaxSentence: 3})
	if err != nil {
		t.Fatal(err)
	}
	if c.Vocab.Words[0] != EOS || c.Vocab.Counts[0] != 4 || c.CountedWords() != 9+4 || c.Tokens() != 9 {
		t.Errorf("word2vec: vocabulary %v %v, counted %d (want 13: every line end counts)", c.Vocab.Words, c.Vocab.Counts, c.CountedWords())
	}
	// A saved vocabulary is used as it is.
	v := NewVocab(map[string]int64{"rare": 5, "a": 1}, 1, 0)
	c, err = LoadCorpus(writeFile(t, "c.txt", text, false), CorpusOptions{Vocab: v, MinCount: 100})
	if err != nil {
		t.Fatal(err)
	}
	if got := sentenceWords(c); len(got) != 2 || !slices.Equal(got[0], []string{"a", "rare"}) {
		t.Errorf("with a saved vocabulary: %q", got)
	}
	for _, o := range []CorpusOptions{{MinCount: 100}, {Sentences: "para"}, {MaxSentence: -1}} {
		if _, err := LoadCorpus(writeFile(t, "c.txt", text, false), o); err == nil {
			t.Errorf("LoadCorpus with %+v accepted it", o)
		}
	}
	if _, err := LoadCorpus(filepath.Join(t.TempDir(), "none.txt"), CorpusOptions{}); err == nil {
		t.Error("a missing file loaded")
	}
}

func TestZipfHasText8sShape(t *testing.T) {
	z, err := ParseZipf(ZipfPrefix)
	if err != nil {
		t.Fatal(err)
	}
	counts := z.counts()
	var sum int64
	for r, c := range counts {
		sum += c
		if c < 5 || (r > 0 && c > counts[r-1]) {
			t.Fatalf("count of rank %d is %d (previous %d): want at least 5, not increasing", r+1, c, counts[max(r-1, 0)])
		}
	}
	if len(counts) != Text8Words || sum != Text8Tokens {
		t.Errorf("%d words, %d tokens; want text8's %d and %d", len(counts), sum, Text8Words, Text8Tokens)
	}
	small, err := ParseZipf("zipf:words=300,tokens=20k,s=1.1,seed=2")
	if err != nil {
		t.Fatal(err)
	}
	c := small.Generate(1000)
	if c.Vocab.Size() != 300 || c.Tokens() != 20000 || c.Sentences() != 20 || c.Vocab.Words[0] != "w1" {
		t.Errorf("vocab %d tokens %d sentences %d first %s", c.Vocab.Size(), c.Tokens(), c.Sentences(), c.Vocab.Words[0])
	}
	again := small.Generate(1000)
	if !slices.Equal(c.tokens, again.tokens) {
		t.Error("the same seed generated another corpus")
	}
	for _, bad := range []string{"zipf:words=x", "zipf:tokens=10,words=100", "zipf:s=-1", "zipf:size=3"} {
		if _, err := ParseZipf(bad); err == nil {
			t.Errorf("ParseZipf(%q) accepted it", bad)
		}
	}
}
