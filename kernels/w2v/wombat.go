package w2v

// Wombat's batched training (Simonton and Alaghband, Algorithm 1): a
// window's outputs (the centre's Huffman path, or the centre and its N
// negatives) and its contexts are copied into two small private matrices,
// every output-context pair is activated from those copies at once, and
// the updates go back as two matrix products:
//
//	Wo (k x d) <- syn1 rows of the outputs ; Wi (n x d) <- syn0 rows of the contexts
//	G = Wo Wi^T ;  G[j][i] <- (label_j - sigma(G[j][i])) * alpha
//	Ui = G^T Wo ;  Uo = G Wi
//	syn0[context i] += Ui[i] ;  syn1[output j] += Uo[j]
//
// (for hierarchical softmax label_j = 1 - code_j and a pair with |f| >= 6
// contributes 0, as word2vec skips it; negative sampling saturates). The
// sums run from 0 in ascending j (Ui) and i (Uo), each product rounded
// before its add; the dot products follow the warp layout's lanes. Unlike
// word2vec's order, no pair of a window sees another's update: the
// window is one step of gradient descent, which is what lets each thread
// touch a shared row once per window instead of once per pair.

// wombatScratch is the private matrices of one window.
type wombatScratch struct {
	wi, wo, ui, uo []float32 // n x d, k x d, n x d, k x d
	g              []float32 // k x n
	ctx, out       []int32
	label          []float32
	nsCodes        []uint8 // negative sampling's: the centre 0, its negatives 1
	lanes          []float32
}

func newWombatScratch(dim, wf, maxOut int) *wombatScratch {
	n := 2 * wf
	sc := &wombatScratch{wi: make([]float32, n*dim), ui: make([]float32, n*dim),
		wo: make([]float32, maxOut*dim), uo: make([]float32, maxOut*dim), g: make([]float32, maxOut*n),
		ctx: make([]int32, n), out: make([]int32, maxOut), label: make([]float32, maxOut),
		nsCodes: make([]uint8, maxOut), lanes: make([]float32, 32*((dim+31)/32))}
	for j := 1; j < maxOut; j++ {
		sc.nsCodes[j] = 1
	}
	return sc
}

// wombatOutputs is the most outputs a window has: the longest Huffman
// code, or the centre and its negatives.
func (m *model) wombatOutputs(n int) int {
	if m.hs != nil {
		return m.hs.longest()
	}
	return 1 + n
}

// outputs lists centre w's output rows and labels into sc: the Huffman
// path (hierarchical softmax) or the centre and its n negatives.
func (m *model) outputs(toks, negs []int32, w, n int, sc *wombatScratch) int {
	if m.hs != nil {
		codes, points := m.hs.path(toks[w])
		for j, p := range points {
			sc.out[j], sc.label[j] = p, float32(1-codes[j])
		}
		return len(points)
	}
	sc.out[0], sc.label[0] = toks[w], 1
	for t := 0; t < n; t++ {
		sc.out[1+t], sc.label[1+t] = negs[w*n+t], 0
	}
	return 1 + n
}

// trainSentenceWombat trains a sentence window by window as Algorithm 1
// (the package's fixed window W_f, contexts in ascending position).
func (m *model) trainSentenceWombat(toks, negs []int32, n, wf int, alpha float32, sc *wombatScratch) {
	L := len(toks)
	if L < 2 {
		return
	}
	for w := 0; w < L; w++ {
		k := m.outputs(toks, negs, w, n, sc)
		nc := 0
		for p := max(0, w-wf); p <= min(L-1, w+wf); p++ {
			if p != w {
				sc.ctx[nc] = toks[p]
				nc++
			}
		}
		m.trainWindowWombat(sc.out[:k], sc.label[:k], sc.ctx[:nc], alpha, sc)
	}
}

// trainWindowWombat is Algorithm 1 for one window: outputs out with
// labels, contexts ctx.
func (m *model) trainWindowWombat(out []int32, label []float32, ctx []int32, alpha float32, sc *wombatScratch) {
	d, k, nc := m.dim, len(out), len(ctx)
	for i, c := range ctx {
		rowLoad(sc.wi[i*d:(i+1)*d], m.syn0, int(c), d)
	}
	for j, o := range out {
		rowLoad(sc.wo[j*d:(j+1)*d], m.syn1, int(o), d)
	}
	for j := 0; j < k; j++ {
		wo := sc.wo[j*d : (j+1)*d]
		for i := 0; i < nc; i++ {
			f := m.lay.dot(wo, sc.wi[i*d:(i+1)*d], sc.lanes)
			var g float32
			if m.hs != nil {
				g, _ = gradientHS(f, label[j], alpha, m.table)
			} else {
				g = gradient(f, label[j], alpha, m.table)
			}
			sc.g[j*nc+i] = g
		}
	}
	ui, uo := sc.ui[:nc*d], sc.uo[:k*d]
	clear(ui)
	clear(uo)
	for i := 0; i < nc; i++ {
		u := ui[i*d : (i+1)*d]
		for j := 0; j < k; j++ {
			axpy(u, sc.wo[j*d:(j+1)*d], sc.g[j*nc+i])
		}
	}
	for j := 0; j < k; j++ {
		u := uo[j*d : (j+1)*d]
		for i := 0; i < nc; i++ {
			axpy(u, sc.wi[i*d:(i+1)*d], sc.g[j*nc+i])
		}
	}
	for i, c := range ctx {
		rowAdd(m.syn0, int(c), d, ui[i*d:(i+1)*d])
	}
	for j, o := range out {
		rowAdd(m.syn1, int(o), d, uo[j*d:(j+1)*d])
	}
}
