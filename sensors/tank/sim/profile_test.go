package sim

import (
	"os"
	"strings"
	"testing"
	"time"
)

func TestParseProfile(t *testing.T) {
	f, err := os.Open("testdata/reference.profile")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	p, err := ParseProfile(f)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		at   time.Duration
		want float64
	}{{0, 250}, {29 * time.Minute, 250}, {30 * time.Minute, 2400}, {7 * time.Hour, 2400}, {8 * time.Hour, 250}, {100 * time.Hour, 250}} {
		if got := p.At(c.at); got != c.want {
			t.Errorf("At(%v) = %v, want %v", c.at, got, c.want)
		}
	}
	p, err = ParseProfile(strings.NewReader("0,100\n90.5,200\n"))
	if err != nil || p.At(90*time.Second) != 100 || p.At(91*time.Second) != 200 {
		t.Errorf("seconds and commas: %v %v", p, err)
	}
}

func TestParseProfileErrorsNameTheLine(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"", "no steps"},
		{"# only a comment\n", "no steps"},
		{"0 100\n0 200\n", "line 2: offset 0s is not after"},
		{"0 100\n5m\n", "line 2"},
		{"0 100\n5m -3\n", "line 2: load \"-3\""},
		{"0 100\nsoon 3\n", "line 2: offset \"soon\""},
		{"0 NaN\n", "line 1: load"},
		{"0 100\n" + strings.Repeat("x", 5000) + "\n", "line 2"},
	} {
		_, err := ParseProfile(strings.NewReader(c.in))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("ParseProfile(%.30q) = %v, want %q", c.in, err, c.want)
		}
	}
}

func FuzzParseProfile(f *testing.F) {
	f.Add("0 250\n30m 2400\n8h 250\n")
	f.Add("0,1\n1.5,2\n")
	f.Add("# c\n\n0 1e300\n")
	f.Fuzz(func(t *testing.T, in string) {
		p, err := ParseProfile(strings.NewReader(in))
		if err != nil {
			return
		}
		prev := time.Duration(-1)
		for _, s := range p.steps {
			if s.at <= prev || s.load < 0 {
				t.Fatalf("accepted a bad step %+v after %v", s, prev)
			}
			prev = s.at
		}
		_ = p.At(0)
		_ = p.At(time.Duration(1 << 62))
	})
}
