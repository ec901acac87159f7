package w2v

import "math"

// word2vec's logistic table: expTableSize values of sigma over [-maxExp,
// maxExp), looked up at int((f + maxExp) * expScale).
const (
	expTableSize = 1000
	maxExp       = 6
	expScale     = float32(expTableSize) / (2 * maxExp)
)

// newExpTable computes sigma at the left end of each of the table's cells,
// in float64, rounded to float32 (the GPU gets this same table).
func newExpTable() []float32 {
	t := make([]float32, expTableSize)
	for i := range t {
		e := math.Exp((float64(i)/expTableSize*2 - 1) * maxExp)
		t[i] = float32(e / (e + 1))
	}
	return t
}

// gradient is g = (label - sigma(f)) * alpha with sigma from the table, as
// w2v.cu's w2v_gradient computes it.
func gradient(f, label, alpha float32, table []float32) float32 {
	var s float32
	switch {
	case f >= maxExp:
		s = 1
	case f <= -maxExp:
		s = 0
	default:
		i := int(float32(f+maxExp) * expScale)
		s = table[min(max(i, 0), expTableSize-1)]
	}
	return float32(label-s) * alpha
}

// dot is x . y in the layout's order (see the package comment). lanes is
// scratch of at least 32*warps elements.
func (l layout) dot(x, y []float32, lanes []float32) float32 {
	x, y = x[:l.dim], y[:l.dim]
	if l.warps == 1 {
		var p [32]float32
		base := 0
		for ; base+32 <= len(x); base += 32 {
			laneAdd(&p, (*[32]float32)(x[base:]), (*[32]float32)(y[base:]))
		}
		if base < len(x) {
			xs, ys := x[base:], y[base:]
			ys = ys[:len(xs)]
			for j := range xs {
				p[j] += float32(xs[j] * ys[j])
			}
		}
		return butterfly(&p)
	}
	// One element per thread: lane t holds element t, if any.
	var total float32
	for w := 0; w < l.warps; w++ {
		var p [32]float32
		lo := w * 32
		if lo+32 <= len(x) {
			laneAdd(&p, (*[32]float32)(x[lo:]), (*[32]float32)(y[lo:]))
		} else if lo < len(x) {
			xs, ys := x[lo:], y[lo:]
			ys = ys[:len(xs)]
			for j := range xs {
				p[j] += float32(xs[j] * ys[j])
			}
		}
		s := butterfly(&p)
		if w == 0 {
			total = s
		} else {
			total += s
		}
	}
	return total
}

// laneAdd adds x[j]*y[j] to lane j's sum, 32 lanes, in eight independent
// chains the CPU can overlap (the order within each lane is unchanged).
func laneAdd(p, x, y *[32]float32) {
	for j := 0; j < 32; j += 8 {
		p0 := p[j] + float32(x[j]*y[j])
		p1 := p[j+1] + float32(x[j+1]*y[j+1])
		p2 := p[j+2] + float32(x[j+2]*y[j+2])
		p3 := p[j+3] + float32(x[j+3]*y[j+3])
		p4 := p[j+4] + float32(x[j+4]*y[j+4])
		p5 := p[j+5] + float32(x[j+5]*y[j+5])
		p6 := p[j+6] + float32(x[j+6]*y[j+6])
		p7 := p[j+7] + float32(x[j+7]*y[j+7])
		p[j], p[j+1], p[j+2], p[j+3], p[j+4], p[j+5], p[j+6], p[j+7] = p0, p1, p2, p3, p4, p5, p6, p7
	}
}

// butterfly reduces 32 lane sums as __shfl_xor_sync does: at step s lane j
// adds lane j^s; every lane ends with lane 0's value, computed here.
func butterfly(p *[32]float32) float32 {
	for j := 0; j < 16; j++ {
		p[j] += p[j+16]
	}
	for j := 0; j < 8; j++ {
		p[j] += p[j+8]
	}
	for j := 0; j < 4; j++ {
		p[j] += p[j+4]
	}
	p[0] += p[2]
	p[1] += p[3]
	return p[0] + p[1]
}

// pair updates a context copy c and an output o with gradient g:
// c <- c + g*o, o <- o + g*c(old), element by element.
func pair(c, o []float32, g float32) {
	o = o[:len(c)]
	i := 0
	for ; i+4 <= len(c); i += 4 {
		cc, oo := (*[4]float32)(c[i:]), (*[4]float32)(o[i:])
		c0, c1, c2, c3 := cc[0], cc[1], cc[2], cc[3]
		o0, o1, o2, o3 := oo[0], oo[1], oo[2], oo[3]
		cc[0], cc[1], cc[2], cc[3] = c0+float32(g*o0), c1+float32(g*o1), c2+float32(g*o2), c3+float32(g*o3)
		oo[0], oo[1], oo[2], oo[3] = o0+float32(g*c0), o1+float32(g*c1), o2+float32(g*c2), o3+float32(g*c3)
	}
	for ; i < len(c); i++ {
		ce, oe := c[i], o[i]
		c[i] = ce + float32(g*oe)
		o[i] = oe + float32(g*ce)
	}
}

// sentenceScratch is one trainer's working memory: the ring of context
// copies and their values at read time, and the output row with its value
// at read time.
type sentenceScratch struct {
	ring, orig []float32 // (2*W_f+1) x d
	o, o0      []float32
	lanes      []float32
}

func newSentenceScratch(dim, wf int) *sentenceScratch {
	r := (2*wf + 1) * dim
	return &sentenceScratch{ring: make([]float32, r), orig: make([]float32, r),
		o: make([]float32, dim), o0: make([]float32, dim), lanes: make([]float32, 32*((dim+31)/32))}
}

// model is what a sentence reads and updates: the input vectors syn0 and
// the output vectors syn1neg, V x d each, with the layout and the sigmoid
// table. Concurrent sentences on a shared model race like word2vec's
// threads; rowLoad and rowAddDelta (race.go) are the only accesses to it.
type model struct {
	syn0, syn1 []float32
	dim        int
	lay        layout
	table      []float32
}

// trainSentence trains one sentence: toks are its kept tokens, negs its N
// negatives per position (len(toks)*n), alpha its learning rate, wf the
// fixed window. It is the computation of w2v.cu's kernels for one sentence.
func (m *model) trainSentence(toks, negs []int32, n, wf int, alpha float32, sc *sentenceScratch) {
	L := len(toks)
	if L < 2 {
		return
	}
	d := m.dim
	r := 2*wf + 1
	slot := func(p int) int { return (p % r) * d }
	load := func(p int) {
		s := slot(p)
		rowLoad(sc.ring[s:s+d], m.syn0, int(toks[p]), d)
		copy(sc.orig[s:s+d], sc.ring[s:s+d])
	}
	store := func(p int) {
		s := slot(p)
		rowAddDelta(m.syn0, int(toks[p]), d, sc.ring[s:s+d], sc.orig[s:s+d])
	}
	for p := 0; p <= min(wf, L-1); p++ {
		load(p)
	}
	o, o0 := sc.o, sc.o0
	for w := 0; w < L; w++ {
		lo, hi := max(0, w-wf), min(L-1, w+wf)
		for t := 0; t <= n; t++ {
			id, label := toks[w], float32(1)
			if t > 0 {
				id, label = negs[w*n+t-1], 0
			}
			rowLoad(o, m.syn1, int(id), d)
			copy(o0, o)
			for p := lo; p <= hi; p++ {
				if p == w {
					continue
				}
				s := slot(p)
				c := sc.ring[s : s+d]
				g := gradient(m.lay.dot(c, o, sc.lanes), label, alpha, m.table)
				pair(c, o, g)
			}
			rowAddDelta(m.syn1, int(id), d, o, o0)
		}
		if p := w - wf; p >= 0 {
			store(p)
		}
		if p := w + wf + 1; p < L {
			load(p)
		}
	}
	for p := max(0, L-wf); p < L; p++ {
		store(p)
	}
}
