package point

import (
	"errors"
	"math"
	"strings"
	"testing"
	"time"
)

func TestRoundTrip(t *testing.T) {
	ts := time.Date(2026, 11, 22, 5, 0, 1, 0, time.UTC)
	p := New("gpu", ts)
	p.AddTag("uuid", "GPU-1").AddTag("gpu", "0").AddTag("model", "NVIDIA H100 80GB HBM3")
	p.AddFloat("temp_c", 35.5).AddUint("energy_j", 123456789).AddInt("pstate", 0).
		AddBool("throttle_thermal", false).AddString("mode", `normal "x"`).AddFloat("skipped", math.NaN())
	b, err := Append(nil, []Point{p})
	if err != nil {
		t.Fatal(err)
	}
	want := `gpu,gpu=0,model=NVIDIA\ H100\ 80GB\ HBM3,uuid=GPU-1 temp_c=35.5,energy_j=123456789u,pstate=0i,throttle_thermal=false,mode="normal \"x\"" 1795323601000000000` + "\n"
	if string(b) != want {
		t.Fatalf("encoded\n%s\nwant\n%s", b, want)
	}
	r := NewReader(strings.NewReader(string(b)), "mem")
	got, lerr, ok := r.Next()
	if !ok || lerr != nil {
		t.Fatalf("Next: ok=%v err=%v", ok, lerr)
	}
	if got.String()+"\n" != want {
		t.Fatalf("round trip gave %s", got)
	}
	if v, ok := got.Float("energy_j"); !ok || v != 123456789 {
		t.Fatalf("energy_j = %v %v", v, ok)
	}
	if _, ok := got.Field("skipped"); ok {
		t.Fatal("NaN field was written")
	}
}

func TestReaderReportsBadLinesAndKeepsGoing(t *testing.T) {
	in := "cpu usage_pct=1 1\n" +
		"cpu usage_pct= 2\n" + // malformed value
		"\n# comment\n" +
		"cpu usage_pct=3\n" + // no timestamp
		"cpu usage_pct=4 4\n"
	r := NewReader(strings.NewReader(in), "f.lp")
	var good []float64
	var bad []int
	for {
		p, lerr, ok := r.Next()
		if !ok {
			break
		}
		if lerr != nil {
			bad = append(bad, lerr.Line)
			if !strings.HasPrefix(lerr.Error(), "f.lp:") {
				t.Errorf("error %q does not name the file", lerr)
			}
			continue
		}
		v, _ := p.Float("usage_pct")
		good = append(good, v)
	}
	if len(good) != 2 || good[0] != 1 || good[1] != 4 {
		t.Errorf("good values %v, want [1 4]", good)
	}
	if len(bad) != 2 || bad[0] != 2 || bad[1] != 5 {
		t.Errorf("bad lines %v, want [2 5]", bad)
	}
	if _, err := ParseLine([]byte("cpu usage_pct=3")); !errors.Is(err, ErrNoTime) {
		t.Errorf("line without time: %v, want ErrNoTime", err)
	}
}

func TestEncodeRejectsPointWithoutFields(t *testing.T) {
	if _, err := Append(nil, []Point{New("empty", time.Unix(1, 0))}); err == nil {
		t.Fatal("no error for a point without fields")
	}
}

func FuzzParseLine(f *testing.F) {
	f.Add([]byte("cpu,host=a usage_pct=1.5,n=2i,s=\"x\" 1700000000000000000"))
	f.Add([]byte("m f=t 1"))
	f.Add([]byte("m,t=\\ a f=1u 1"))
	f.Fuzz(func(t *testing.T, b []byte) {
		p, err := ParseLine(b)
		if err != nil {
			return
		}
		// Whatever parses must re-encode and parse back to the same series and fields.
		enc, err := Append(nil, []Point{p})
		if err != nil {
			return // e.g. fields that are valid to read but not to write
		}
		q, err := ParseLine(enc)
		if err != nil {
			t.Fatalf("re-encoded %q does not parse: %v", enc, err)
		}
		if q.SeriesKey() != p.SeriesKey() || len(q.Fields) != len(p.Fields) || !q.Time.Equal(p.Time) {
			t.Fatalf("round trip changed %q into %q", b, enc)
		}
	})
}

func TestRequireNewlineFlagsTornLastLine(t *testing.T) {
	for _, tc := range []struct {
		in      string
		strict  bool
		wantBad int
	}{
		{"m f=1 1\nm f=2 2\n", true, 0},
		{"m f=1 1\nm f=2 2", true, 1}, // torn: "2" could be a truncated "2000"
		{"m f=1 1\nm f=2 2", false, 0},
	} {
		r := NewReader(strings.NewReader(tc.in), "t")
		r.RequireNewline(tc.strict)
		bad := 0
		for {
			_, lerr, ok := r.Next()
			if !ok {
				break
			}
			if lerr != nil {
				bad++
			}
		}
		if bad != tc.wantBad {
			t.Errorf("%q strict=%v: %d bad lines, want %d", tc.in, tc.strict, bad, tc.wantBad)
		}
	}
}

func TestSetTagWithEmptyValueRemovesTheTag(t *testing.T) {
	p := New("gpu", time.Unix(1, 0))
	p.AddTag("gpu", "0").AddTag("job", "42").AddFloat("temp_c", 35)
	p.SetTag("job", "")
	if got := p.String(); got != "gpu,gpu=0 temp_c=35 1000000000" {
		t.Fatalf("after SetTag(job, \"\"): %s", got)
	}
	p.SetTag("gpu", "1").SetTag("job", "43")
	if got := p.String(); got != "gpu,gpu=1,job=43 temp_c=35 1000000000" {
		t.Fatalf("after SetTag(gpu, 1), SetTag(job, 43): %s", got)
	}
}

func TestSeriesKeySortsTagsAndAppendSeriesKeyReusesTheBuffer(t *testing.T) {
	p := New("gpu", time.Unix(1, 0))
	p.AddTag("uuid", "GPU-1").AddTag("gpu", "0").AddFloat("temp_c", 35)
	if got := p.SeriesKey(); got != "gpu,gpu=0,uuid=GPU-1" {
		t.Errorf("SeriesKey = %q", got)
	}
	buf := make([]byte, 0, 64)
	b := AppendSeriesKey(buf, "cpu", []Tag{{"cpu", "total"}})
	if string(b) != "cpu,cpu=total" || &b[0] != &buf[:1][0] {
		t.Errorf("AppendSeriesKey = %q, or it did not write into the buffer given", b)
	}
	if b := AppendSeriesKey(b[:0], "mem", nil); string(b) != "mem" {
		t.Errorf("AppendSeriesKey without tags = %q", b)
	}
}

// One line longer than MaxLineBytes costs itself only: it is a LineError
// and the lines after it are read (bufio.Scanner stopped the whole file).
func TestReaderSkipsALineLongerThanItsMaximum(t *testing.T) {
	in := "a v=1 1\n" + "b v=" + strings.Repeat("1", MaxLineBytes) + " 2\n" + "c v=3 3\r\nd v=4 4"
	r := NewReader(strings.NewReader(in), "f.lp")
	var got []string
	var bad []int
	for {
		p, lerr, ok := r.Next()
		if !ok {
			break
		}
		if lerr != nil {
			bad = append(bad, lerr.Line)
			continue
		}
		got = append(got, p.Measurement)
	}
	if r.Err() != nil || strings.Join(got, "") != "acd" || len(bad) != 1 || bad[0] != 2 {
		t.Errorf("points %v, bad lines %v, err %v; want a c d and line 2", got, bad, r.Err())
	}
}
