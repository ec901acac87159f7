package w2v

import (
	"context"
	"fmt"
	"math"
	"slices"
	"testing"

	"github.com/heatsink-hpc/heatsink/kernels"
)

// prepareForDevice keeps the tokens prepare keeps, and leaves in each kept
// token's first negative slot its position less the launch's base (the
// rest 0): all wombat_negatives needs to draw what prepare draws.
func TestPrepareForDeviceKeepsWhatPrepareKeeps(t *testing.T) {
	c := drawCorpus(t, 40, 3000, 30, 3)
	cfg := DefaultConfig()
	cfg.Negatives, cfg.TableSize, cfg.Sample = 5, 10_000, 1e-2
	s := newSampler(c, cfg)
	n, e, lo := cfg.Negatives, 1, 4
	base := c.starts[lo]
	tok, neg := make([]int32, DefaultMaxSentence), make([]int32, DefaultMaxSentence*n)
	dtok, dneg := make([]int32, DefaultMaxSentence), make([]int32, DefaultMaxSentence*n)
	var kept, dropped int
	for i := lo; i < c.Sentences(); i++ {
		raw := c.Sentence(i)
		k := s.prepare(e, c.starts[i], raw, tok, neg)
		for j := range dneg {
			dneg[j] = -1 // every slot must be written
		}
		dk := s.prepareForDevice(e, c.starts[i], base, raw, dtok, dneg)
		if dk != k || !slices.Equal(dtok[:dk], tok[:k]) {
			t.Fatalf("sentence %d: prepareForDevice kept %v, prepare %v", i, dtok[:dk], tok[:k])
		}
		// The kept tokens' positions, in order, from the raw ones.
		q := 0
		for r, w := range raw {
			if q < k && w == tok[q] && int(dneg[q*n]) == int(c.starts[i]-base)+r {
				q++
			}
		}
		if q != k {
			t.Fatalf("sentence %d: positions %v do not name the kept tokens %v in order", i, dneg[:k*n], tok[:k])
		}
		for j := 0; j < k; j++ {
			if !slices.Equal(dneg[j*n+1:j*n+n], make([]int32, n-1)) {
				t.Fatalf("sentence %d, kept token %d: slots %v after the position, want 0", i, j, dneg[j*n:j*n+n])
			}
		}
		kept += k
		dropped += len(raw) - k
	}
	if kept == 0 || dropped == 0 {
		t.Fatalf("kept %d, dropped %d: the check needs both", kept, dropped)
	}
}

// wombat_negatives on the GPU fills a plan's negative slots with what the
// Go sampler draws, int for int, so that the plan the GPU trains is the
// one the host path built: both layouts, a launch starting mid-corpus in
// a later epoch, a vocabulary with </s> and words frequent enough that
// table draws of the centre itself are redrawn, and more negatives than
// negativesOf batches (its one-by-one path).
func TestWombatNegativesOnTheGPUMatchTheSampler(t *testing.T) {
	needGPU(t)
	tokens := 40_000
	if testEmulated || testing.Short() {
		tokens = 2000
	}
	for _, tc := range []struct {
		layout          string
		words, negative int
	}{
		{WombatWindows, 12, 5}, {WombatTiles, 12, 5}, {WombatWindows, 300, 20},
	} {
		t.Run(fmt.Sprintf("layout=%s/words=%d/negative=%d", tc.layout, tc.words, tc.negative), func(t *testing.T) {
			c := drawCorpus(t, tc.words, tokens, 40, 7)
			cfg := DefaultConfig()
			cfg.Dim, cfg.Negatives, cfg.TableSize, cfg.Sample = 32, tc.negative, 50_000, 1e-2
			cfg.Kernel, cfg.Objective, cfg.Seed = KernelWombat, ObjectiveNS, 0xfeed_0123_4567_89ab
			dev := gpuDeviceForTest()
			dev.WombatLayout = tc.layout
			tr, err := NewTrainer(context.Background(), c, cfg, dev)
			if err != nil {
				t.Fatal(err)
			}
			defer func() {
				if err := tr.Close(); err != nil {
					t.Error(err)
				}
			}()
			g := tr.eng.(*wombatEngine)
			if !g.drawOnDevice {
				t.Fatal("negative sampling's engine draws its negatives on the host")
			}
			s, n, wf := tr.s, cfg.Negatives, cfg.WindowFixed()
			lo, hi, e := 3, c.Sentences(), 2
			byWindow := tc.layout != WombatTiles
			host := &wombatPlan{byWindow: byWindow, drawOnDevice: true}
			onDev := &wombatPlan{byWindow: byWindow, drawOnDevice: true, epoch: e, base: c.starts[lo]}
			host.reset()
			onDev.reset()
			sc := newWombatScratch(cfg.Dim, wf, g.m.wombatOutputs(n))
			tok, neg := make([]int32, DefaultMaxSentence), make([]int32, DefaultMaxSentence*n)
			redrawn := 0
			for i := lo; i < hi; i++ {
				k := s.prepare(e, c.starts[i], c.Sentence(i), tok, neg)
				host.addSentence(g.m, tok[:k], neg[:k*n], n, wf, s.alpha(e, i), sc)
				k = s.prepareForDevice(e, c.starts[i], onDev.base, c.Sentence(i), tok, neg)
				onDev.addSentence(g.m, tok[:k], neg[:k*n], n, wf, s.alpha(e, i), sc)
				redrawn += redraws(s, e, onDev.base, tok[:k], neg[:k*n])
			}
			if !g.cap.holds(onDev) {
				t.Fatalf("a plan of %v, above the engine's %v", onDev.size(), g.cap)
			}
			if err := g.dev.Upload(g.windows[0], kernels.Bytes(onDev.windows)); err != nil {
				t.Fatal(err)
			}
			if err := g.dev.Upload(g.starts[0], kernels.Bytes(onDev.starts)); err != nil {
				t.Fatal(err)
			}
			if err := g.launchNegatives(0, onDev); err != nil {
				t.Fatal(err)
			}
			got := make([]int32, len(onDev.windows))
			if err := g.dev.Download(kernels.Bytes(got), g.windows[0]); err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(onDev.starts, host.starts) || !slices.Equal(onDev.tiles, host.tiles) || !slices.Equal(onDev.pairs, host.pairs) {
				t.Fatal("the two plans cut their windows differently")
			}
			for w := 0; w < host.nwindows(); w++ {
				a, b := host.starts[w], host.starts[w+1]
				if !slices.Equal(got[a:b], host.windows[a:b]) {
					t.Fatalf("window %d: the GPU's %v, the sampler's %v", w, got[a:b], host.windows[a:b])
				}
			}
			if redrawn == 0 {
				t.Error("no negative was redrawn: the check does not reach the redraw rule")
			}
			t.Logf("%d windows identical on the GPU; %d kept tokens' first draws hit the centre or </s>", host.nwindows(), redrawn)
		})
	}
}

// redraws counts the kept tokens (positions from prepareForDevice) whose
// first n table draws hit the centre or </s>: those whose negatives come
// from the redraw rule.
func redraws(s *sampler, e int, base int64, tok, neg []int32) int {
	n, count := s.negatives(), 0
	for k, w := range tok {
		r := newStream(s.cfg.Seed, e, base+int64(neg[k*n]))
		r.next()
		for j := 0; j < n; j++ {
			x := s.table[scale(r.next(), len(s.table))]
			if x == w || s.eos && x == 0 {
				count++
				break
			}
		}
	}
	return count
}

// A whole Wombat SGNS epoch through the engine (launches of sentences
// from several goroutines, the page-locked pipe on a GPU) ends with the
// same weights, bit for bit, whether the negatives were drawn on the GPU
// or on the host, one warp at a time so that the atomics land in one
// order: the engine trains the host path's plans.
func TestWombatEpochDrawsOnTheGPUAsOnTheHost(t *testing.T) {
	needGPU(t)
	// Small: one warp at a time takes minutes on the emulated GPU.
	c := drawCorpus(t, 60, 1200, 30, 11)
	cfg := DefaultConfig()
	cfg.Dim, cfg.Negatives, cfg.TableSize, cfg.Sample = 32, 5, 50_000, 1e-2
	cfg.Kernel, cfg.Objective = KernelWombat, ObjectiveNS
	layouts := []string{WombatWindows, WombatTiles}
	if testEmulated && testing.Short() {
		layouts = layouts[:1] // the tiles take another minute there
	}
	for _, layout := range layouts {
		t.Run("layout="+layout, func(t *testing.T) {
			dev := gpuDeviceForTest()
			dev.WombatLayout, dev.BatchTokens, dev.Threads, dev.sequential = layout, 300, 2, true
			tr, err := NewTrainer(context.Background(), c, cfg, dev)
			if err != nil {
				t.Fatal(err)
			}
			defer func() {
				if err := tr.Close(); err != nil {
					t.Error(err)
				}
			}()
			g := tr.eng.(*wombatEngine)
			if len(g.launches) < 3 {
				t.Fatalf("%d launches: the check needs several", len(g.launches))
			}
			syn0, syn1 := make([]float32, c.Vocab.Size()*cfg.Dim), make([]float32, c.Vocab.Size()*cfg.Dim)
			initWeights(syn0, syn1, cfg.Dim, cfg.Seed)
			var got [2][2][]float32
			for i, onDevice := range []bool{true, false} {
				g.drawOnDevice = onDevice
				if err := g.reset(syn0, syn1); err != nil {
					t.Fatal(err)
				}
				if _, err := g.epoch(context.Background(), 1); err != nil {
					t.Fatal(err)
				}
				if got[i][0], got[i][1], err = g.weights(); err != nil {
					t.Fatal(err)
				}
			}
			g.drawOnDevice = true
			if slices.Equal(got[1][1], syn1) {
				t.Fatal("the epoch left syn1 as it was")
			}
			for m, name := range []string{"syn0", "syn1"} {
				for j := range got[0][m] {
					if math.Float32bits(got[0][m][j]) != math.Float32bits(got[1][m][j]) {
						t.Fatalf("%s[%d]: %v with the GPU's draws, %v with the host's", name, j, got[0][m][j], got[1][m][j])
					}
				}
			}
		})
	}
}
