package lda

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// unitRange is units [lo, hi) of one of the layout's unit lists.
type unitRange struct{ lo, hi int }

func (r unitRange) n() int { return r.hi - r.lo }

// The unit lists, in the order a GPU samples them.
const (
	listDense = iota
	listMedium
	listSparse
	numLists
)

// share is what one GPU samples of an iteration: ranges of the dense,
// medium and small-word units. Each list's units are consecutive slices of
// the word-major tokens, so a range of them is one range of tokens.
type share struct{ dense, medium, sparse unitRange }

// list is the range of list li (listDense, listMedium, listSparse).
func (s *share) list(li int) *unitRange {
	switch li {
	case listDense:
		return &s.dense
	case listMedium:
		return &s.medium
	}
	return &s.sparse
}

func wholeShare(l *layout) share {
	return share{unitRange{0, l.nDenseUnits()}, unitRange{0, l.nMediumUnits()}, unitRange{0, l.nSparseUnits()}}
}

// unitList is one of the layout's unit lists: a unit's entries are stride
// words, of which lo and hi are its first and end word-major token.
type unitList struct {
	units          []uint32
	stride, lo, hi int
}

func listOf(l *layout, li int) unitList {
	switch li {
	case listDense:
		return unitList{l.denseUnits, 3, 1, 2}
	case listMedium:
		return unitList{l.mediumUnits, 3, 1, 2}
	}
	return unitList{l.sparseUnits, 4, 0, 1}
}

func (u unitList) n() int { return len(u.units) / u.stride }

// before is the tokens in units [0, i).
func (u unitList) before(i int) int {
	if i == 0 {
		return 0
	}
	return int(u.units[(i-1)*u.stride+u.hi] - u.units[u.lo])
}

// tokens is the word-major token range [lo, hi) of units r (lo = hi
// when r is empty).
func (u unitList) tokens(r unitRange) [2]uint32 {
	if r.n() <= 0 {
		return [2]uint32{}
	}
	return [2]uint32{u.units[r.lo*u.stride+u.lo], u.units[(r.hi-1)*u.stride+u.hi]}
}

// splitShares cuts every unit list into n ranges of about equal tokens.
func splitShares(l *layout, n int) []share {
	shares := make([]share, n)
	for li := range numLists {
		u := listOf(l, li)
		cost := func(i int) float64 { return float64(u.before(i)) }
		for p, r := range cutByCost(u.n(), cost, n) {
			*shares[p].list(li) = r
		}
	}
	return shares
}

// cutByCost cuts units [0, nu) into n consecutive ranges of about equal
// cost, where cost(i), nondecreasing, is the cost of units [0, i): range
// p ends at the first unit boundary whose cost reaches (p+1)/n of the
// whole.
func cutByCost(nu int, cost func(i int) float64, n int) []unitRange {
	out := make([]unitRange, n)
	total := cost(nu)
	cut := 0
	for p := range n {
		lo := cut
		for cut < nu && (p == n-1 || cost(cut) < total*float64(p+1)/float64(n)) {
			cut++
		}
		out[p] = unitRange{lo, cut}
	}
	return out
}

// recut cuts list u anew for the GPUs whose last ranges were ranges and
// whose sampling of them took times: it takes each range's time per
// token as its tokens' cost (the list's mean time per token for a range
// with no tokens or no time measured) and cuts the list into ranges of
// equal predicted time. With the cost even within each old range, one
// recut balances the GPUs exactly; the cost varies along a list (the
// dense words are in order of frequency), so the sampler recuts every
// iteration and follows it.
func recut(u unitList, ranges []unitRange, times []time.Duration) []unitRange {
	nu := u.n()
	var sumT float64
	for _, t := range times {
		sumT += t.Seconds()
	}
	mean := 1.0
	if total := u.before(nu); total > 0 && sumT > 0 {
		mean = sumT / float64(total)
	}
	// rate[p] is range p's time per token; start[p] the cost of the
	// units before it.
	rate := make([]float64, len(ranges))
	start := make([]float64, len(ranges))
	acc := 0.0
	for p, r := range ranges {
		tok := u.before(r.hi) - u.before(r.lo)
		rate[p] = mean
		if tok > 0 && times[p] > 0 {
			rate[p] = times[p].Seconds() / float64(tok)
		}
		start[p] = acc
		acc += rate[p] * float64(tok)
	}
	p := 0
	cost := func(i int) float64 {
		// cutByCost asks for nondecreasing i, so the range holding i
		// is found walking forward.
		for p < len(ranges)-1 && i > ranges[p].hi {
			p++
		}
		for p > 0 && i <= ranges[p].lo {
			p--
		}
		r := ranges[p]
		return start[p] + rate[p]*float64(u.before(i)-u.before(r.lo))
	}
	return cutByCost(nu, cost, len(ranges))
}

// tokenRanges are the word-major token ranges [lo, hi) that share s
// samples (empty ones left out).
func tokenRanges(l *layout, s share) [][2]uint32 {
	var out [][2]uint32
	for li := range numLists {
		if r := *s.list(li); r.n() > 0 {
			out = append(out, listOf(l, li).tokens(r))
		}
	}
	return out
}

// multiGPU runs one chain on several GPUs, as EZLDA scales out: each GPU
// holds the whole corpus and the counts (W replicated), samples its share
// of the tokens against the counts of the last iteration, and then every
// GPU receives the others' new topics, GPU to GPU, and recounts the same
// state. Since every token's draw depends only on the seed, the iteration
// and the token, the chain is the one GPU's and the CPU's, token for
// token, however the tokens are shared out.
//
// Two things keep the GPUs busy (measured in docs/workloads.md): a share's
// topics travel to the other GPUs list by list as each list's sampling
// ends, on a copy stream beside the sampling of the next list, so only the
// last list's copies stand between the sampling and the recount; and the
// shares are cut anew every iteration from each GPU's time per token of
// each list in the last one, since equal tokens are not equal work (a
// frequent word's tokens share their documents' passes more often).
type multiGPU struct {
	parts []*gpuEngine
	lanes []lane
	// shards[p] is the rows parts[p] recounts for all.
	shards []*recount
	// own[p] is the token ranges parts[p] samples.
	own [][][2]uint32
}

// The marks of an iteration in each GPU's queue: before the tables, after
// them, and after each list's sampling (markList+li).
const (
	markStart = 0
	markPrep  = 1
	markList  = 2
	// markDocs and markDense follow the recount's document and dense
	// word rows.
	markDocs  = markList + numLists
	markDense = markDocs + 1
	numMarks  = markDense + 1
)

func newMultiGPU(cfg Config, l *layout, devs []gpuDevice, block int) (_ *multiGPU, err error) {
	m := &multiGPU{}
	defer func() {
		if err != nil {
			err = errors.Join(err, m.close())
			for _, d := range devs[len(m.parts):] {
				err = errors.Join(err, d.Close())
			}
		}
	}()
	for _, d := range devs {
		g, err := newGPUEngineOn(cfg, l, d, block)
		if err != nil {
			return nil, err
		}
		m.parts = append(m.parts, g)
		ln, err := newLane(d)
		if err != nil {
			return nil, err
		}
		m.lanes = append(m.lanes, ln)
	}
	for i, a := range devs {
		for j, b := range devs {
			if i != j {
				if err := a.EnablePeer(b); err != nil {
					return nil, err
				}
			}
		}
	}
	m.setShares(splitShares(l, len(devs)))
	for p, r := range splitRecounts(l, len(devs)) {
		m.shards = append(m.shards, &r)
		if err := r.upload(m.parts[p]); err != nil {
			return nil, err
		}
	}
	return m, nil
}

func (m *multiGPU) setShares(shares []share) {
	m.own = m.own[:0]
	for p, s := range shares {
		m.parts[p].part = s
		m.own = append(m.own, tokenRanges(m.parts[p].l, s))
	}
}

func (m *multiGPU) setTwoBranch(on bool) {
	for _, g := range m.parts {
		g.twoBranch = on
	}
}

func (m *multiGPU) name() string {
	info := m.parts[0].dev.Info()
	return fmt.Sprintf("GPUs %d-%d (%d× %s)", info.Ordinal, m.parts[len(m.parts)-1].dev.Info().Ordinal, len(m.parts), info.Name)
}

func (m *multiGPU) bytes() int64 {
	var n int64
	for _, g := range m.parts {
		n += g.bytes()
	}
	return n
}

func (m *multiGPU) initialise(ctx context.Context) error {
	for _, g := range m.parts {
		if err := g.initialise(ctx); err != nil {
			return err
		}
	}
	return nil
}

// all runs f for every GPU in turn, naming the GPU in its error.
func (m *multiGPU) all(f func(p int, g *gpuEngine) error) error {
	for p, g := range m.parts {
		if err := f(p, g); err != nil {
			return fmt.Errorf("%s: %w", g.name(), err)
		}
	}
	return nil
}

// step queues the whole iteration on every GPU before waiting for any:
// the tables and then each list's sampling, a mark after each; the
// copies of each list's new topics to every other GPU once its owner has
// passed that list's mark; then on each GPU, once its copies are in, the
// recount. The iteration's sampling time is the slowest GPU's, from its
// start to its last list's mark, and its rebuild the rest of the slowest
// GPU's iteration.
func (m *multiGPU) step(ctx context.Context) (stepStats, error) {
	var st stepStats
	if err := ctx.Err(); err != nil {
		return st, err
	}
	err := m.all(func(p int, g *gpuEngine) error {
		g.iter++
		ln := m.lanes[p]
		if err := errors.Join(g.dev.Start(), ln.mark(markStart), g.prep(), ln.mark(markPrep), g.drawStart()); err != nil {
			return err
		}
		for li := range numLists {
			if err := g.drawList(li); err != nil {
				return err
			}
			if err := ln.mark(markList + li); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return st, err
	}
	if err := m.exchange(); err != nil {
		return st, err
	}
	if err := m.recount(); err != nil {
		return st, err
	}
	// times[li][p] is GPU p's sampling of list li.
	times := make([][]time.Duration, numLists)
	var slowest time.Duration
	err = m.all(func(p int, g *gpuEngine) error {
		total, err := g.dev.Stop()
		if err != nil {
			return err
		}
		slowest = max(slowest, total)
		ln := m.lanes[p]
		sample, err := ln.since(markStart, markList+numLists-1)
		if err != nil {
			return err
		}
		st.sample = max(st.sample, sample)
		for li := range numLists {
			d, err := ln.since(markList+li-1, markList+li)
			if err != nil {
				return err
			}
			times[li] = append(times[li], d)
		}
		return nil
	})
	if err != nil {
		return st, err
	}
	st.rebuild = max(0, slowest-st.sample)
	if st.shortcuts, err = m.shortcuts(); err != nil {
		return st, err
	}
	m.rebalance(times)
	return st, nil
}

// exchange queues, on every GPU, the copies of the other GPUs' new topics
// into its znew, list by list, each after its owner's mark for that list;
// then makes the GPU's later work wait for them.
func (m *multiGPU) exchange() error {
	for li := range numLists {
		u := listOf(m.parts[0].l, li)
		err := m.all(func(p int, g *gpuEngine) error {
			for q, src := range m.parts {
				r := u.tokens(*src.part.list(li))
				if q == p || r[1] == r[0] {
					continue
				}
				off, n := 4*int64(r[0]), 4*int64(r[1]-r[0])
				if err := m.lanes[p].copyAfter(g.znew, m.lanes[q], src.znew, markList+li, off, n); err != nil {
					return fmt.Errorf("topics from %s: %w", src.name(), err)
				}
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	return m.all(func(p int, _ *gpuEngine) error { return m.lanes[p].join() })
}

// recount queues on every GPU the count rebuild from the exchanged
// topics: its share of the document and dense word rows, a mark after
// each, and the rest whole; then the copies of the other GPUs' rows, each
// after its owner's mark and this GPU's own (its sampling has read the
// old rows and its rebuild has zeroed the dense ones); then makes the
// GPU's later work wait for them.
func (m *multiGPU) recount() error {
	err := m.all(func(p int, g *gpuEngine) error {
		g.z, g.znew = g.znew, g.z
		for _, st := range g.rebuildStages(m.shards[p]) {
			if err := st.run(); err != nil {
				return err
			}
			switch st.name {
			case stageDocs:
				if err := m.lanes[p].mark(markDocs); err != nil {
					return err
				}
			case stageDense:
				if err := m.lanes[p].mark(markDense); err != nil {
					return err
				}
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	for _, mark := range []int{markDocs, markDense} {
		err := m.all(func(p int, g *gpuEngine) error {
			if err := m.lanes[p].waitOwn(mark); err != nil {
				return err
			}
			for q, src := range m.parts {
				if q == p {
					continue
				}
				// The same rows in the source's buffers and in this GPU's.
				from, to := m.shards[q].copies(src), m.shards[q].copies(g)
				for i, r := range from {
					if r.mark != mark || r.hi == r.lo {
						continue
					}
					if err := m.lanes[p].copyAfter(to[i].buf, m.lanes[q], r.buf, r.mark, r.lo, r.hi-r.lo); err != nil {
						return fmt.Errorf("counts from %s: %w", src.name(), err)
					}
				}
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	return m.all(func(p int, _ *gpuEngine) error { return m.lanes[p].join() })
}

// rebalance cuts every list anew from the GPUs' times of the last
// sampling (times[li][p]).
func (m *multiGPU) rebalance(times [][]time.Duration) {
	shares := make([]share, len(m.parts))
	for p, g := range m.parts {
		shares[p] = g.part
	}
	for li := range numLists {
		ranges := make([]unitRange, len(m.parts))
		for p := range m.parts {
			ranges[p] = *shares[p].list(li)
		}
		for p, r := range recut(listOf(m.parts[0].l, li), ranges, times[li]) {
			*shares[p].list(li) = r
		}
	}
	m.setShares(shares)
}

// gather copies every other GPU's new topics into GPU p's znew, ordered
// with both GPUs' work (CopyPeer): the exchange without overlap, which
// the phase benchmark times alone.
func (m *multiGPU) gather(p int) error {
	g := m.parts[p]
	for q, src := range m.parts {
		if q == p {
			continue
		}
		for _, r := range m.own[q] {
			off, n := 4*int64(r[0]), 4*int64(r[1]-r[0])
			if err := g.dev.CopyPeer(g.znew, off, src.znew, off, n); err != nil {
				return fmt.Errorf("topics from %s: %w", src.name(), err)
			}
		}
	}
	return nil
}

// shortcuts sums the GPUs' shortcut counts of the last sampling.
func (m *multiGPU) shortcuts() (int64, error) {
	var total int64
	for _, g := range m.parts {
		n, err := g.shortcuts()
		if err != nil {
			return 0, err
		}
		total += n
	}
	return total, nil
}

// state, logLikelihood and check read GPU 0's counts: the exchange makes
// every GPU's the same, which check verifies on each.
func (m *multiGPU) state(ctx context.Context) (*counts, []uint32, error) {
	return m.parts[0].state(ctx)
}

func (m *multiGPU) logLikelihood(ctx context.Context) (float64, error) {
	return m.parts[0].logLikelihood(ctx)
}

func (m *multiGPU) check(ctx context.Context) error {
	for _, g := range m.parts {
		if err := g.check(ctx); err != nil {
			return fmt.Errorf("%s: %w", g.name(), err)
		}
	}
	return nil
}

func (m *multiGPU) close() error {
	var err error
	for _, ln := range m.lanes {
		err = errors.Join(err, ln.close())
	}
	m.lanes = nil
	for _, r := range m.shards {
		err = errors.Join(err, r.free())
	}
	m.shards = nil
	for _, g := range m.parts {
		err = errors.Join(err, g.close())
	}
	m.parts = nil
	return err
}
