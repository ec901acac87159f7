package point

import (
	"bytes"
	"strings"
	"testing"
)

// LineScanner gives back every line of its input, without line endings,
// except those longer than its maximum, which it flags instead: the same
// lines as splitting the input on newlines.
func FuzzLineScanner(f *testing.F) {
	f.Add([]byte("a\nbb\r\n\nccc"), 2)
	f.Add([]byte(strings.Repeat("x", 70000)+"\ny\n"), 65536)
	f.Add([]byte(""), 1)
	f.Fuzz(func(t *testing.T, in []byte, max int) {
		if max < 0 || max > 1<<20 {
			return
		}
		want := bytes.Split(in, []byte{'\n'})
		if len(in) > 0 && in[len(in)-1] == '\n' || len(in) == 0 {
			want = want[:len(want)-1]
		}
		s := NewLineScanner(bytes.NewReader(in), max)
		i := 0
		for ; s.Scan(); i++ {
			if i >= len(want) {
				t.Fatalf("more lines than the input has: %q", s.Bytes())
			}
			w := bytes.TrimSuffix(want[i], []byte{'\r'})
			switch {
			case len(want[i]) > max && !s.TooLong() && len(w) > max:
				t.Fatalf("line %d of %d bytes not flagged as over %d", i+1, len(w), max)
			case !s.TooLong() && !bytes.Equal(s.Bytes(), w):
				t.Fatalf("line %d = %q, want %q", i+1, s.Bytes(), w)
			}
		}
		if s.Err() != nil || i != len(want) {
			t.Fatalf("%d lines, want %d (err %v)", i, len(want), s.Err())
		}
	})
}
