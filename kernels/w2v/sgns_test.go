package w2v

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

func TestExpTableIsTheLogistic(t *testing.T) {
	tab := newExpTable()
	for _, f := range []float32{-5.99, -3, -0.5, 0, 0.01, 1, 2.5, 5.99} {
		g := gradient(f, 1, 1, tab) // 1 - sigma(f)
		want := 1 - 1/(1+math.Exp(-float64(f)))
		// A cell is 12/1000 wide; sigma' <= 1/4.
		if math.Abs(float64(g)-want) > 0.25*12.0/1000+1e-6 {
			t.Errorf("1 - sigma(%g) from the table = %g, want %g", f, g, want)
		}
	}
	for _, c := range []struct{ f, label, want float32 }{
		{6, 1, 0}, {100, 1, 0}, {6, 0, -1}, {-6, 1, 1}, {-100, 0, 0},
	} {
		if g := gradient(c.f, c.label, 1, tab); g != c.want {
			t.Errorf("gradient(f=%g, label %g) = %g, want the saturated %g", c.f, c.label, g, c.want)
		}
	}
}

func TestDotFollowsTheLanes(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, c := range []struct{ dim, warps int }{{1, 1}, {31, 1}, {32, 1}, {100, 1}, {256, 1}, {300, 10}, {1024, 32}} {
		x, y := make([]float32, c.dim), make([]float32, c.dim)
		var exact float64
		for i := range x {
			x[i], y[i] = float32(rng.NormFloat64()), float32(rng.NormFloat64())
			exact += float64(x[i]) * float64(y[i])
		}
		lay := newLayout(c.dim, c.warps)
		got := lay.dot(x, y, make([]float32, 32*c.warps))
		if math.Abs(float64(got)-exact) > 1e-5*float64(c.dim) {
			t.Errorf("d=%d, %d warps: dot %g, want about %g", c.dim, c.warps, got, exact)
		}
		// The lane order by hand: lane sums, butterfly, warps in order.
		lanes := 32 * c.warps
		part := make([]float32, lanes)
		for e := range x {
			part[e%lanes] += float32(x[e] * y[e])
		}
		var want float32
		for w := 0; w < c.warps; w++ {
			p := part[32*w : 32*w+32]
			for s := 16; s >= 1; s >>= 1 {
				next := slices.Clone(p)
				for j := range p {
					next[j] = p[j] + p[j^s]
				}
				p = next
			}
			if w == 0 {
				want = p[0]
			} else {
				want += p[0]
			}
		}
		if got != want {
			t.Errorf("d=%d, %d warps: dot %g, the lanes by hand give %g", c.dim, c.warps, got, want)
		}
	}
}

// naiveSentence is the package comment's definition written without the
// ring: every position has its own copy, read when it enters the window
// and written back when it leaves.
func naiveSentence(m *model, toks, negs []int32, n, wf int, alpha float32) {
	L, d := len(toks), m.dim
	if L < 2 {
		return
	}
	cur := make([][]float32, L)
	orig := make([][]float32, L)
	read := func(p int) {
		cur[p] = slices.Clone(m.syn0[int(toks[p])*d : int(toks[p])*d+d])
		orig[p] = slices.Clone(cur[p])
	}
	write := func(p int) {
		row := m.syn0[int(toks[p])*d : int(toks[p])*d+d]
		for e := range row {
			row[e] += cur[p][e] - orig[p][e]
		}
		cur[p] = nil // a use after this would panic
	}
	for p := 0; p <= wf && p < L; p++ {
		read(p)
	}
	lanes := make([]float32, 32*m.lay.warps)
	for w := 0; w < L; w++ {
		for t := 0; t <= n; t++ {
			id, label := toks[w], float32(1)
			if t > 0 {
				id, label = negs[w*n+t-1], 0
			}
			row := m.syn1[int(id)*d : int(id)*d+d]
			o, o0 := slices.Clone(row), slices.Clone(row)
			for p := w - wf; p <= w+wf; p++ {
				if p < 0 || p >= L || p == w {
					continue
				}
				g := gradient(m.lay.dot(cur[p], o, lanes), label, alpha, m.table)
				pair(cur[p], o, g)
			}
			for e := range row {
				row[e] += o[e] - o0[e]
			}
		}
		if w-wf >= 0 {
			write(w - wf)
		}
		if w+wf+1 < L {
			read(w + wf + 1)
		}
	}
	for p := max(0, L-wf); p < L; p++ {
		write(p)
	}
}

func TestTrainSentenceRingMatchesPerPositionCopies(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, c := range []struct{ wf, n int }{{1, 3}, {2, 5}, {3, 5}, {5, 1}, {3, 13}} {
		wf, n := c.wf, c.n
		for _, L := range []int{0, 1, 2, wf, 2 * wf, 2*wf + 1, 2*wf + 2, 40} {
			const d, vocab = 40, 7
			cfg := DefaultConfig()
			cfg.Dim = d
			lay, _ := cfg.layout()
			toks, negs := make([]int32, L), make([]int32, L*n)
			for i := range toks {
				toks[i] = int32(rng.IntN(vocab))
			}
			for i := range negs {
				negs[i] = int32(rng.IntN(vocab))
			}
			syn0, syn1 := make([]float32, vocab*d), make([]float32, vocab*d)
			for i := range syn0 {
				syn0[i], syn1[i] = float32(rng.Float64()-0.5), float32(rng.Float64()-0.5)
			}
			a := &model{syn0: slices.Clone(syn0), syn1: slices.Clone(syn1), dim: d, lay: lay, table: newExpTable()}
			b := &model{syn0: slices.Clone(syn0), syn1: slices.Clone(syn1), dim: d, lay: lay, table: newExpTable()}
			a.trainSentence(toks, negs, n, wf, 0.05, newSentenceScratch(d, wf))
			naiveSentence(b, toks, negs, n, wf, 0.05)
			if !slices.Equal(a.syn0, b.syn0) || !slices.Equal(a.syn1, b.syn1) {
				t.Errorf("W_f=%d, N=%d, L=%d: the ring's result differs from per-position copies", wf, n, L)
			}
			changed := !slices.Equal(a.syn0, syn0)
			if changed != (L >= 2) {
				t.Errorf("W_f=%d, N=%d, L=%d: weights changed = %v", wf, n, L, changed)
			}
		}
	}
}

// A pair of words seen together (label 1) gets a higher dot product; a
// negative pair a lower one: the update descends the SGNS loss.
func TestTrainSentenceDescendsTheLoss(t *testing.T) {
	const d, n = 16, 1
	cfg := DefaultConfig()
	cfg.Dim = d
	lay, _ := cfg.layout()
	m := &model{syn0: make([]float32, 3*d), syn1: make([]float32, 3*d), dim: d, lay: lay, table: newExpTable()}
	rng := rand.New(rand.NewPCG(1, 1))
	for i := range m.syn0 {
		m.syn0[i], m.syn1[i] = float32(rng.Float64()-0.5)*0.2, float32(rng.Float64()-0.5)*0.2
	}
	dot := func(a []float32, i int, b []float32, j int) float64 {
		var s float64
		for e := 0; e < d; e++ {
			s += float64(a[i*d+e]) * float64(b[j*d+e])
		}
		return s
	}
	pos0, neg0 := dot(m.syn0, 1, m.syn1, 0), dot(m.syn0, 1, m.syn1, 2)
	// Sentence "0 1": centre 0 has context 1 and negative 2.
	m.trainSentence([]int32{0, 1}, []int32{2, 2}, n, 1, 0.5, newSentenceScratch(d, 1))
	pos1, neg1 := dot(m.syn0, 1, m.syn1, 0), dot(m.syn0, 1, m.syn1, 2)
	if !(pos1 > pos0) || !(neg1 < neg0) {
		t.Errorf("after training: context.centre %g -> %g (want up), context.negative %g -> %g (want down)", pos0, pos1, neg0, neg1)
	}
}

// The assembly (simd_amd64.s) computes exactly what its Go definition
// does, for every length and tail.
func TestSIMDMatchesGo(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 9))
	for _, n := range []int{0, 1, 3, 4, 5, 31, 32, 33, 64, 100, 128, 257} {
		x, y := make([]float32, n), make([]float32, n)
		for i := range x {
			x[i], y[i] = float32(rng.NormFloat64()), float32(rng.NormFloat64()*1e-3)
		}
		if blocks := n / 32; blocks > 0 {
			var a, b [32]float32
			for j := range a {
				a[j] = float32(rng.NormFloat64())
			}
			b = a
			laneAddBlocks(&a, &x[0], &y[0], blocks)
			for k := 0; k < blocks; k++ {
				laneAddGo(&b, (*[32]float32)(x[32*k:]), (*[32]float32)(y[32*k:]))
			}
			if a != b {
				t.Errorf("n=%d: laneAddBlocks differs from laneAddGo", n)
			}
			var z [32]float32
			for k := 0; k < blocks; k++ {
				laneAddGo(&z, (*[32]float32)(x[32*k:]), (*[32]float32)(y[32*k:]))
			}
			if got, want := dotLanes(&x[0], &y[0], blocks), butterfly(&z); got != want {
				t.Errorf("n=%d: dotLanes %g, lanes and butterfly in Go %g", n, got, want)
			}
		}
		g := float32(rng.NormFloat64())
		c1, o1 := slices.Clone(x), slices.Clone(y)
		c2, o2 := slices.Clone(x), slices.Clone(y)
		pair(c1, o1, g)
		pairGo(c2, o2, g)
		if !slices.Equal(c1, c2) || !slices.Equal(o1, o2) {
			t.Errorf("n=%d: pair differs from pairGo", n)
		}
		y1, y2 := slices.Clone(y), slices.Clone(y)
		axpy(y1, x, g)
		axpyGo(y2, x, g)
		if !slices.Equal(y1, y2) || slices.Equal(y1, y) && n > 0 {
			t.Errorf("n=%d: axpy differs from axpyGo, or changed nothing", n)
		}
	}
}
