package lda

import (
	"context"
	"fmt"
	"testing"

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

// One chain on several GPUs equals the CPU's, token for token, and every
// GPU ends each iteration with the same counts.
func TestMultiGPUMatchesTheCPU(t *testing.T) {
	needGPU(t)
	ctx := context.Background()
	c := synthetic(t, "tiny", func(s *Synthetic) { s.Zipf = 1.1; s.Vocab = 3000; s.Docs = 150; s.DocLen = 70 })
	if testOpen == nil && !testing.Short() {
		c = synthetic(t, "small", nil)
	}
	for _, n := range []int{2, 3} {
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
			t.Logf("%s: %s, token ranges %v", m.name(), c.Describe(), m.own)
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
			}
		})
	}
}
