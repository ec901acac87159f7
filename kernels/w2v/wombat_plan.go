package w2v

import (
	"fmt"
	"math"
	"slices"

	"github.com/heatsink-hpc/heatsink/kernels/cuda"
)

// Wombat on the GPU (Simonton and Alaghband): the host reads the corpus
// and draws (the sampler's Philox numbers, as every trainer here) each
// launch's windows. By default (layout windows) a warp trains a whole
// window, wombat_windows in w2v.cu, whose arithmetic trainWindows
// transcribes: the context rows read once, the outputs four at a time as
// 4x8 sub-matrices, the contexts' updates added once per window. In the
// paper's layout (tiles, Algorithms 2-4) the host cuts each window's
// output x context pairs into
//
//   - tiles of 4 outputs x at most 8 contexts, trained by w2v.cu's
//     wombat_tiles, a warp per tile: the rows in shared memory, a thread
//     per pair, the updates G^T Wo and G Wi reduced by shuffles;
//   - the pairs of the last k mod 4 outputs, trained one per warp by
//     wombat_pairs (the vector kernel).
//
// The paper's tiles are exactly 4x8; here a window with fewer than 8
// contexts (all of them at the benchmark's W=5, whose fixed window has 6)
// fills a tile's first columns and leaves the rest of its lanes idle, or
// no tile would ever form; more than 8 contexts take more tiles.
//
// The arithmetic of a tile: thread (r, c) computes f = Wo[r] . Wi[c]
// over e = 0..d-1 in order from 0, and its g as every trainer here (for
// hierarchical softmax g = 0 where |f| >= 6); then for each element e,
// Uo[r][e] is the sum over c of g*Wi[c][e] as shuffles down by 4, 2, 1
// add it, ((c0+c4)+(c2+c6)) + ((c1+c5)+(c3+c7)), an idle column adding
// 0, and Ui[c][e] the sum over r by 16, 8, (r0+r2) + (r1+r3); each goes to
// its row by one atomicAdd. A pair is the warp layout's dot product, g,
// then syn0 += g*o and syn1 += g*c(old) element by element (nothing for a
// skipped hierarchical-softmax pair). A launch trains its tiles, then its
// pairs. trainPlan is this computation in Go: one warp at a time on the GPU
// (Device.sequential) gives the same weights bit for bit, where no tile
// names a row twice (atomics to one address from one instruction land in
// an order the hardware picks). The CPU trainer with kernel=wombat is
// Algorithm 1 instead, a whole window per step with the warp layout's dot
// products: the same draws, not the same sums.

// A plan holds each window once and, by window, where each starts, or its
// tiles and pairs as indices into it, int32s each (wombat_tile_ints in
// w2v.cu):
//
//   - a window: alpha's bits, the number of contexts nc, the nc
//     contexts, then the outputs, each with its label (1 - code) in bit
//     31;
//   - a tile: its window's offset in the windows, then j<<8 | i: outputs
//     j..j+3 against contexts i..min(i+8, nc)-1;
//   - a pair: its window's offset, then j<<8 | c: output j, context c.
//
// Tile and pair records of their own (16 and 4 ints, each naming its rows,
// labels and alpha) were about 340 bytes a kept token for hierarchical
// softmax over text8's vocabulary, which the host's cores wrote and the
// copies moved; these are about half that.
const (
	wombatTileInts = 2
	wombatPairInts = 2
	wombatTileRows = 4
	wombatTileCols = 8
	// wombatMaxContexts is the most contexts a window may have: i and c
	// take 8 bits of an index.
	wombatMaxContexts = 255
)

// wombatPlan is one launch's work: its windows, and either their tiles
// and pairs (the paper's two kernels) or, byWindow, where each window
// starts (wombat_windows; starts[i+1] is where window i ends). A plan for
// the CUDA driver's GPU lives in page-locked memory (host, viewed as
// ints): room for cap.tiles tiles, then cap.windows ints of windows, then
// cap.pairs pairs, then cap.starts starts.
type wombatPlan struct {
	windows, tiles, pairs, starts []int32
	byWindow                      bool
	// drawOnDevice: the plan's negatives are drawn on the GPU
	// (wombat_negatives) before its windows train. Until then a window's
	// first negative slot holds its centre's corpus position less base,
	// the rest 0 (sampler.prepareForDevice), and the plan records every
	// window's start in either layout, where the kernel finds them.
	drawOnDevice bool
	epoch        int
	base         int64
	kept         int64
	host         *cuda.HostBuffer
	ints         []int32
	cap          planCaps
}

// planCaps is the room a plan's records need or have.
type planCaps struct{ tiles, windows, pairs, starts int }

// ints is the int32s of room for c.
func (c planCaps) ints() int {
	return wombatTileInts*c.tiles + c.windows + wombatPairInts*c.pairs + c.starts
}

// startsWindows reports whether the plan records where each window starts.
func (p *wombatPlan) startsWindows() bool { return p.byWindow || p.drawOnDevice }

// holds reports whether every record of p fits in c.
func (c planCaps) holds(p *wombatPlan) bool {
	return p.ntiles() <= c.tiles && len(p.windows) <= c.windows && p.npairs() <= c.pairs && len(p.starts) <= c.starts
}

func (c planCaps) String() string {
	return fmt.Sprintf("%d tiles, %d window ints, %d pairs and %d starts", c.tiles, c.windows, c.pairs, c.starts)
}

// size is what p holds, as planCaps.
func (p *wombatPlan) size() planCaps {
	return planCaps{p.ntiles(), len(p.windows), p.npairs(), len(p.starts)}
}

func (p *wombatPlan) reset() {
	p.windows, p.tiles, p.pairs, p.starts, p.kept = p.windows[:0], p.tiles[:0], p.pairs[:0], p.starts[:0], 0
	if p.ints != nil {
		t := p.cap.tiles * wombatTileInts
		w := t + p.cap.windows
		q := w + p.cap.pairs*wombatPairInts
		p.tiles, p.windows, p.pairs, p.starts = p.ints[:0:t], p.ints[t:t:w], p.ints[w:w:q], p.ints[q:q:len(p.ints)]
	}
	if p.startsWindows() {
		p.starts = append(p.starts, 0)
	}
}

// nwindows is the windows of a plan by window.
func (p *wombatPlan) nwindows() int { return max(len(p.starts)-1, 0) }

func (p *wombatPlan) ntiles() int { return len(p.tiles) / wombatTileInts }
func (p *wombatPlan) npairs() int { return len(p.pairs) / wombatPairInts }

// wombatLabelBit marks an output whose label is 1.
const wombatLabelBit = -1 << 31

// tile is tile t's outputs, their labels as bits (output r's in bit r),
// contexts (1 to 8) and alpha.
func (p *wombatPlan) tile(t int) (out [wombatTileRows]int32, bits int32, ctx []int32, alpha float32) {
	W := p.windows[p.tiles[t*wombatTileInts]:]
	jc := p.tiles[t*wombatTileInts+1]
	j, i, nc := int(jc>>8), int(jc&255), int(W[1])
	for r := range out {
		o := W[2+nc+j+r]
		out[r] = o &^ wombatLabelBit
		if o < 0 {
			bits |= 1 << r
		}
	}
	return out, bits, W[2+i : 2+min(nc, i+wombatTileCols)], math.Float32frombits(uint32(W[0]))
}

// pair is pair q's output, context, label and alpha.
func (p *wombatPlan) pair(q int) (out, ctx int32, label, alpha float32) {
	W := p.windows[p.pairs[q*wombatPairInts]:]
	jc := p.pairs[q*wombatPairInts+1]
	j, c, nc := int(jc>>8), int(jc&255), int(W[1])
	o := W[2+nc+j]
	if o < 0 {
		label = 1
	}
	return o &^ wombatLabelBit, W[2+c], label, math.Float32frombits(uint32(W[0]))
}

// addWindow adds one window (outputs out with word2vec's codes, label
// 1-code, and contexts ctx, at most wombatMaxContexts) and, unless the
// plan is by window, cuts it into tiles and pairs (Algorithm 2, lines
// 3-5). The records are written in
// place: in page-locked memory, every field each time.
func (p *wombatPlan) addWindow(out []int32, codes []uint8, ctx []int32, alpha float32) {
	k, n := len(out), len(ctx)
	if n == 0 {
		return
	}
	w0 := len(p.windows)
	p.windows = slices.Grow(p.windows, 2+n+k)[:w0+2+n+k]
	W := p.windows[w0:]
	W[0], W[1] = int32(math.Float32bits(alpha)), int32(n)
	copy(W[2:2+n], ctx)
	O := W[2+n:]
	for j, o := range out[:len(O)] {
		O[j] = o | int32(1-codes[j])<<31
	}
	if p.startsWindows() {
		p.starts = append(p.starts, int32(len(p.windows)))
	}
	if p.byWindow {
		return
	}
	w := int32(w0)
	full := k / wombatTileRows * wombatTileRows
	nt := full / wombatTileRows * ((n + wombatTileCols - 1) / wombatTileCols)
	t0 := len(p.tiles)
	p.tiles = slices.Grow(p.tiles, nt*wombatTileInts)[:t0+nt*wombatTileInts]
	T := p.tiles[t0:]
	for j := 0; j < full; j += wombatTileRows {
		for i := 0; i < n; i += wombatTileCols {
			T[0], T[1] = w, int32(j<<8|i)
			T = T[wombatTileInts:]
		}
	}
	np := (k - full) * n
	p0 := len(p.pairs)
	p.pairs = slices.Grow(p.pairs, np*wombatPairInts)[:p0+np*wombatPairInts]
	P := p.pairs[p0:]
	for j := full; j < k; j++ {
		for c := 0; c < n; c++ {
			P[0], P[1] = w, int32(j<<8|c)
			P = P[wombatPairInts:]
		}
	}
}

// addSentence adds a sentence's windows (the fixed window W_f, contexts
// in ascending position): outputs as the model's objective has them.
func (p *wombatPlan) addSentence(m *model, toks, negs []int32, n, wf int, alpha float32, sc *wombatScratch) {
	L := len(toks)
	p.kept += int64(L)
	if L < 2 {
		return
	}
	for w := 0; w < L; w++ {
		out, codes := m.planOutputs(toks, negs, w, n, sc)
		nc := 0
		for q := max(0, w-wf); q <= min(L-1, w+wf); q++ {
			if q != w {
				sc.ctx[nc] = toks[q]
				nc++
			}
		}
		p.addWindow(out, codes, sc.ctx[:nc], alpha)
	}
}

// planOutputs is centre w's outputs and codes, as outputs lists them
// but without copying a Huffman path: the tree's own slices (a fifth of
// a plan goroutine's time went to copying them and converting labels),
// or the centre and its n negatives with negative sampling's codes.
func (m *model) planOutputs(toks, negs []int32, w, n int, sc *wombatScratch) ([]int32, []uint8) {
	if m.hs != nil {
		codes, points := m.hs.path(toks[w])
		return points, codes
	}
	sc.out[0] = toks[w]
	copy(sc.out[1:1+n], negs[w*n:w*n+n])
	return sc.out[:1+n], sc.nsCodes[:1+n]
}

// wombatGradient is the kernels' g: hierarchical softmax's (0, and no
// training, outside (-6, 6)) or negative sampling's.
func (m *model) wombatGradient(f, label, alpha float32) (float32, bool) {
	if m.hs != nil {
		return gradientHS(f, label, alpha, m.table)
	}
	return gradient(f, label, alpha, m.table), true
}

// trainPlan is the GPU's computation of a plan, one tile and then one
// pair at a time (see above), on the model's rows directly: the kernels'
// reference.
func (m *model) trainPlan(p *wombatPlan) {
	if p.byWindow {
		m.trainWindows(p)
		return
	}
	d := m.dim
	var wo [wombatTileRows][]float32
	var wi [wombatTileCols][]float32
	for r := range wo {
		wo[r] = make([]float32, d)
	}
	for c := range wi {
		wi[c] = make([]float32, d)
	}
	for t := 0; t < p.ntiles(); t++ {
		out, bits, ctx, alpha := p.tile(t)
		nc := len(ctx)
		for r := 0; r < wombatTileRows; r++ {
			copy(wo[r], m.syn1[int(out[r])*d:int(out[r])*d+d])
		}
		for c := 0; c < nc; c++ {
			copy(wi[c], m.syn0[int(ctx[c])*d:int(ctx[c])*d+d])
		}
		var g [wombatTileRows][wombatTileCols]float32
		for r := 0; r < wombatTileRows; r++ {
			label := float32((bits >> r) & 1)
			for c := 0; c < nc; c++ {
				var f float32
				for e := 0; e < d; e++ {
					f += float32(wo[r][e] * wi[c][e])
				}
				g[r][c], _ = m.wombatGradient(f, label, alpha)
			}
		}
		for e := 0; e < d; e++ {
			for c := 0; c < nc; c++ {
				var v [4]float32
				for r := range v {
					v[r] = float32(g[r][c] * wo[r][e])
				}
				m.syn0[int(ctx[c])*d+e] += (v[0] + v[2]) + (v[1] + v[3])
			}
			for r := 0; r < wombatTileRows; r++ {
				var v [8]float32
				for c := 0; c < nc; c++ {
					v[c] = float32(g[r][c] * wi[c][e])
				}
				m.syn1[int(out[r])*d+e] += ((v[0] + v[4]) + (v[2] + v[6])) + ((v[1] + v[5]) + (v[3] + v[7]))
			}
		}
	}
	c, o := make([]float32, d), make([]float32, d)
	lanes := make([]float32, 32*((d+31)/32))
	for q := 0; q < p.npairs(); q++ {
		o32, c32, label, alpha := p.pair(q)
		out, ctx := int(o32), int(c32)
		copy(o, m.syn1[out*d:out*d+d])
		copy(c, m.syn0[ctx*d:ctx*d+d])
		g, ok := m.wombatGradient(m.lay.dot(c, o, lanes), label, alpha)
		if !ok {
			continue
		}
		for e := 0; e < d; e++ {
			m.syn0[ctx*d+e] += float32(g * o[e])
			m.syn1[out*d+e] += float32(g * c[e])
		}
	}
}

// trainWindows is wombat_windows's computation of a plan by window, one
// window at a time, on the model's rows directly: the kernel's reference.
// Idle rows and columns of a group hold 0 and their g's are 0, as in the
// kernel, so that every sum adds what the kernel's does.
func (m *model) trainWindows(p *wombatPlan) {
	d := m.dim
	lay := newLayout(d, 1)
	var wi, ui [wombatTileCols][]float32
	var wo [wombatTileRows][]float32
	for c := range wi {
		wi[c], ui[c] = make([]float32, d), make([]float32, d)
	}
	for r := range wo {
		wo[r] = make([]float32, d)
	}
	row := func(w []float32, i int32) []float32 { return w[int(i)*d : int(i)*d+d] }
	for w := 0; w < p.nwindows(); w++ {
		W := p.windows[p.starts[w]:p.starts[w+1]]
		alpha, ncw := math.Float32frombits(uint32(W[0])), int(W[1])
		C, O := W[2:2+ncw], W[2+ncw:]
		for i0 := 0; i0 < ncw; i0 += wombatTileCols {
			nc := min(wombatTileCols, ncw-i0)
			for c := range wi {
				clear(wi[c])
				clear(ui[c])
				if c < nc {
					copy(wi[c], row(m.syn0, C[i0+c]))
				}
			}
			for j := 0; j < len(O); j += wombatTileRows {
				nr := min(wombatTileRows, len(O)-j)
				var rows [wombatTileRows]int32
				var g [wombatTileRows * wombatTileCols]float32
				for r := range wo {
					clear(wo[r])
					if r < nr {
						rows[r] = O[j+r] &^ wombatLabelBit
						copy(wo[r], row(m.syn1, rows[r]))
					}
				}
				for r := 0; r < nr; r++ {
					label := float32(uint32(O[j+r]) >> 31)
					for c := 0; c < nc; c++ {
						g[8*r+c], _ = m.wombatGradient(lay.dot(wo[r], wi[c], nil), label, alpha)
					}
				}
				for e := 0; e < d; e++ {
					for q := 0; q < nc; q++ {
						u0, u1 := float32(g[q]*wo[0][e]), float32(g[8+q]*wo[1][e])
						u2, u3 := float32(g[16+q]*wo[2][e]), float32(g[24+q]*wo[3][e])
						ui[q][e] += (u0 + u2) + (u1 + u3)
					}
					for q := 0; q < nr; q++ {
						var v [wombatTileCols]float32
						for i := range v {
							v[i] = float32(g[8*q+i] * wi[i][e])
						}
						row(m.syn1, rows[q])[e] += ((v[0] + v[4]) + (v[2] + v[6])) + ((v[1] + v[5]) + (v[3] + v[7]))
					}
				}
			}
			for c := 0; c < nc; c++ {
				x := row(m.syn0, C[i0+c])
				for e := range x {
					x[e] += ui[c][e]
				}
			}
		}
	}
}
