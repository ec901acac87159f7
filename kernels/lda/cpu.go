package lda

import (
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// counts are the model's counts after an iteration (see layout for the
// row layouts), identical on every engine that uses the same layout.
type counts struct {
	t  []uint32 // T, K entries
	wd []uint32 // dense rows, dense×K
	// Sparse row of word w: entries [wordOff[w]-sparseBase, +wLen[w]).
	wTop, wCnt, wLen []uint32
	// Row of document d: entries [docOff[d], +dLen[d]).
	dTop, dCnt, dLen []uint32
}

func newCounts(l *layout) *counts {
	ns := l.n - int(l.sparseBase)
	return &counts{
		t: make([]uint32, l.k), wd: make([]uint32, l.dense*l.k),
		wTop: make([]uint32, ns), wCnt: make([]uint32, ns), wLen: make([]uint32, l.v),
		dTop: make([]uint32, l.n), dCnt: make([]uint32, l.n), dLen: make([]uint32, l.d),
	}
}

// cpuEngine is the Go sampler: EZLDA's design on goroutines.
type cpuEngine struct {
	cfg  Config
	opt  Options
	l    *layout
	c    *counts
	z    []uint32 // word-major topics
	znew []uint32
	iter uint32

	// Per iteration, from the frozen counts.
	tc           *topicConsts
	stats        []wordStat
	phiD         []uint32 // dense rows' φ̂
	epreD        []uint64 // dense rows' inclusive prefix of e
	phiS         []uint32 // sparse rows' φ̂, entry by entry
	epreS        []uint64
	scratch      sync.Pool
	threadsCount int
}

func newCPUEngine(cfg Config, opt Options, l *layout) *cpuEngine {
	e := &cpuEngine{cfg: cfg, opt: opt, l: l, c: newCounts(l), threadsCount: opt.threads()}
	e.z, e.znew = make([]uint32, l.n), make([]uint32, l.n)
	e.stats = make([]wordStat, l.v)
	e.phiD, e.epreD = make([]uint32, l.dense*l.k), make([]uint64, l.dense*l.k)
	ns := l.n - int(l.sparseBase)
	e.phiS, e.epreS = make([]uint32, ns), make([]uint64, ns)
	e.scratch.New = func() any { s := make([]uint32, 0, max(l.maxDocLen, l.k)); return &s }
	return e
}

// initialise draws the initial topics and counts them.
func (e *cpuEngine) initialise() {
	l := e.l
	parallelRange(l.n, e.threadsCount, func(lo, hi int) {
		for p := lo; p < hi; p++ {
			e.z[p] = initialTopic(e.cfg.Seed, l.tokIdx[p], l.k)
		}
	})
	e.iter = 0
	e.rebuild()
}

// step runs one iteration: it returns how many tokens took the shortcut,
// and the wall time of sampling (with the iteration's preparation) and of
// the rebuild.
func (e *cpuEngine) step() stepStats {
	e.iter++
	start := time.Now()
	e.prepare()
	n := e.sample()
	e.z, e.znew = e.znew, e.z
	mid := time.Now()
	e.rebuild()
	return stepStats{shortcuts: n, sample: mid.Sub(start), rebuild: time.Since(mid)}
}

// rebuild counts T, W and D from z.
func (e *cpuEngine) rebuild() {
	l, c, k := e.l, e.c, e.l.k
	// T: a histogram per goroutine, summed.
	parts := make([][]uint32, e.threadsCount)
	var wg sync.WaitGroup
	for i := range parts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			h := make([]uint32, k)
			lo, hi := i*l.n/len(parts), (i+1)*l.n/len(parts)
			for _, t := range e.z[lo:hi] {
				h[t]++
			}
			parts[i] = h
		}()
	}
	wg.Wait()
	clear(c.t)
	for _, h := range parts {
		for j, n := range h {
			c.t[j] += n
		}
	}
	// Dense rows, a word at a time.
	parallelFor(l.dense, e.threadsCount, 1, func(w int) {
		row := c.wd[w*k : (w+1)*k]
		clear(row)
		for _, t := range e.z[l.wordOff[w]:l.wordOff[w+1]] {
			row[t]++
		}
	})
	// Sparse rows and document rows: sort the row's topics and count runs.
	parallelFor(l.v-l.dense, e.threadsCount, 64, func(i int) {
		w := l.dense + i
		lo, hi := l.wordOff[w], l.wordOff[w+1]
		buf := e.getScratch()
		*buf = append((*buf)[:0], e.z[lo:hi]...)
		base := lo - l.sparseBase
		c.wLen[w] = runLengths(*buf, c.wTop[base:], c.wCnt[base:])
		e.scratch.Put(buf)
	})
	parallelFor(l.d, e.threadsCount, 64, func(d int) {
		lo, hi := l.docOff[d], l.docOff[d+1]
		buf := e.getScratch()
		*buf = (*buf)[:0]
		for _, p := range l.docTok[lo:hi] {
			*buf = append(*buf, e.z[p])
		}
		c.dLen[d] = runLengths(*buf, c.dTop[lo:], c.dCnt[lo:])
		e.scratch.Put(buf)
	})
}

func (e *cpuEngine) getScratch() *[]uint32 { return e.scratch.Get().(*[]uint32) }

// runLengths sorts topics and writes each distinct topic and its count,
// in topic order; it returns how many.
func runLengths(topics []uint32, top, cnt []uint32) uint32 {
	slices.Sort(topics)
	n := uint32(0)
	for i := 0; i < len(topics); {
		j := i + 1
		for j < len(topics) && topics[j] == topics[i] {
			j++
		}
		top[n], cnt[n] = topics[i], uint32(j-i)
		n++
		i = j
	}
	return n
}

// prepare computes the iteration's constants and every word's φ̂, e
// prefixes and statistics from the frozen counts.
func (e *cpuEngine) prepare() {
	l, c, k := e.l, e.c, e.l.k
	e.tc = newTopicConsts(c.t, l.v, e.cfg.Alpha, e.cfg.Beta)
	tc := e.tc
	parallelFor(l.dense, e.threadsCount, 1, func(w int) {
		row := c.wd[w*k : (w+1)*k]
		best, kmax := -1.0, uint32(0)
		for j, n := range row {
			if n > 0 {
				if phi := phiOf(n, tc.denom[j], tc.beta); phi > best {
					best, kmax = phi, uint32(j)
				}
			}
		}
		s := scaleOf(max(best, tc.zmax))
		st := wordStat{s: int32(s), kmax: kmax, a1: quantPhi(best, s), a2: tc.zphiMax[s-minScale]}
		phis, epre := e.phiD[w*k:(w+1)*k], e.epreD[w*k:(w+1)*k]
		for j, n := range row {
			phi := phiOf(n, tc.denom[j], tc.beta)
			ph := quantPhi(phi, s)
			phis[j] = ph
			if n > 0 {
				ex := quantAlpha(phi, tc.alpha, s) - tc.g(s, j)
				if uint32(j) == kmax {
					st.e1 = ex
				} else {
					st.a2 = max(st.a2, ph)
				}
				st.ew += ex
			}
			epre[j] = st.ew
		}
		st.atot = st.ew + tc.gtotal(s)
		e.stats[w] = st
	})
	parallelFor(l.v-l.dense, e.threadsCount, 256, func(i int) {
		w := l.dense + i
		if l.wordOff[w] == l.wordOff[w+1] {
			return
		}
		base := l.wordOff[w] - l.sparseBase
		n := c.wLen[w]
		top, cnt := c.wTop[base:base+n], c.wCnt[base:base+n]
		best, kmax := -1.0, uint32(0)
		for j, t := range top {
			if phi := phiOf(cnt[j], tc.denom[t], tc.beta); phi > best {
				best, kmax = phi, t
			}
		}
		s := scaleOf(max(best, tc.zmax))
		st := wordStat{s: int32(s), kmax: kmax, a1: quantPhi(best, s), a2: tc.zphiMax[s-minScale]}
		phis, epre := e.phiS[base:base+n], e.epreS[base:base+n]
		for j, t := range top {
			phi := phiOf(cnt[j], tc.denom[t], tc.beta)
			ph := quantPhi(phi, s)
			phis[j] = ph
			ex := quantAlpha(phi, tc.alpha, s) - tc.g(s, int(t))
			if t == kmax {
				st.e1 = ex
			} else {
				st.a2 = max(st.a2, ph)
			}
			st.ew += ex
			epre[j] = st.ew
		}
		st.atot = st.ew + tc.gtotal(s)
		e.stats[w] = st
	})
}

// wordView is what sampling a word's tokens reads of the word.
type wordView struct {
	st *wordStat
	// phi is the word's φ̂ of every topic (its dense row, or its sparse
	// row expanded), or nil: then φ̂ comes from merging top/phiS with the
	// document's row, zphi for topics the word lacks.
	phi []uint32
	// epre is the dense row's prefix of e, or nil: then epreS, by entry.
	epre            []uint64
	top, phiS, zphi []uint32
	epreS           []uint64
	// cum and cumTop are the goroutine's scratch for the document branch
	// (room for the longest document).
	cum    []uint64
	cumTop []uint32
}

// view prepares word w's view; expand is the goroutine's K-entry scratch
// for a medium word's expanded row.
func (e *cpuEngine) view(w uint32, expand []uint32) wordView {
	l, c, tc := e.l, e.c, e.tc
	st := &e.stats[w]
	v := wordView{st: st, zphi: tc.zphi[int(st.s)-minScale]}
	if int(w) < l.dense {
		v.phi, v.epre = e.phiD[int(w)*l.k:int(w+1)*l.k], e.epreD[int(w)*l.k:int(w+1)*l.k]
		return v
	}
	base := l.wordOff[w] - l.sparseBase
	n := c.wLen[w]
	v.top, v.phiS, v.epreS = c.wTop[base:base+n], e.phiS[base:base+n], e.epreS[base:base+n]
	if int(w) < l.medium {
		copy(expand, v.zphi)
		for i, t := range v.top {
			expand[t] = v.phiS[i]
		}
		v.phi = expand
	}
	return v
}

// sample draws every token's new topic into znew and returns how many
// took the shortcut.
func (e *cpuEngine) sample() int64 {
	l := e.l
	nd, nm, ns := l.nDenseUnits(), l.nMediumUnits(), l.nSparseUnits()
	var shortcuts atomic.Int64
	type scratch struct {
		expand, cumTop []uint32
		cum            []uint64
	}
	pool := sync.Pool{New: func() any {
		return &scratch{expand: make([]uint32, l.k), cumTop: make([]uint32, l.maxDocLen), cum: make([]uint64, l.maxDocLen)}
	}}
	unit := func(u int) {
		var n int64
		sc := pool.Get().(*scratch)
		defer pool.Put(sc)
		switch {
		case u < nd+nm:
			units := l.denseUnits
			if u >= nd {
				units, u = l.mediumUnits, u-nd
			}
			w, lo, hi := units[3*u], units[3*u+1], units[3*u+2]
			v := e.view(w, sc.expand)
			v.cum, v.cumTop = sc.cum, sc.cumTop
			for p := lo; p < hi; p++ {
				n += e.sampleToken(p, &v)
			}
		default:
			u -= nd + nm
			lo, hi, w := l.sparseUnits[4*u], l.sparseUnits[4*u+1], l.sparseUnits[4*u+2]
			v := e.view(w, nil)
			v.cum, v.cumTop = sc.cum, sc.cumTop
			for p := lo; p < hi; p++ {
				if l.wordOff[w+1] <= p {
					for l.wordOff[w+1] <= p {
						w++
					}
					v = e.view(w, nil)
					v.cum, v.cumTop = sc.cum, sc.cumTop
				}
				n += e.sampleToken(p, &v)
			}
		}
		shortcuts.Add(n)
	}
	if e.opt.Static {
		staticUnits(nd+nm+ns, e.threadsCount, unit)
	} else {
		balancedUnits(nd+nm+ns, e.threadsCount, unit)
	}
	return shortcuts.Load()
}

// sampleToken samples word-major token p of the word v views into znew;
// it returns 1 if the shortcut decided it.
func (e *cpuEngine) sampleToken(p uint32, v *wordView) int64 {
	l, c := e.l, e.c
	d := l.tokDoc[p]
	r := tokenUniform(e.cfg.Seed, e.iter, l.tokIdx[p])
	st := v.st
	dlo := l.docOff[d]
	dTop, dCnt := c.dTop[dlo:dlo+c.dLen[d]], c.dCnt[dlo:dlo+c.dLen[d]]
	b1 := uint32(0)
	if i, ok := slices.BinarySearch(dTop, st.kmax); ok {
		b1 = dCnt[i]
	}
	front := uint64(b1)*uint64(st.a1) + st.e1
	rest := st.atot - st.e1
	if !e.opt.TwoBranch {
		bound := uint64(l.docLen(d)-b1)*uint64(st.a2) + rest
		if scaleUniform(r, front+bound) < front {
			e.znew[p] = st.kmax
			return 1
		}
	}
	m := v.docBranch(dTop, dCnt)
	sDoc := uint64(0)
	if m > 0 {
		sDoc = v.cum[m-1]
	}
	x := scaleUniform(r, front+sDoc+rest)
	switch {
	case x < front:
		e.znew[p] = st.kmax
		return 0
	case x-front < sDoc:
		e.znew[p] = v.cumTop[firstAbove(m, func(i int) uint64 { return v.cum[i] }, x-front)]
		return 0
	}
	x -= front + sDoc
	if x < st.ew-st.e1 {
		// Smallest k with P'(k) = prefix(k) - (k >= kmax ? e1 : 0) > x.
		if v.epre != nil {
			e.znew[p] = uint32(firstAbove(len(v.epre), func(i int) uint64 { return v.epre[i] - excl(uint32(i), st.kmax, st.e1) }, x))
		} else {
			e.znew[p] = v.top[firstAbove(len(v.epreS), func(i int) uint64 { return v.epreS[i] - excl(v.top[i], st.kmax, st.e1) }, x)]
		}
		return 0
	}
	e.znew[p] = e.tc.searchShared(int(st.s), x-(st.ew-st.e1))
	return 0
}

// docBranch walks the document's topics other than kmax, writing the
// running sum of D[d][k]·φ̂[k] and the topic of each into cum and cumTop;
// it returns how many (the sum S is the last).
func (v *wordView) docBranch(dTop, dCnt []uint32) int {
	kmax := v.st.kmax
	acc := uint64(0)
	m := 0
	if v.phi != nil {
		for i, k := range dTop {
			if k != kmax {
				acc += uint64(dCnt[i]) * uint64(v.phi[k])
				v.cum[m], v.cumTop[m] = acc, k
				m++
			}
		}
		return m
	}
	j := 0
	for i, k := range dTop {
		if k == kmax {
			continue
		}
		for j < len(v.top) && v.top[j] < k {
			j++
		}
		ph := v.zphi[k]
		if j < len(v.top) && v.top[j] == k {
			ph = v.phiS[j]
		}
		acc += uint64(dCnt[i]) * uint64(ph)
		v.cum[m], v.cumTop[m] = acc, k
		m++
	}
	return m
}

// excl is what the front interval took from the word branch's prefix at k.
func excl(k, kmax uint32, e1 uint64) uint64 {
	if k >= kmax {
		return e1
	}
	return 0
}

// firstAbove is the smallest i in [0, n) with f(i) > x, for f
// non-decreasing and f(n-1) > x.
func firstAbove(n int, f func(int) uint64, x uint64) int {
	lo, hi := 0, n-1
	for lo < hi {
		mid := (lo + hi) / 2
		if f(mid) > x {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	return lo
}

// balancedUnits runs unit(0..n-1) on goroutines that take the next unit
// from an atomic counter: EZLDA's dynamic hand-out of small words.
func balancedUnits(n, threads int, unit func(int)) {
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(threads, n) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				u := int(next.Add(1) - 1)
				if u >= n {
					return
				}
				unit(u)
			}
		}()
	}
	wg.Wait()
}

// staticUnits gives goroutine t units [t·n/threads, (t+1)·n/threads).
func staticUnits(n, threads int, unit func(int)) {
	parallelRange(n, threads, func(lo, hi int) {
		for u := lo; u < hi; u++ {
			unit(u)
		}
	})
}

// parallelRange splits [0, n) into one contiguous range per goroutine.
func parallelRange(n, threads int, f func(lo, hi int)) {
	threads = max(1, min(threads, n))
	var wg sync.WaitGroup
	for t := range threads {
		wg.Add(1)
		go func() {
			defer wg.Done()
			f(t*n/threads, (t+1)*n/threads)
		}()
	}
	wg.Wait()
}

// bytes is the memory the engine's arrays take: the layout, counts,
// topics and per-iteration rows.
func (e *cpuEngine) bytes() int64 {
	c := e.c
	n := int64(len(c.t)+len(c.wd)+len(c.wTop)+len(c.wCnt)+len(c.wLen)+len(c.dTop)+len(c.dCnt)+len(c.dLen)) +
		int64(len(e.z)+len(e.znew)+len(e.phiD)+len(e.phiS))
	return 4*n + 8*int64(len(e.epreD)+len(e.epreS)) + int64(len(e.stats))*40 + e.l.bytes()
}
