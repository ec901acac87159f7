package collectors

import (
	"context"
	"testing"
	"time"
)

// A sample that outlives its deadline in a tick where every source is
// still busy must still be collected once it returns, and its source
// sampled again: the reliability review's tank-only agent lost every tank
// reading after one 3 s hang of the tank's API (0 of the next 29 ticks),
// because late results were read only while a tick waited for samples it
// had launched, and a tick in which every source was busy launched none.
func TestSourcesAnswerAgainAfterAHangThatOutlivesTicks(t *testing.T) {
	for _, tc := range []struct {
		name   string
		others int // sources that never hang beside the one that does
	}{
		{"alone", 0},
		{"among others", 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			const hang = 500 * time.Millisecond
			iv := 100 * time.Millisecond
			hung := &testSource{name: "hung", sample: func(ctx context.Context, n int32) error {
				if n == 2 {
					time.Sleep(hang) // ignores its context, as a stuck HTTP read or driver call would
				}
				return nil
			}}
			sources := []Source{hung}
			for i := range tc.others {
				sources = append(sources, &testSource{name: "steady" + string(rune('a'+i))})
			}
			sink := &memSink{}
			const ticks = 25 // 2.5 s: the hang spans about 5 ticks
			c := New(Options{Interval: iv, Deadline: 50 * time.Millisecond, Ticks: ticks, Host: "h", Logger: quietLogger()},
				sources, []Sink{sink})
			if err := c.Run(context.Background()); err != nil {
				t.Fatal(err)
			}
			got := sink.points("test", "src", "hung")
			// 25 ticks, of which the hang costs about 6 (and a loaded
			// machine a few more); before the fix it answered in 1.
			if len(got) < ticks-12 {
				t.Fatalf("the source that hung once gave %d samples in %d ticks; it must answer again once the hang ends", len(got), ticks)
			}
			last := got[len(got)-1]
			if n, _ := last.Float("n"); n < 10 {
				t.Errorf("its last sample is its %dth: it was not sampled again after the hang", int(n))
			}
			for i := range tc.others {
				name := "steady" + string(rune('a'+i))
				if n := len(sink.points("test", "src", name)); n < ticks-2 {
					t.Errorf("%s: %d samples in %d ticks beside the hang", name, n, ticks)
				}
			}
		})
	}
}
