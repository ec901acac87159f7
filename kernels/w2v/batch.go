package w2v

import (
	"sync"
	"sync/atomic"
)

// batch is a run of consecutive sentences of one epoch as the kernels take
// them: the kept tokens of every sentence back to back, their negatives
// (n per token, in the same order), each sentence's start (and the end of
// the last) and learning rate.
type batch struct {
	epoch        int
	first        int // the corpus index of its first sentence
	tokens, negs []int32
	starts       []int32
	alphas       []float32
	counted      int64 // the words the sentences count (learning-rate progress, words/s)
}

func (b *batch) sentences() int { return len(b.alphas) }

func (b *batch) sentence(i, n int) (toks, negs []int32) {
	lo, hi := b.starts[i], b.starts[i+1]
	return b.tokens[lo:hi], b.negs[int(lo)*n : int(hi)*n]
}

// prepareBatch draws sentences [lo, hi) of epoch e into b, on threads
// goroutines: each takes a contiguous share and writes its kept tokens at
// the share's raw offset (kept <= raw, so shares never overlap); the shares
// are then moved together.
func (s *sampler) prepareBatch(c *Corpus, e, lo, hi, threads int, b *batch) {
	n := s.cfg.Negatives
	raw := int(c.starts[hi] - c.starts[lo])
	b.epoch, b.first = e, lo
	b.tokens = grow(b.tokens, raw)
	b.negs = grow(b.negs, raw*n)
	b.starts = grow(b.starts, hi-lo+1)
	b.alphas = grow(b.alphas, hi-lo)
	kept := grow[int32](nil, hi-lo)
	threads = max(1, min(threads, (hi-lo+63)/64))
	per := (hi - lo + threads - 1) / threads
	type share struct{ lo, hi, base, kept int }
	shares := make([]share, 0, threads)
	for a := lo; a < hi; a += per {
		shares = append(shares, share{lo: a, hi: min(a+per, hi), base: int(c.starts[a] - c.starts[lo])})
	}
	var wg sync.WaitGroup
	var counted atomic.Int64
	for k := range shares {
		wg.Add(1)
		go func(sh *share) {
			defer wg.Done()
			at := sh.base
			var words int64
			for i := sh.lo; i < sh.hi; i++ {
				k := s.prepare(e, i, c.Sentence(i), b.tokens[at:], b.negs[at*n:])
				kept[i-lo] = int32(k)
				b.alphas[i-lo] = s.alpha(e, i)
				at += k
				words += c.Counted(i)
			}
			sh.kept = at - sh.base
			counted.Add(words)
		}(&shares[k])
	}
	wg.Wait()
	at := 0
	for _, sh := range shares {
		copy(b.tokens[at:], b.tokens[sh.base:sh.base+sh.kept])
		copy(b.negs[at*n:], b.negs[sh.base*n:(sh.base+sh.kept)*n])
		at += sh.kept
	}
	b.tokens, b.negs = b.tokens[:at], b.negs[:at*n]
	b.starts[0] = 0
	for i, k := range kept {
		b.starts[i+1] = b.starts[i] + k
	}
	b.counted = counted.Load()
}

// grow returns s resized to n, reusing its memory when it can.
func grow[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n)
	}
	return s[:n]
}
