package w2v

// gradientHS is hierarchical softmax's g = (label - sigma(f)) * alpha for
// label = 1 - code, from the table; like word2vec it trains nothing (g = 0,
// ok false) where f is outside (-6, 6), rather than saturating as negative
// sampling does.
func gradientHS(f, label, alpha float32, table []float32) (float32, bool) {
	if f <= -maxExp || f >= maxExp {
		return 0, false
	}
	i := int(float32(f+maxExp) * expScale)
	return float32(label-table[min(max(i, 0), expTableSize-1)]) * alpha, true
}

// hsScratch is an SGHS trainer's working memory: a context row, its
// accumulated update (word2vec's neu1e) and an inner node's row.
type hsScratch struct {
	l1, neu1e, o, lanes []float32
}

func newHSScratch(dim int) *hsScratch {
	return &hsScratch{l1: make([]float32, dim), neu1e: make([]float32, dim), o: make([]float32, dim),
		lanes: make([]float32, 32*((dim+31)/32))}
}

// trainSentenceHS trains one sentence with word2vec's skip-gram
// hierarchical softmax (TrainModelThread, -cbow 0 -hs 1): for every centre
// w and every context position p of its fixed window (ascending, p != w),
// the context's row l1 = syn0[toks[p]] is paired with each inner node on
// the centre's Huffman path, root first:
//
//	f = l1 . syn1[node]          (the layout's dot-product order)
//	g = (1 - code - sigma(f)) * alpha, nothing where |f| >= 6
//	neu1e += g*syn1[node] ;  syn1[node] += g*l1
//
// and then syn0[toks[p]] += neu1e. Rows are updated in place, as word2vec
// does; on many goroutines they race (Hogwild).
func (m *model) trainSentenceHS(toks []int32, wf int, alpha float32, sc *hsScratch) {
	L := len(toks)
	if L < 2 {
		return
	}
	d := m.dim
	l1, neu1e, o := sc.l1[:d], sc.neu1e[:d], sc.o[:d]
	for w := 0; w < L; w++ {
		codes, points := m.hs.path(toks[w])
		lo, hi := max(0, w-wf), min(L-1, w+wf)
		for p := lo; p <= hi; p++ {
			if p == w {
				continue
			}
			c := int(toks[p])
			rowLoad(l1, m.syn0, c, d)
			clear(neu1e)
			for j, node := range points {
				rowLoad(o, m.syn1, int(node), d)
				g, ok := gradientHS(m.lay.dot(l1, o, sc.lanes), float32(1-codes[j]), alpha, m.table)
				if !ok {
					continue
				}
				axpy(neu1e, o, g)
				rowAxpy(m.syn1, int(node), d, g, l1)
			}
			rowAdd(m.syn0, c, d, neu1e)
		}
	}
}

// axpy is y += a*x, each product rounded to float32 before the add.
func axpy(y, x []float32, a float32) {
	x = x[:len(y)]
	q := len(y) / 4
	if q > 0 {
		axpyQuads(&y[0], &x[0], q, a)
	}
	axpyGo(y[4*q:], x[4*q:], a)
}

// axpyGo is axpy in Go (the assembly's reference and its tail).
func axpyGo(y, x []float32, a float32) {
	x = x[:len(y)]
	i := 0
	for ; i+4 <= len(y); i += 4 {
		y[i] += float32(a * x[i])
		y[i+1] += float32(a * x[i+1])
		y[i+2] += float32(a * x[i+2])
		y[i+3] += float32(a * x[i+3])
	}
	for ; i < len(y); i++ {
		y[i] += float32(a * x[i])
	}
}
