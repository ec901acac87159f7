package analysis

import (
	"math"
	"strings"
	"testing"
	"time"
)

// TestFastDecodingMatchesTheReader holds the loader's own line decoding to
// point.Reader's: the same series, readings, bad lines and events, line by
// line, over a recording of the lines it takes (the usual ones) and of every
// kind it must leave to the reader (new devices, escapes, unsorted tags,
// changed or duplicate fields, strings, every value type, malformed values
// and timestamps, a key that only looks like another device's).
func TestFastDecodingMatchesTheReader(t *testing.T) {
	lines := []string{
		"gpu,gpu=0,host=n1 temp_c=40,power_w=100.5,energy_j=7i,throttle_power=true,pstate=0u 1000000000",
		"gpu,gpu=0,host=n1 temp_c=41,power_w=101,energy_j=8i,throttle_power=F,pstate=2u 2000000000",
		"gpu,gpu=0,host=n1 temp_c=42,power_w=1e2,energy_j=-9i,throttle_power=True,pstate=3u 3000000000",
		"gpu,host=n1,gpu=1 temp_c=30 3000000000",            // tags unsorted: never fast
		"gpu,host=n1,gpu=1 temp_c=31 4000000000",            // same device, still not fast
		"gpu,gpu=1,host=n1 temp_c=32 5000000000",            // the same device, sorted
		"gpu,gpu=0,host=n1 power_w=99,temp_c=43 4000000000", // fields reordered
		"gpu,gpu=0,host=n1 power_w=98,temp_c=44 5000000000",
		"gpu,gpu=0,host=n1 power_w=97,temp_c=45,mem_temp_c=50 6000000000", // a new field
		"gpu,gpu=0,host=n1 power_w=96,temp_c=46,mem_temp_c=51 5500000000", // time goes back
		"gpu,gpu=0,host=n1 power_w=96,temp_c=46,temp_c=47 7000000000",     // duplicate field
		"gpu,gpu=0,host=n1 power_w=96,temp_c=48,temp_c=49 8000000000",
		"gpu,gpu=0,host=n1 power_w=1.2.3,temp_c=48 9000000000", // bad float
		"gpu,gpu=0,host=n1 power_w=+5,temp_c=48 9000000000",    // bad first character
		"gpu,gpu=0,host=n1 power_w=1e400,temp_c=48 9000000000", // out of range
		"gpu,gpu=0,host=n1 power_w=nan,temp_c=48 9000000000",   // not a number
		"gpu,gpu=0,host=n1 power_w=5,temp_c=tru 9000000000",    // bad bool
		"gpu,gpu=0,host=n1 power_w=5,temp_c=48",                // no timestamp
		"gpu,gpu=0,host=n1 power_w=5,temp_c=48 +9000000000",    // signed timestamp
		"gpu,gpu=0,host=n1 power_w=5,temp_c=48  10000000000",   // two spaces
		"gpu,gpu=0,host=n1 power_w=5,temp_c=48 1e10",           // not an integer
		"gpu,gpu=0,host=n1 power_w=5,temp_c=48 99999999999999999999",
		"gpu,gpu=0,host=n1 power_w=5,,temp_c=48 11000000000",
		"gpu,gpu=0,host=n1 power_w=,temp_c=48 11000000000",
		"gpu,gpu=0,host=n1 power_w=6,temp_c=49 12000000000 ",
		"   # a comment",
		"",
		"nvme,device=nvme0,model=Samsung\\ PM9A3 temp_c=31 1000000000", // escaped tag value
		"nvme,device=nvme0,model=Samsung\\ PM9A3 temp_c=32 2000000000",
		"gpu\\,gpu=0 temp_c=1 1000000000", // measurement "gpu,gpu=0": a look-alike key
		"gpu\\,gpu=0 temp_c=2 2000000000",
		"gpu,gpu=0 temp_c=3 3000000000",
		"gpu,gpu=0 temp_c=4 4000000000",
		"tank,tank=t mode=\"run\",coolant_temp_c=30 1000000000",
		"tank,tank=t mode=\"run \\\"x\\\"\",coolant_temp_c=31 2000000000",
		"tank,tank=t mode=\"idle\",coolant_temp_c=32 3000000000",
		"tank,tank=t mode=\"\xff\",coolant_temp_c=33 4000000000",
		"tank,tank=t mode=\"stop\" 5000000000", // strings only
		"tank,tank=t mode=\"a,b c\",coolant_temp_c=34 6000000000",
		"event,kind=phase_start,phase=load,run=x message=\"go\" 2000000000",
		"event,kind=phase_end,phase=load,run=x message=\"stop\" 6000000000",
		"gpu,gpu=0,host=n1 temp_c=50,power_w=7 13000000000",
	}
	data := strings.Join(lines, "\n") + "\n"
	var nfast int
	decode := func(slow bool) *Run {
		l := newLoader(time.Unix(0, 0))
		l.slow = slow
		if err := l.read(strings.NewReader(data), "points.lp"); err != nil {
			t.Fatal(err)
		}
		if !slow {
			nfast = l.nfast
		}
		r := &Run{}
		join(r, []*loader{l})
		return r
	}
	fast, slow := decode(false), decode(true)
	if fast.Points != slow.Points || fast.BadLines != slow.BadLines || strings.Join(fast.BadLineErrors, "|") != strings.Join(slow.BadLineErrors, "|") {
		t.Errorf("fast: %d points, %d bad %q; reader: %d, %d %q", fast.Points, fast.BadLines, fast.BadLineErrors, slow.Points, slow.BadLines, slow.BadLineErrors)
	}
	if len(fast.EventPhases) != 1 || len(slow.EventPhases) != 1 || *fast.EventPhases[0].End != *slow.EventPhases[0].End {
		t.Errorf("event phases fast %+v, reader %+v", fast.EventPhases, slow.EventPhases)
	}
	if len(fast.Series) != len(slow.Series) {
		t.Fatalf("fast: %d series, reader %d", len(fast.Series), len(slow.Series))
	}
	for i, s := range slow.Series {
		f := fast.Series[i]
		if f.Key() != s.Key() || f.Backwards != s.Backwards || f.FirstBackwardsS != s.FirstBackwardsS || len(f.T) != len(s.T) {
			t.Fatalf("series %d: fast %s (%d readings, %d backwards), reader %s (%d, %d)", i, f.Key(), len(f.T), f.Backwards, s.Key(), len(s.T), s.Backwards)
		}
		for k := range s.T {
			if f.T[k] != s.T[k] || !(f.V[k] == s.V[k] || math.IsNaN(f.V[k]) && math.IsNaN(s.V[k])) {
				t.Errorf("%s reading %d: fast (%v, %v), reader (%v, %v)", s.Key(), k, f.T[k], f.V[k], s.T[k], s.V[k])
			}
		}
	}
	// The usual lines are taken: each device's after the first of its
	// text and after each change of fields: gpu 0 (6), gpu 1 unsorted (1),
	// the escaped nvme (1), both gpu,gpu=0 spellings (2), the tank's with
	// plain strings (3).
	if nfast != 13 {
		t.Errorf("fast decoded %d lines, want 13", nfast)
	}
}
