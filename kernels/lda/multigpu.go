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

// share is what one GPU samples of an iteration: ranges of the dense,
// medium and small-word units. Each list's units are consecutive slices of
// the word-major tokens, so a range of them is one range of tokens.
type share struct{ dense, medium, sparse unitRange }

func wholeShare(l *layout) share {
	return share{unitRange{0, l.nDenseUnits()}, unitRange{0, l.nMediumUnits()}, unitRange{0, l.nSparseUnits()}}
}

// splitShares cuts every unit list into n ranges of about equal tokens.
func splitShares(l *layout, n int) []share {
	shares := make([]share, n)
	for li, list := range []struct {
		units  []uint32
		stride int
		lo, hi int // offsets of a unit's first and end token
	}{{l.denseUnits, 3, 1, 2}, {l.mediumUnits, 3, 1, 2}, {l.sparseUnits, 4, 0, 1}} {
		nu := len(list.units) / list.stride
		tokens := func(i int) int { // tokens in units [0, i)
			if i == 0 {
				return 0
			}
			first := list.units[list.lo]
			return int(list.units[(i-1)*list.stride+list.hi] - first)
		}
		total := tokens(nu)
		cut := 0
		for p := range n {
			lo := cut
			for cut < nu && (p == n-1 || tokens(cut) < total*(p+1)/n) {
				cut++
			}
			r := unitRange{lo, cut}
			switch li {
			case 0:
				shares[p].dense = r
			case 1:
				shares[p].medium = r
			default:
				shares[p].sparse = r
			}
		}
	}
	return shares
}

// tokenRanges are the word-major token ranges [lo, hi) that share s
// samples (empty ones left out).
func tokenRanges(l *layout, s share) [][2]uint32 {
	var out [][2]uint32
	for _, x := range []struct {
		units  []uint32
		stride int
		lo, hi int
		r      unitRange
	}{{l.denseUnits, 3, 1, 2, s.dense}, {l.mediumUnits, 3, 1, 2, s.medium}, {l.sparseUnits, 4, 0, 1, s.sparse}} {
		if x.r.n() > 0 {
			out = append(out, [2]uint32{x.units[x.r.lo*x.stride+x.lo], x.units[(x.r.hi-1)*x.stride+x.hi]})
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
// token.
type multiGPU struct {
	parts []*gpuEngine
	// own[p] is the token ranges parts[p] samples.
	own [][][2]uint32
}

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
	for p, s := range splitShares(l, len(devs)) {
		m.parts[p].part = s
		m.own = append(m.own, tokenRanges(l, s))
	}
	return m, nil
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

// each starts f on every GPU, then waits for all: the time of a stage is
// that of its slowest GPU.
func (m *multiGPU) each(ctx context.Context, f func(p int, g *gpuEngine) error) (time.Duration, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	for p, g := range m.parts {
		if err := g.dev.Start(); err != nil {
			return 0, err
		}
		if err := f(p, g); err != nil {
			return 0, fmt.Errorf("%s: %w", g.name(), err)
		}
	}
	var slowest time.Duration
	for _, g := range m.parts {
		d, err := g.dev.Stop()
		if err != nil {
			return 0, fmt.Errorf("%s: %w", g.name(), err)
		}
		slowest = max(slowest, d)
	}
	return slowest, nil
}

func (m *multiGPU) step(ctx context.Context) (stepStats, error) {
	var st stepStats
	var err error
	for _, g := range m.parts {
		g.iter++
	}
	if st.sample, err = m.each(ctx, func(_ int, g *gpuEngine) error { return g.sample() }); err != nil {
		return st, err
	}
	// The exchange counts as part of the rebuild: every GPU first takes
	// the others' topics (reading their znew before any swaps), then
	// recounts.
	st.rebuild, err = m.each(ctx, func(p int, g *gpuEngine) error {
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
		if p < len(m.parts)-1 {
			return nil
		}
		for _, g := range m.parts {
			g.z, g.znew = g.znew, g.z
		}
		for _, g := range m.parts {
			if err := g.rebuild(); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return st, err
	}
	for _, g := range m.parts {
		n, err := g.shortcuts()
		if err != nil {
			return st, err
		}
		st.shortcuts += n
	}
	return st, nil
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
	for _, g := range m.parts {
		err = errors.Join(err, g.close())
	}
	m.parts = nil
	return err
}
