package lda

import "fmt"

// checkCounts verifies counts c against the topics z they were rebuilt
// from: row sums equal the rows' token counts (words and documents), the
// column sums of W and of D equal T, T sums to the number of tokens,
// sparse rows are strictly increasing in topic with positive counts, and
// every row equals a dense recount of z. The CPU engine's tests call it
// after every iteration, and the GPU's state is checked with it once
// downloaded.
func checkCounts(l *layout, c *counts, z []uint32) error {
	k := l.k
	total := uint64(0)
	for _, n := range c.t {
		total += uint64(n)
	}
	if total != uint64(l.n) {
		return fmt.Errorf("T sums to %d, want the %d tokens", total, l.n)
	}
	recount := make([]uint32, k)
	colW, colD, hist := make([]uint64, k), make([]uint64, k), make([]uint32, k)
	for _, t := range z {
		if int(t) >= k {
			return fmt.Errorf("a token has topic %d, outside [0, %d)", t, k)
		}
		hist[t]++
	}
	// sparse checks one sparse row against the recount of its tokens.
	sparse := func(what string, top, cnt []uint32, tokens int, col []uint64) error {
		sum := 0
		for i, t := range top {
			switch {
			case int(t) >= k:
				return fmt.Errorf("%s: entry %d has topic %d, outside [0, %d)", what, i, t, k)
			case i > 0 && t <= top[i-1]:
				return fmt.Errorf("%s: topics not strictly increasing at entry %d (%d after %d)", what, i, t, top[i-1])
			case cnt[i] == 0:
				return fmt.Errorf("%s: topic %d has a zero count", what, t)
			case cnt[i] != recount[t]:
				return fmt.Errorf("%s: topic %d counted %d, a recount gives %d", what, t, cnt[i], recount[t])
			}
			sum += int(cnt[i])
			col[t] += uint64(cnt[i])
		}
		if sum != tokens {
			return fmt.Errorf("%s: counts sum to %d, the row has %d tokens (a recount has topics the row lacks)", what, sum, tokens)
		}
		return nil
	}
	for w := 0; w < l.v; w++ {
		lo, hi := l.wordOff[w], l.wordOff[w+1]
		clear(recount)
		for _, t := range z[lo:hi] {
			recount[t]++
		}
		if w < l.dense {
			sum := 0
			for t, n := range c.wd[w*k : (w+1)*k] {
				if n != recount[t] {
					return fmt.Errorf("dense row of word %d (corpus word %d): topic %d counted %d, a recount gives %d", w, l.orig[w], t, n, recount[t])
				}
				sum += int(n)
				colW[t] += uint64(n)
			}
			if sum != int(hi-lo) {
				return fmt.Errorf("dense row of word %d: sums to %d, the word has %d tokens", w, sum, hi-lo)
			}
			continue
		}
		base, n := lo-l.sparseBase, c.wLen[w]
		if n > hi-lo {
			return fmt.Errorf("sparse row of word %d: %d entries in room for %d", w, n, hi-lo)
		}
		if err := sparse(fmt.Sprintf("sparse row of word %d (corpus word %d)", w, l.orig[w]), c.wTop[base:base+n], c.wCnt[base:base+n], int(hi-lo), colW); err != nil {
			return err
		}
	}
	for d := 0; d < l.d; d++ {
		lo, hi := l.docOff[d], l.docOff[d+1]
		clear(recount)
		for _, p := range l.docTok[lo:hi] {
			recount[z[p]]++
		}
		n := c.dLen[d]
		if n > hi-lo {
			return fmt.Errorf("row of document %d: %d entries in room for %d", d, n, hi-lo)
		}
		if err := sparse(fmt.Sprintf("row of document %d", d), c.dTop[lo:lo+n], c.dCnt[lo:lo+n], int(hi-lo), colD); err != nil {
			return err
		}
	}
	for t := range k {
		switch {
		case c.t[t] != hist[t]:
			return fmt.Errorf("T[%d] is %d, the topics give %d", t, c.t[t], hist[t])
		case colW[t] != uint64(c.t[t]):
			return fmt.Errorf("column %d of W sums to %d, T[%d] is %d", t, colW[t], t, c.t[t])
		case colD[t] != uint64(c.t[t]):
			return fmt.Errorf("column %d of D sums to %d, T[%d] is %d", t, colD[t], t, c.t[t])
		}
	}
	return nil
}
