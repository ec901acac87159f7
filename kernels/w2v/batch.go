package w2v

// batch is a run of sentences given explicitly, as the reference tests
// hand them to both trainers: the kept tokens of every sentence back to
// back, their negatives (n per token, in the same order), each sentence's
// start (and the end of the last) and learning rate.
type batch struct {
	tokens, negs []int32
	starts       []int32
	alphas       []float32
}

func (b *batch) sentences() int { return len(b.alphas) }

func (b *batch) sentence(i, n int) (toks, negs []int32) {
	lo, hi := b.starts[i], b.starts[i+1]
	return b.tokens[lo:hi], b.negs[int(lo)*n : int(hi)*n]
}

// lens is each sentence's length.
func (b *batch) lens() []int32 {
	out := make([]int32, b.sentences())
	for i := range out {
		out[i] = b.starts[i+1] - b.starts[i]
	}
	return out
}
