package ri

import (
	"math"
	"slices"
	"strconv"
	"strings"
	"testing"
)

func TestParseZipf(t *testing.T) {
	z, err := ParseZipf("zipf:tokens=100M,vocab=50k,s=1.2,doc=500,seed=7")
	if err != nil {
		t.Fatal(err)
	}
	if want := (Zipf{Tokens: 100_000_000, Vocab: 50_000, S: 1.2, DocLen: 500, Seed: 7}); z != want {
		t.Errorf("%+v, want %+v", z, want)
	}
	back, err := ParseZipf(z.String())
	if err != nil || back != z {
		t.Errorf("String %q reads back as %+v, %v", z.String(), back, err)
	}
	z, err = ParseZipf("zipf:tokens=1k")
	if err != nil || z != (Zipf{Tokens: 1000, Vocab: 100000, S: 1, DocLen: 1000, Seed: 1}) {
		t.Errorf("defaults: %+v, %v", z, err)
	}
	for _, tc := range []struct{ spec, want string }{
		{"tokens=5", "zipf:"},
		{"zipf:", "not key=value"},
		{"zipf:vocab=10", "tokens= is required"},
		{"zipf:tokens=10,tokens=11", "given twice"},
		{"zipf:tokens=10,colour=red", "unknown key"},
		{"zipf:tokens=ten", "tokens="},
		{"zipf:tokens=0", "at least 1"},
		{"zipf:tokens=10,s=-1", "s=-1"},
		{"zipf:tokens=10,vocab=0", "vocab=0"},
		{"zipf:tokens=3G", "above"},
		{"zipf:tokens=2147483000,doc=1", "positions"},
	} {
		if _, err := ParseZipf(tc.spec); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: error %v, want one containing %q", tc.spec, err, tc.want)
		}
	}
}

func FuzzParseZipf(f *testing.F) {
	f.Add("zipf:tokens=100M,vocab=100k,s=1,doc=1000,seed=1")
	f.Add("zipf:tokens=1,s=0")
	f.Fuzz(func(t *testing.T, spec string) {
		z, err := ParseZipf(spec)
		if err != nil {
			return
		}
		if err := z.Validate(); err != nil {
			t.Fatalf("%q parsed to an invalid %+v: %v", spec, z, err)
		}
		back, err := ParseZipf(z.String())
		if err != nil || back != z {
			t.Fatalf("%q: String %q reads back as %+v, %v", spec, z.String(), back, err)
		}
	})
}

// The generated corpus follows Zipf's law, has the documents asked for and
// is the same for any number of goroutines.
func TestZipfGenerate(t *testing.T) {
	z := Zipf{Tokens: 200_000, Vocab: 1000, S: 1, DocLen: 300, Seed: 5}
	c, err := z.Generate(1)
	if err != nil {
		t.Fatal(err)
	}
	if c.Tokens() != z.Tokens || c.Docs() != (z.Tokens+z.DocLen-1)/z.DocLen {
		t.Fatalf("tokens %d docs %d", c.Tokens(), c.Docs())
	}
	for j := 0; j < c.Docs(); j++ {
		n := int(c.Bounds[j+1] - c.Bounds[j] - 1)
		if want := min(z.DocLen, z.Tokens-j*z.DocLen); n != want {
			t.Fatalf("document %d has %d tokens, want %d", j, n, want)
		}
	}
	var h float64
	for r := 1; r <= z.Vocab; r++ {
		h += 1 / float64(r)
	}
	ids := c.Lookup()
	for _, r := range []int{1, 2, 10, 100} {
		term := "w" + strconv.Itoa(r)
		want := float64(z.Tokens) / (float64(r) * h)
		got := float64(c.Counts[ids[term]])
		if math.Abs(got-want) > 5*math.Sqrt(want) {
			t.Errorf("rank %d: %g occurrences, want %.0f ± %.0f", r, got, want, 5*math.Sqrt(want))
		}
	}
	for _, threads := range []int{2, 7} {
		c2, err := z.Generate(threads)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(c2.Stream, c.Stream) || !slices.Equal(c2.Terms, c.Terms) {
			t.Errorf("%d goroutines: a different corpus", threads)
		}
	}
	// Uniform (s=0) draws every term about equally.
	u, err := Zipf{Tokens: 100_000, Vocab: 10, S: 0, DocLen: 100, Seed: 1}.Generate(2)
	if err != nil {
		t.Fatal(err)
	}
	for i, n := range u.Counts {
		if math.Abs(float64(n)-10_000) > 500 {
			t.Errorf("s=0: term %s drawn %d times, want about 10000", u.Terms[i], n)
		}
	}
}
