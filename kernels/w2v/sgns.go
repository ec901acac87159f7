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
		blocks := len(x) / 32
		if 32*blocks == len(x) {
			return dotLanes(&x[0], &y[0], blocks)
		}
		var p [32]float32
		if blocks > 0 {
			laneAddBlocks(&p, &x[0], &y[0], blocks)
		}
		if base := 32 * blocks; base < len(x) {
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
		var s float32
		if lo := w * 32; lo+32 <= len(x) {
			s = dotLanes(&x[lo], &y[lo], 1)
		} else {
			var p [32]float32
			xs, ys := x[lo:], y[lo:]
			ys = ys[:len(xs)]
			for j := range xs {
				p[j] += float32(xs[j] * ys[j])
			}
			s = butterfly(&p)
		}
		if w == 0 {
			total = s
		} else {
			total += s
		}
	}
	return total
}

// laneAddGo is laneAddBlocks for one block, in Go: the definition the
// assembly must match.
func laneAddGo(p, x, y *[32]float32) {
	for j := range p {
		p[j] += float32(x[j] * y[j])
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
	q := len(c) / 4
	if q > 0 {
		pairQuads(&c[0], &o[0], q, g)
	}
	pairGo(c[4*q:], o[4*q:], g)
}

// pairGo is pair in Go: the definition the assembly must match.
func pairGo(c, o []float32, g float32) {
	o = o[:len(c)]
	for i, ce := range c {
		oe := o[i]
		c[i] = ce + float32(g*oe)
		o[i] = oe + float32(g*ce)
	}
}

// sentenceScratch is one trainer's working memory: the ring of context
// copies and their values at read time, and an output row with its value
// at read time.
type sentenceScratch struct {
	ring, orig []float32 // (2*W_f+1) x d
	o, o0      []float32 // d
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
// threads; rowLoad and rowAddDelta (race_*.go) are the only accesses to it.
type model struct {
	syn0, syn1 []float32
	dim        int
	lay        layout
	table      []float32
	fresh      bool // Config.Fresh: a window's contexts live for that window
	// hs is the Huffman tree when the objective is hierarchical softmax
	// (syn1 then holds inner nodes' rows), else nil.
	hs *huffman
	// wombat trains windows as Wombat's batches (wombat.go).
	wombat bool
}

// trainSentence trains one sentence: toks are its kept tokens, negs its N
// negatives per position (len(toks)*n), alpha its learning rate, wf the
// fixed window. It is the computation of w2v.cu's kernels for one sentence.
func (m *model) trainSentence(toks, negs []int32, n, wf int, alpha float32, sc *sentenceScratch) {
	if m.fresh {
		m.trainSentenceFresh(toks, negs, n, wf, alpha, sc)
		return
	}
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
	for w := 0; w < L; w++ {
		lo, hi := max(0, w-wf), min(L-1, w+wf)
		m.trainOutputs(toks, negs, w, n, lo, hi, alpha, slot, sc)
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

// trainOutputs trains centre w's outputs (its word, then its n negatives)
// one at a time against the context copies of positions lo..hi but w,
// which sit in sc.ring at slot(p).
func (m *model) trainOutputs(toks, negs []int32, w, n, lo, hi int, alpha float32, slot func(int) int, sc *sentenceScratch) {
	d := m.dim
	o, o0 := sc.o[:d], sc.o0[:d]
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
}

// trainSentenceFresh is trainSentence with Config.Fresh: the context
// copies of centre w are read (positions w-W_f .. w+W_f but w, in
// ascending order) before its outputs and written back in the same order
// after them.
func (m *model) trainSentenceFresh(toks, negs []int32, n, wf int, alpha float32, sc *sentenceScratch) {
	L := len(toks)
	if L < 2 {
		return
	}
	d := m.dim
	r := 2*wf + 1
	slot := func(p int) int { return (p % r) * d }
	for w := 0; w < L; w++ {
		lo, hi := max(0, w-wf), min(L-1, w+wf)
		for p := lo; p <= hi; p++ {
			if s := slot(p); p != w {
				rowLoad(sc.ring[s:s+d], m.syn0, int(toks[p]), d)
				copy(sc.orig[s:s+d], sc.ring[s:s+d])
			}
		}
		m.trainOutputs(toks, negs, w, n, lo, hi, alpha, slot, sc)
		for p := lo; p <= hi; p++ {
			if s := slot(p); p != w {
				rowAddDelta(m.syn0, int(toks[p]), d, sc.ring[s:s+d], sc.orig[s:s+d])
			}
		}
	}
}
