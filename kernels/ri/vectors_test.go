package ri

import (
	"bytes"
	"math"
	"slices"
	"strings"
	"testing"
)

func TestWord2VecRoundTrip(t *testing.T) {
	v, err := NewVectors([]string{"light", "darkness", "ünï"}, 3,
		[]float32{1, -0.5, 0.1, 3.4028235e38, 1e-45, -0, 0.3333333, 2, -7})
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := v.WriteWord2Vec(&buf); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(buf.String(), "3 3\nlight 1 -0.5 0.1\n") {
		t.Errorf("text %q", buf.String())
	}
	back, err := ReadWord2Vec(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(back.Terms, v.Terms) || back.Dim != 3 || !slices.Equal(back.Data, v.Data) {
		t.Errorf("read back %+v", back)
	}
}

func TestReadWord2VecErrors(t *testing.T) {
	for _, tc := range []struct{ text, want string }{
		{"", "line 1: empty"},
		{"2\n", "line 1: header"},
		{"x 3\n", "line 1: header"},
		{"1 2\na 1\n", "line 2: 1 values for term \"a\", want 2"},
		{"1 2\na 1 z\n", "line 2: term \"a\": \"z\" is not a number"},
		{"1 1\na 1\nb 2\n", "line 3: more vectors"},
		{"2 1\na 1\n", "1 vectors, the header says 2"},
		{"2 1\na 1\na 2\n", "appears twice"},
	} {
		_, err := ReadWord2Vec(strings.NewReader(tc.text))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: error %v, want %q", tc.text, err, tc.want)
		}
	}
}

func FuzzReadWord2Vec(f *testing.F) {
	f.Add("2 3\na 1 2 3\nb -1 0.5 1e-3\n")
	f.Add("1 1\nx NaN\n")
	f.Fuzz(func(t *testing.T, text string) {
		v, err := ReadWord2Vec(strings.NewReader(text))
		if err != nil {
			return
		}
		if len(v.Data) != len(v.Terms)*v.Dim {
			t.Fatalf("%d values for %d terms of %d", len(v.Data), len(v.Terms), v.Dim)
		}
		var buf bytes.Buffer
		if err := v.WriteWord2Vec(&buf); err != nil {
			t.Fatal(err)
		}
		back, err := ReadWord2Vec(&buf)
		if err != nil {
			t.Fatalf("written vectors do not read back: %v", err)
		}
		if !slices.Equal(back.Terms, v.Terms) {
			t.Fatalf("terms %q became %q", v.Terms, back.Terms)
		}
	})
}

func TestNearest(t *testing.T) {
	v, err := NewVectors([]string{"a", "b", "c", "d"}, 2, []float32{1, 0, 0.9, 0.1, -1, 0, 0, 1})
	if err != nil {
		t.Fatal(err)
	}
	got, err := v.Nearest("a", 2)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].Term != "b" || got[1].Term != "d" || math.Abs(got[0].Cosine-0.9/math.Sqrt(0.82)) > 1e-6 {
		t.Errorf("nearest to a: %+v", got)
	}
	if _, err := v.Nearest("zz", 3); err == nil || !strings.Contains(err.Error(), `"zz"`) {
		t.Errorf("unknown term: %v", err)
	}
}

func TestSpearman(t *testing.T) {
	// Wikipedia's worked example (IQ against hours of television): -29/165.
	iq := []float64{106, 86, 100, 101, 99, 103, 97, 113, 112, 110}
	tv := []float64{7, 0, 27, 50, 28, 29, 20, 12, 6, 17}
	if got := Spearman(iq, tv); math.Abs(got-(-29.0/165)) > 1e-12 {
		t.Errorf("IQ/TV: %g, want %g", got, -29.0/165)
	}
	// Ties share their mean rank: ranks (1, 2.5, 2.5, 4) against (1, 2, 3, 4).
	if got, want := Spearman([]float64{1, 2, 2, 3}, []float64{1, 2, 3, 4}), 4.5/math.Sqrt(22.5); math.Abs(got-want) > 1e-12 {
		t.Errorf("ties: %g, want %g", got, want)
	}
	if !math.IsNaN(Spearman([]float64{1}, []float64{2})) || !math.IsNaN(Spearman([]float64{1, 1}, []float64{1, 2})) {
		t.Error("one value or no spread must be NaN")
	}
}

func TestEvalSimilarity(t *testing.T) {
	pairs, err := ReadSimilarity(strings.NewReader("A b\t9\n\na c 5\na zz 1\nb d 1\n"))
	if err != nil {
		t.Fatal(err)
	}
	if pairs[0] != (SimPair{A: "a", B: "b", Score: 9}) {
		t.Errorf("first pair %+v (words lower-cased)", pairs[0])
	}
	v, _ := NewVectors([]string{"a", "b", "c", "d"}, 2, []float32{1, 0, 0.9, 0.1, 0.5, 0.5, 0, 1})
	s := EvalSimilarity(v, pairs)
	if s.Pairs != 4 || s.Covered != 3 || math.Abs(s.Spearman-1) > 1e-12 {
		t.Errorf("score %+v, want 3 of 4 pairs covered, Spearman 1", s)
	}
	for _, tc := range []struct{ text, want string }{
		{"a b\n", "line 1"},
		{"a b c d\n", "line 1"},
		{"a b 1\nc d x\n", "line 2: score \"x\""},
		{"\n\n", "no word pairs"},
	} {
		if _, err := ReadSimilarity(strings.NewReader(tc.text)); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: error %v, want %q", tc.text, err, tc.want)
		}
	}
}

func FuzzReadSimilarity(f *testing.F) {
	f.Add("love\tsex\t6.77\ntiger cat 7.35\n")
	f.Fuzz(func(t *testing.T, text string) {
		pairs, err := ReadSimilarity(strings.NewReader(text))
		if err != nil {
			return
		}
		for _, p := range pairs {
			if p.A == "" || p.B == "" || math.IsNaN(p.Score) || math.IsInf(p.Score, 0) {
				t.Fatalf("pair %+v", p)
			}
		}
	})
}
