package w2v

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"time"

	"github.com/heatsink-hpc/heatsink/kernels"
	"github.com/heatsink-hpc/heatsink/kernels/cuda"
	"github.com/heatsink-hpc/heatsink/workloads"
)

// wombatWarps is the tiles or pairs per block of the Wombat kernels
// (WOMBAT_WARPS, checked at load).
const wombatWarps = 4

// DefaultWombatBatchTokens is the corpus tokens whose windows one Wombat
// launch trains. The host assembles the next launches on its cores while
// the GPU trains this one, each goroutine two plans at once in
// page-locked memory; a launch of 2^16 tokens holds about 10 MB of
// windows, tiles and pairs for hierarchical softmax over text8's
// vocabulary (190 bytes a kept token), and trains for about a millisecond.
const DefaultWombatBatchTokens = 1 << 16

// wombatEngine trains on one GPU as Wombat does: goroutines read and draw
// the sentences and cut their windows into tiles and pairs (wombat_plan.go),
// and each launch copies one plan to the GPU and runs the matrix kernel on
// its tiles, then the vector kernel on its pairs. On the CUDA driver's GPU
// the copies run beside the kernels (wombatPipe); elsewhere in step.
type wombatEngine struct {
	deviceModel
	m *model // the host's view: objective, layout, tree (no weights)
	// byWindow trains a warp per window (wombat_windows) instead of the
	// paper's tiles and pairs.
	byWindow bool
	// windowWarps is wombat_windows's warps per block: WOMBAT_WARPS, or
	// fewer where their rows would not fit in a block's shared memory.
	windowWarps int
	// drawOnDevice: negative sampling's negatives are drawn on the GPU
	// (wombat_negatives, from the unigram table uploaded once), not by
	// the plans' goroutines.
	drawOnDevice bool
	// The logistic table, the unigram table (drawOnDevice), and two slots
	// of one plan's tiles, windows, pairs and starts.
	tab, unigram                  gpuBuffer
	tiles, windows, pairs, starts [2]gpuBuffer
	cap                           planCaps
	launches                      [][2]int // sentence ranges
	pipe                          *wombatPipe
	// Each assembling goroutine's two plans (one building, one waiting),
	// which come back to it once copied: a goroutine cannot run ahead of
	// the others and starve the one whose launch is next.
	plans [][2]*wombatPlan
}

func newWombatGPUEngine(_ context.Context, t *Trainer) (*wombatEngine, error) {
	d, err := t.openDevice()
	if err != nil {
		return nil, err
	}
	g, err := newWombatEngineOn(t, d)
	if err != nil {
		return nil, errors.Join(err, d.Close())
	}
	return g, nil
}

func newWombatEngineOn(t *Trainer, d gpuDevice) (_ *wombatEngine, err error) {
	cfg, c := t.cfg, t.c
	g := &wombatEngine{deviceModel: deviceModel{t: t, dev: d}, m: &model{dim: cfg.Dim, lay: t.lay, table: newExpTable(), hs: t.hs, wombat: true},
		byWindow: t.dev.WombatLayout != WombatTiles, drawOnDevice: t.s.negatives() > 0}
	defer func() {
		if err != nil {
			err = errors.Join(err, g.freeBuffers())
		}
	}()
	for name, want := range map[string]int32{"wombat_warps": wombatWarps, "wombat_tile_ints": wombatTileInts, "w2v_exp_table": expTableSize} {
		got, err := d.GlobalInt32(name)
		if err != nil {
			return nil, fmt.Errorf("%w (a w2v module older than this build? regenerate it with kernels/scripts/gen.sh)", err)
		}
		if got != want {
			return nil, fmt.Errorf("module w2v: %s is %d, the host expects %d: the kernels do not match this build", name, got, want)
		}
	}
	info := d.Info()
	g.windowWarps = wombatWarps
	for g.windowWarps > 1 && g.sharedBytes("wombat_windows") > info.SharedPerBlockBytes {
		g.windowWarps--
	}
	fns, rows := []string{"wombat_tiles", "wombat_pairs"}, 12
	if g.byWindow {
		fns, rows = []string{"wombat_windows"}, 20
	}
	if need := g.sharedBytes(fns[0]); need > info.SharedPerBlockBytes {
		return nil, fmt.Errorf("GPU %d (%s): kernel %s keeps %d rows of dimension %d per warp in %d bytes of shared memory, above the %d a block may have",
			info.Ordinal, info.Name, fns[0], rows, cfg.Dim, need, info.SharedPerBlockBytes)
	}
	for _, k := range fns {
		if need := g.sharedBytes(k); need > defaultShared {
			if err := d.SetMaxShared(k, need); err != nil {
				return nil, err
			}
		}
	}
	// Launches of consecutive sentences of at most batch raw tokens, and
	// room for the most tiles and pairs one can have.
	// The workload's batch_tokens defaults to FULL-W2V's launch, text8 in
	// one; a Wombat plan of that many tokens would take gigabytes, so that
	// default means Wombat's own.
	batch := t.dev.BatchTokens
	if batch <= 0 || batch == DefaultBatchTokens {
		batch = DefaultWombatBatchTokens
	}
	longest := 0
	for i := 0; i < c.Sentences(); i++ {
		longest = max(longest, len(c.Sentence(i)))
	}
	batch = max(min(batch, int(c.Tokens())), longest)
	// An epoch's first launches grow, the i-th (i < threads) of
	// (i+1)/threads of a batch: every goroutine starts a plan at once, and
	// with launches of one size the GPU waited for the first whole plan
	// (on the H100 machine a plan took a goroutine over ten launches'
	// training). A corpus of fewer than 2*threads batches keeps them
	// whole.
	ramp := t.dev.threads()
	if int(c.Tokens()) < 2*ramp*batch {
		ramp = 0
	}
	for lo := 0; lo < c.Sentences(); {
		limit := batch
		if i := len(g.launches); i < ramp {
			limit = max(batch*(i+1)/ramp, longest)
		}
		hi := lo + 1
		for hi < c.Sentences() && int(c.starts[hi+1]-c.starts[lo]) <= limit {
			hi++
		}
		g.launches = append(g.launches, [2]int{lo, hi})
		lo = hi
	}
	if g.drawOnDevice {
		for _, l := range g.launches {
			if n := c.starts[l[1]] - c.starts[l[0]]; n >= 1<<31 {
				return nil, fmt.Errorf("Wombat on a GPU: a launch of %d tokens, above the 2^31 a plan's positions hold (a smaller batch_tokens fits)", n)
			}
		}
	}
	// Room for the most tiles and pairs a launch can have: a token's window
	// of k outputs (its Huffman path, or 1+n) and nc contexts (at most 2
	// W_f, and fewer than its sentence's words) has floor(k/4) tiles per 8
	// contexts and (k mod 4)*nc pairs; subsampling only drops windows and
	// contexts.
	nneg, wf := t.s.negatives(), cfg.WindowFixed()
	if 2*wf > wombatMaxContexts {
		return nil, fmt.Errorf("Wombat on a GPU: window %d gives %d contexts, above the %d a plan's indices hold", cfg.Window, 2*wf, wombatMaxContexts)
	}
	for _, l := range g.launches {
		nt, nw, np, ns := 0, 0, 0, 1
		for j := l[0]; j < l[1]; j++ {
			raw := c.Sentence(j)
			nc := min(2*wf, len(raw)-1)
			for _, w := range raw {
				k := 1 + nneg
				if g.m.hs != nil && w >= 0 {
					k = int(g.m.hs.off[w+1] - g.m.hs.off[w])
				}
				nt += k / wombatTileRows * ((nc + wombatTileCols - 1) / wombatTileCols)
				nw += 2 + nc + k
				np += k % wombatTileRows * nc
				ns++
			}
		}
		if g.byWindow {
			nt, np = 0, 0
		} else if !g.drawOnDevice {
			ns = 0
		}
		g.cap = planCaps{max(g.cap.tiles, nt), max(g.cap.windows, nw), max(g.cap.pairs, np), max(g.cap.starts, ns)}
	}
	v := c.Vocab.Size()
	allocs := []gpuAlloc{
		{&g.syn0, 4 * v * cfg.Dim}, {&g.syn1, 4 * v * cfg.Dim}, {&g.tab, 4 * expTableSize},
		{&g.tiles[0], 4 * wombatTileInts * g.cap.tiles}, {&g.windows[0], 4 * g.cap.windows}, {&g.pairs[0], 4 * wombatPairInts * g.cap.pairs}, {&g.starts[0], 4 * g.cap.starts},
		{&g.tiles[1], 4 * wombatTileInts * g.cap.tiles}, {&g.windows[1], 4 * g.cap.windows}, {&g.pairs[1], 4 * wombatPairInts * g.cap.pairs}, {&g.starts[1], 4 * g.cap.starts},
	}
	if g.drawOnDevice {
		allocs = append(allocs, gpuAlloc{&g.unigram, 4 * len(t.s.table)})
	}
	err = allocAll(d, allocs, func(need, free int64) error {
		return fmt.Errorf("Wombat training %d words of dimension %d in launches of %d tokens needs %.2f GiB on GPU %d (%s), which has %.2f GiB free (a smaller batch_tokens needs less)",
			v, cfg.Dim, batch, float64(need)/(1<<30), info.Ordinal, info.Name, float64(free)/(1<<30))
	})
	if err != nil {
		return nil, err
	}
	if err := d.Upload(g.tab, kernels.Bytes(newExpTable())); err != nil {
		return nil, err
	}
	if g.drawOnDevice {
		if err := d.Upload(g.unigram, kernels.Bytes(t.s.table)); err != nil {
			return nil, err
		}
	}
	g.plans = make([][2]*wombatPlan, min(t.dev.threads(), len(g.launches)))
	if cd, ok := d.(contextDevice); ok {
		if g.pipe, err = newWombatPipe(cd.Context()); err != nil {
			return nil, err
		}
	}
	for w := range g.plans {
		for i := range g.plans[w] {
			g.plans[w][i] = &wombatPlan{}
			if g.pipe != nil {
				if g.plans[w][i], err = g.pipe.hostPlan(g.cap); err != nil {
					return nil, err
				}
			}
			g.plans[w][i].byWindow = g.byWindow
		}
	}
	return g, nil
}

// sharedBytes is a Wombat kernel's dynamic shared memory for a block of
// its warps: the logistic table, then per warp 12 padded rows and 32 g's
// (tiles), 2 rows (pairs), or 20 rows and 32 g's (windows).
func (g *wombatEngine) sharedBytes(kernel string) int {
	d := g.t.cfg.Dim
	switch kernel {
	case "wombat_tiles":
		return 4*expTableSize + wombatWarps*(12*(d+1)+32)*4
	case "wombat_windows":
		return 4*expTableSize + g.windowWarps*(20*d+32)*4
	}
	return 4*expTableSize + wombatWarps*2*d*4
}

func (g *wombatEngine) name() string {
	info := g.dev.Info()
	obj := ObjectiveNS
	if g.m.hs != nil {
		obj = ObjectiveHS
	}
	return fmt.Sprintf("GPU %d (%s), kernel wombat (%s)", info.Ordinal, info.Name, obj)
}

// epoch assembles launch i's plan on a worker goroutine (Device.Threads
// of them, taking launches in turn) while earlier launches train; the
// plans go to the GPU in order. hostWait is the time the GPU's queue
// waited for a plan.
func (g *wombatEngine) epoch(ctx context.Context, e int) (epochStats, error) {
	t := g.t
	s, c := t.s, t.c
	n, wf := s.negatives(), t.cfg.WindowFixed()
	workers := len(g.plans)
	ready := make([]chan *wombatPlan, len(g.launches))
	for i := range ready {
		ready[i] = make(chan *wombatPlan, 1)
	}
	free := make([]chan *wombatPlan, workers)
	for w := range free {
		free[w] = make(chan *wombatPlan, 2)
		free[w] <- g.plans[w][0]
		free[w] <- g.plans[w][1]
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			sc := newWombatScratch(t.cfg.Dim, wf, g.m.wombatOutputs(n))
			var tok, neg []int32
			for i := w; i < len(g.launches); i += workers {
				var p *wombatPlan
				select {
				case p = <-free[w]:
				case <-stop:
					return
				}
				lo, hi := g.launches[i][0], g.launches[i][1]
				p.drawOnDevice, p.epoch, p.base = g.drawOnDevice, e, c.starts[lo]
				p.reset()
				for j := lo; j < hi; j++ {
					raw := c.Sentence(j)
					if len(tok) < len(raw) {
						tok, neg = make([]int32, len(raw)), make([]int32, len(raw)*n)
					}
					var L int
					if p.drawOnDevice {
						L = s.prepareForDevice(e, c.starts[j], p.base, raw, tok, neg)
					} else {
						L = s.prepare(e, c.starts[j], raw, tok, neg)
					}
					p.addSentence(g.m, tok[:L], neg[:L*n], n, wf, s.alpha(e, j), sc)
					// A plan takes a goroutine milliseconds, and with
					// every core assembling one the feeding loop, back
					// from a cgo wait for the GPU, can find no free P
					// and wait for the scheduler to preempt a worker
					// (up to 10 ms) while the GPU runs dry: a yield a
					// sentence bounds that to a sentence's work.
					runtime.Gosched()
				}
				ready[i] <- p
			}
		}(w)
	}
	defer func() {
		close(stop)
		wg.Wait()
	}()
	var st epochStats
	for i := range g.launches {
		if err := workloads.Checkpoint(ctx); err != nil {
			return epochStats{}, errors.Join(err, g.drain(&st))
		}
		wait := time.Now()
		var p *wombatPlan
		select {
		case p = <-ready[i]:
		case <-ctx.Done():
			return epochStats{}, errors.Join(ctx.Err(), g.drain(&st))
		}
		st.hostWait += time.Since(wait)
		if err := g.submit(p, i%2, &st); err != nil {
			return epochStats{}, errors.Join(err, g.drain(&st))
		}
		st.kept += p.kept
		free[i%workers] <- p
	}
	if err := g.drain(&st); err != nil {
		return epochStats{}, err
	}
	return st, ctx.Err()
}

// submit queues plan p's copy and kernels in slot s and returns once p
// may be refilled, adding the kernels' time to st as it becomes known:
// with a pipe, after the plan reached the GPU, the kernels of the
// launch before still running; without, after its kernels.
func (g *wombatEngine) submit(p *wombatPlan, s int, st *epochStats) error {
	if !g.cap.holds(p) {
		return fmt.Errorf("%s: a plan of %v, above the %v allocated", g.name(), p.size(), g.cap)
	}
	if g.pipe == nil {
		if err := errors.Join(g.dev.Upload(g.tiles[s], kernels.Bytes(p.tiles)), g.dev.Upload(g.windows[s], kernels.Bytes(p.windows)),
			g.dev.Upload(g.pairs[s], kernels.Bytes(p.pairs)), g.dev.Upload(g.starts[s], kernels.Bytes(p.starts))); err != nil {
			return fmt.Errorf("%s: upload a plan: %w", g.name(), err)
		}
		if err := g.dev.Start(); err != nil {
			return err
		}
		lerr := g.launchPlan(s, p, nil)
		k, err := g.dev.Stop()
		if lerr != nil || err != nil {
			return fmt.Errorf("%s: %w", g.name(), errors.Join(lerr, err))
		}
		st.kernel += k
		return nil
	}
	k, err := g.pipe.retire(s)
	if err != nil {
		return fmt.Errorf("%s: %w", g.name(), err)
	}
	st.kernel += k
	idle, err := g.pipe.idle()
	if err != nil {
		return fmt.Errorf("%s: %w", g.name(), err)
	}
	st.launches++
	if idle {
		st.starved++
	}
	if err := g.pipe.send(p, s, [4]gpuBuffer{g.tiles[s], g.windows[s], g.pairs[s], g.starts[s]}); err != nil {
		return fmt.Errorf("%s: copy a plan: %w", g.name(), err)
	}
	if err := errors.Join(g.launchPlan(s, p, g.pipe.pairsCopied), g.pipe.queued(s)); err != nil {
		return fmt.Errorf("%s: %w", g.name(), err)
	}
	return nil
}

// drain waits for the queued kernels and adds their time to st.
func (g *wombatEngine) drain(st *epochStats) error {
	if g.pipe == nil {
		return nil
	}
	var errs []error
	for s := range g.tiles {
		k, err := g.pipe.retire(s)
		st.kernel += k
		errs = append(errs, err)
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("%s: %w", g.name(), err)
	}
	return nil
}

// run trains one plan and waits for it, returning the kernels' time (the
// tests' entry). A plan in Go memory is first copied into the first
// worker's page-locked one where there is a pipe.
func (g *wombatEngine) run(p *wombatPlan) (time.Duration, error) {
	if g.pipe != nil && p.host == nil {
		h := g.plans[0][0]
		h.drawOnDevice, h.epoch, h.base = p.drawOnDevice, p.epoch, p.base
		h.reset()
		if !h.cap.holds(p) {
			return 0, fmt.Errorf("%s: a plan of %v, above the %v allocated", g.name(), p.size(), g.cap)
		}
		h.tiles, h.windows, h.pairs, h.starts = append(h.tiles, p.tiles...), append(h.windows, p.windows...), append(h.pairs, p.pairs...), append(h.starts[:0], p.starts...)
		p = h
	}
	var st epochStats
	err := errors.Join(g.submit(p, 0, &st), g.drain(&st))
	return st.kernel, err
}

// launchPlan queues the kernels over plan p in slot s: its windows, or its
// tiles and then its pairs, calling pairsReady (where not nil) before
// the kernel that needs the whole plan.
func (g *wombatEngine) launchPlan(s int, p *wombatPlan, pairsReady func(int) error) error {
	if p.drawOnDevice {
		if err := g.launchNegatives(s, p); err != nil {
			return err
		}
	}
	if p.byWindow {
		if pairsReady != nil {
			if err := pairsReady(s); err != nil {
				return err
			}
		}
		if n := p.nwindows(); n > 0 {
			return g.launch("wombat_windows", g.starts[s], g.windows[s], n)
		}
		return nil
	}
	nt, np := p.ntiles(), p.npairs()
	var err error
	if nt > 0 {
		err = g.launch("wombat_tiles", g.tiles[s], g.windows[s], nt)
	}
	if pairsReady != nil && err == nil {
		err = pairsReady(s)
	}
	if np > 0 && err == nil {
		err = g.launch("wombat_pairs", g.pairs[s], g.windows[s], np)
	}
	return err
}

// launch queues a Wombat kernel over n windows, tiles or pairs: at most
// Device.WombatConcurrency warps at once (one when sequential).
func (g *wombatEngine) launch(kernel string, items, windows gpuBuffer, n int) error {
	per := wombatWarps
	if kernel == "wombat_windows" {
		per = g.windowWarps
	}
	grid := (n + per - 1) / per
	c := g.t.dev.WombatConcurrency
	if g.t.dev.sequential {
		c = 1
	}
	if c > 0 {
		per = min(per, c)
		grid = min(grid, max(1, c/per))
	}
	hs := int32(0)
	if g.m.hs != nil {
		hs = 1
	}
	return g.dev.Launch(kernel, cuda.Dim1(grid), cuda.Dim1(32*per), g.sharedBytes(kernel),
		g.syn0, g.syn1, items, windows, g.tab, int32(n), int32(g.t.cfg.Dim), hs)
}

// launchNegatives queues wombat_negatives over plan p in slot s: a thread
// per window draws its centre's negatives into it.
func (g *wombatEngine) launchNegatives(s int, p *wombatPlan) error {
	n := p.nwindows()
	if n == 0 {
		return nil
	}
	const block = 32 * wombatWarps
	smp := g.t.s
	eos := int32(0)
	if smp.eos {
		eos = 1
	}
	seed := uint64(smp.cfg.Seed)
	return g.dev.Launch("wombat_negatives", cuda.Dim1((n+block-1)/block), cuda.Dim1(block), 0,
		g.windows[s], g.starts[s], g.unigram, int32(n), int32(uint32(len(smp.table))), int32(smp.vocab), eos,
		int32(smp.negatives()), int32(uint32(seed)), int32(uint32(seed>>32)), int32(p.epoch),
		int32(uint32(uint64(p.base))), int32(uint32(uint64(p.base)>>32)))
}

func (g *wombatEngine) freeBuffers() error {
	var errs []error
	if g.pipe != nil {
		errs = append(errs, g.pipe.close())
		g.pipe = nil
	}
	for _, b := range []*gpuBuffer{&g.syn0, &g.syn1, &g.tab, &g.unigram, &g.tiles[0], &g.windows[0], &g.pairs[0], &g.starts[0], &g.tiles[1], &g.windows[1], &g.pairs[1], &g.starts[1]} {
		if *b != nil {
			errs = append(errs, (*b).Free())
			*b = nil
		}
	}
	for _, ps := range g.plans {
		for _, p := range ps {
			if p != nil {
				errs = append(errs, p.host.Free())
			}
		}
	}
	g.plans = nil
	return errors.Join(errs...)
}

func (g *wombatEngine) close() error {
	err := g.freeBuffers()
	if g.dev != nil {
		err = errors.Join(err, g.dev.Close())
		g.dev = nil
	}
	return err
}
