package lda

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/heatsink-hpc/heatsink/kernels/cuda"
)

// The shares cover every unit of every list once, in order, with about
// equal tokens, and their token ranges tile the corpus.
func TestSplitSharesTileTheTokens(t *testing.T) {
	c := synthetic(t, "small", nil)
	for _, k := range []int{16, 100} {
		l, err := newLayout(c, k, Hybrid)
		if err != nil {
			t.Fatal(err)
		}
		whole := wholeShare(l)
		for _, n := range []int{1, 2, 3, 7} {
			t.Run(fmt.Sprintf("K=%d/n=%d", k, n), func(t *testing.T) {
				shares := splitShares(l, n)
				if len(shares) != n {
					t.Fatalf("%d shares", len(shares))
				}
				for li, get := range []func(share) unitRange{
					func(s share) unitRange { return s.dense }, func(s share) unitRange { return s.medium },
					func(s share) unitRange { return s.sparse },
				} {
					next := 0
					for p, s := range shares {
						r := get(s)
						if r.lo != next || r.hi < r.lo {
							t.Fatalf("list %d, share %d: units [%d, %d) after %d", li, p, r.lo, r.hi, next)
						}
						next = r.hi
					}
					if next != get(whole).hi {
						t.Fatalf("list %d: the shares end at unit %d of %d", li, next, get(whole).hi)
					}
				}
				covered := make([]int, l.n)
				var sizes []int
				for _, s := range shares {
					size := 0
					for _, r := range tokenRanges(l, s) {
						for p := r[0]; p < r[1]; p++ {
							covered[p]++
						}
						size += int(r[1] - r[0])
					}
					sizes = append(sizes, size)
				}
				for p, n := range covered {
					if n != 1 {
						t.Fatalf("token %d is sampled by %d shares", p, n)
					}
				}
				// Within a unit of each list of the even split.
				for p, size := range sizes {
					if want := l.n / n; size < want-3*max(DenseUnit, SparseChunk) || size > want+3*max(DenseUnit, SparseChunk) {
						t.Errorf("share %d samples %d tokens, against %d each for an even split", p, size, want)
					}
				}
			})
		}
	}
}

// openTestGPUs opens n GPUs for a multi-GPU engine: ordinals 0..n-1 where
// the machine has them, else GPU 0 n times (separate memory in one
// context: the exchange and the shares are the same code either way).
func openTestGPUs(t testing.TB, n int) []gpuDevice {
	t.Helper()
	open := testOpen
	count := n
	if open == nil {
		open = func(gpu int) (gpuDevice, error) { return openCUDADevice(gpu) }
		drv, err := cuda.Load()
		if err != nil {
			t.Fatal(err)
		}
		if count, err = drv.DeviceCount(); err != nil {
			t.Fatal(err)
		}
	}
	var devs []gpuDevice
	for i := range n {
		d, err := open(i % count)
		if err != nil {
			t.Fatal(err)
		}
		devs = append(devs, d)
	}
	return devs
}

// A recut gives every GPU the same predicted time: where each range's
// time per token is even within it, the new ranges' predicted times are
// equal to within a unit, whatever the old cut.
func TestRecutBalancesPredictedTime(t *testing.T) {
	c := synthetic(t, "small", nil)
	l, err := newLayout(c, 100, Hybrid)
	if err != nil {
		t.Fatal(err)
	}
	for li := range numLists {
		u := listOf(l, li)
		for _, tc := range []struct {
			name string
			// perToken[p] is GPU p's time a token (ns).
			perToken []float64
		}{
			{"even", []float64{1, 1}},
			{"second twice as slow", []float64{1, 2}},
			{"four uneven", []float64{3, 1, 1, 2}},
			{"one idle-fast", []float64{0.1, 1, 1}},
		} {
			t.Run(fmt.Sprintf("list %d/%s", li, tc.name), func(t *testing.T) {
				n := len(tc.perToken)
				old := cutByCost(u.n(), func(i int) float64 { return float64(u.before(i)) }, n)
				// A unit's cost is its tokens at the rate of the old
				// range holding it: the model recut assumes.
				rateOf := func(i int) float64 {
					for p, r := range old {
						if i < r.hi {
							return tc.perToken[p]
						}
					}
					return tc.perToken[n-1]
				}
				times := make([]time.Duration, n)
				for p, r := range old {
					times[p] = time.Duration(tc.perToken[p] * float64(u.before(r.hi)-u.before(r.lo)))
				}
				got := recut(u, old, times)
				next, total, biggest := 0, 0.0, 0.0
				pred := make([]float64, n)
				for p, r := range got {
					if r.lo != next || r.hi < r.lo {
						t.Fatalf("range %d is [%d, %d) after %d", p, r.lo, r.hi, next)
					}
					next = r.hi
					for i := r.lo; i < r.hi; i++ {
						c := rateOf(i) * float64(u.before(i+1)-u.before(i))
						pred[p] += c
						biggest = max(biggest, c)
					}
					total += pred[p]
				}
				if next != u.n() {
					t.Fatalf("the ranges end at unit %d of %d", next, u.n())
				}
				for p, x := range pred {
					// Times are whole nanoseconds: allow their rounding too.
					if d := x - total/float64(n); d > biggest+float64(n) || d < -biggest-float64(n) {
						t.Errorf("range %d %v: predicted %.0f, a %d-way even cut is %.0f (largest unit %.0f)", p, got[p], x, n, total/float64(n), biggest)
					}
				}
			})
		}
	}
}

// One chain on several GPUs equals the CPU's, token for token, and every
// GPU ends each iteration with the same counts, while the shares are cut
// anew every iteration: first unevenly on purpose, then from the GPUs'
// times.
func TestMultiGPUMatchesTheCPU(t *testing.T) {
	needGPU(t)
	ctx := context.Background()
	c := synthetic(t, "tiny", func(s *Synthetic) { s.Zipf = 1.1; s.Vocab = 3000; s.Docs = 150; s.DocLen = 70 })
	if testOpen == nil && !testing.Short() {
		c = synthetic(t, "small", nil)
	}
	for _, n := range []int{2, 3, 4} {
		t.Run(fmt.Sprintf("%d GPUs", n), func(t *testing.T) {
			cfg := DefaultConfig(100)
			l, err := newLayout(c, cfg.Topics, Hybrid)
			if err != nil {
				t.Fatal(err)
			}
			cpu := &cpuDevice{e: newCPUEngine(cfg, Options{}, l)}
			m, err := newMultiGPU(cfg, l, openTestGPUs(t, n), testBlock)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() {
				if err := m.close(); err != nil {
					t.Error(err)
				}
			})
			// Lopsided: GPU 0 as if its tokens took n times as long.
			times := make([][]time.Duration, numLists)
			for li := range times {
				for p := range n {
					times[li] = append(times[li], time.Duration(1+(n-1)*(1-min(p, 1)))*time.Millisecond)
				}
			}
			m.rebalance(times)
			t.Logf("%s: %s, token ranges %v", m.name(), c.Describe(), m.own)
			seen := map[string]bool{}
			for _, e := range []engine{cpu, m} {
				if err := e.initialise(ctx); err != nil {
					t.Fatal(err)
				}
			}
			for it := 1; it <= 4; it++ {
				cs, err := cpu.step(ctx)
				if err != nil {
					t.Fatal(err)
				}
				ms, err := m.step(ctx)
				if err != nil {
					t.Fatal(err)
				}
				if ms.shortcuts != cs.shortcuts {
					t.Errorf("iteration %d: %d shortcuts on %d GPUs, %d on the CPU", it, ms.shortcuts, n, cs.shortcuts)
				}
				for p, g := range m.parts {
					gc, gz, err := g.state(ctx)
					if err != nil {
						t.Fatal(err)
					}
					if i := firstDiff(gz, cpu.e.z); i >= 0 {
						t.Fatalf("iteration %d: GPU %d of %d: word-major token %d has topic %d, %d on the CPU", it, p, n, i, gz[i], cpu.e.z[i])
					}
					if err := sameCounts(l, gc, cpu.e.c); err != nil {
						t.Fatalf("iteration %d: GPU %d of %d: %v", it, p, n, err)
					}
				}
				if err := m.check(ctx); err != nil {
					t.Fatalf("iteration %d: %v", it, err)
				}
				seen[fmt.Sprint(m.own)] = true
			}
			if len(seen) < 2 {
				t.Errorf("the shares never changed: %v", m.own)
			}
		})
	}
}
