package ri

import (
	"context"
	"fmt"
	"math"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// normLanes is the number of partial sums a squared norm is reduced from
// (the GPU's block size in ri_normalise_*).
const normLanes = 256

// cpuEngine is random indexing in Go: the cpu device and the GPU's
// reference. Units of a plan go to goroutines as they free up, but every
// unit writes its own row, so the result is the same for any number of
// goroutines.
type cpuEngine struct {
	sh      *shared
	threads int

	idx, docIdx []int32 // index tables, built by indexVectors

	ints    []int32   // termPlan.rows x d: pass-one term vectors (with partial rows)
	seeds   []float32 // V x d: unit-length seeds of a retraining pass, or the final vectors
	floats  []float32 // termPlan.rows x d: retrained vectors (with partial rows)
	docVecs []float32 // docPlan.rows x d: document vectors of a reflective pass
}

// newCPUEngine allocates the vectors and touches every page of them, so
// that no stage's time includes the kernel's first-touch page faults (the
// GPU engine allocates at setup too).
// It refuses a computation that would not fit in the memory available
// rather than be killed for it later.
func newCPUEngine(sh *shared, threads int) (*cpuEngine, error) {
	if threads <= 0 {
		threads = runtime.GOMAXPROCS(0)
	}
	e := &cpuEngine{sh: sh, threads: threads}
	cfg := sh.cfg
	d, v := cfg.Dim, sh.c.Vocab()
	rows := int64(sh.termPlan.rows)
	if cfg.Retrain > 0 || cfg.Normalise {
		rows += int64(v)
	}
	if cfg.Retrain > 0 {
		rows += int64(sh.termPlan.rows)
		if cfg.Contexts == Document {
			rows += int64(sh.docPlan.rows)
		}
	}
	if need := rows * int64(d) * 4; need > 0 {
		if avail, ok := memAvailable("/proc/meminfo"); ok && need > avail*9/10 {
			return nil, fmt.Errorf("random indexing of %d tokens at dimension %d needs %.2f GiB of vectors, but only %.2f GiB of memory is available",
				sh.c.Tokens(), d, float64(need)/(1<<30), float64(avail)/(1<<30))
		}
	}
	e.ints = make([]int32, sh.termPlan.rows*d)
	touch(e.ints, threads)
	if cfg.Retrain > 0 || cfg.Normalise {
		e.seeds = make([]float32, v*d)
		touch(e.seeds, threads)
	}
	if cfg.Retrain > 0 {
		e.floats = make([]float32, sh.termPlan.rows*d)
		touch(e.floats, threads)
		if cfg.Contexts == Document {
			e.docVecs = make([]float32, sh.docPlan.rows*d)
			touch(e.docVecs, threads)
		}
	}
	return e, nil
}

// memAvailable reads MemAvailable from a meminfo file, in bytes.
func memAvailable(path string) (int64, bool) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, false
	}
	for _, line := range strings.Split(string(b), "\n") {
		rest, ok := strings.CutPrefix(line, "MemAvailable:")
		if !ok {
			continue
		}
		kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
		if err != nil {
			return 0, false
		}
		return kb << 10, true
	}
	return 0, false
}

// touch writes every element of x, in parallel.
func touch[T int32 | float32](x []T, threads int) {
	parallel(len(x), threads, func(_, lo, hi int) { clear(x[lo:hi]) })
}

func (e *cpuEngine) name() string { return "cpu" }

// forEach calls f(i) for i in [0, n) on e.threads goroutines, which take
// the next i as they finish one.
func (e *cpuEngine) forEach(ctx context.Context, n int, f func(i int)) error {
	return e.forEachWorker(ctx, n, func(_, i int) { f(i) })
}

// forEachWorker is forEach telling f which goroutine (0 to threads-1) runs
// it, for per-goroutine scratch space.
func (e *cpuEngine) forEachWorker(ctx context.Context, n int, f func(worker, i int)) error {
	var next atomic.Int64
	var wg sync.WaitGroup
	for g := 0; g < min(e.threads, n); g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				i := int(next.Add(1) - 1)
				if i >= n {
					return
				}
				f(g, i)
			}
		}()
	}
	wg.Wait()
	return ctx.Err()
}

// timed runs f and returns its wall-clock time.
func timed(f func() error) (time.Duration, error) {
	t0 := time.Now()
	err := f()
	return time.Since(t0), err
}

// indexVectors builds the index tables (from the terms' bytes: the host's
// tables in shared are the same, computed once for the checks).
func (e *cpuEngine) indexVectors(ctx context.Context) (time.Duration, error) {
	return timed(func() error {
		sh := e.sh
		k := sh.cfg.Nonzeros
		if sh.cfg.Contexts == Document {
			e.docIdx = make([]int32, sh.c.Docs()*k)
			return e.forEach(ctx, sh.c.Docs(), func(j int) {
				indexVector(DocKey(j), sh.cfg.Seed, sh.cfg.Dim, e.docIdx[j*k:(j+1)*k])
			})
		}
		e.idx = make([]int32, sh.c.Vocab()*k)
		return e.forEach(ctx, sh.c.Vocab(), func(t int) {
			indexVector(TermKey(sh.c.Terms[t]), sh.cfg.Seed, sh.cfg.Dim, e.idx[t*k:(t+1)*k])
		})
	})
}

func (e *cpuEngine) termVectors(ctx context.Context) (time.Duration, error) {
	return timed(func() error { return e.termVectorsNow(ctx) })
}

func (e *cpuEngine) termVectorsNow(ctx context.Context) error {
	sh := e.sh
	d := sh.cfg.Dim
	p := sh.termPlan
	err := e.forEach(ctx, p.nunits(), func(u int) {
		lo, hi, row := p.units[3*u], p.units[3*u+1], int(p.units[3*u+2])
		out := e.ints[row*d : (row+1)*d]
		clear(out)
		if sh.cfg.Contexts == Window {
			tvWindow(sh, e.idx, sh.occ.pos[lo:hi], out)
		} else {
			tvList(sh.occ.doc[lo:hi], e.docIdx, sh.cfg.Nonzeros, out)
		}
	})
	if err != nil {
		return err
	}
	return e.forEach(ctx, p.ncombine(), func(c int) {
		dst, first, n := int(p.combine[3*c]), int(p.combine[3*c+1]), int(p.combine[3*c+2])
		out := e.ints[dst*d : (dst+1)*d]
		copy(out, e.ints[first*d:(first+1)*d])
		for r := first + 1; r < first+n; r++ {
			src := e.ints[r*d : (r+1)*d]
			for i := range out {
				out[i] += src[i]
			}
		}
	})
}

// tvWindow adds the window contexts of occurrences pos into out.
func tvWindow(sh *shared, idx []int32, pos []int32, out []int32) {
	tok := sh.c.Stream
	k, w, d := sh.cfg.Nonzeros, int32(sh.cfg.Window), int32(len(out))
	for _, p := range pos {
		a, b := window(tok, p, w)
		for q := a; q <= b; q++ {
			if q == p {
				continue
			}
			u := int(tok[q])
			var shift int32
			if sh.cfg.Permute {
				shift = rotation(q-p, d)
			}
			for _, ent := range idx[u*k : u*k+k] {
				i, s := entry(ent)
				i += shift
				if i >= d {
					i -= d
				}
				out[i] += s
			}
		}
	}
}

// window returns the first and last positions within w of p in p's
// document.
func window(tok []int32, p, w int32) (a, b int32) {
	a, b = p, p
	for a > p-w && tok[a-1] != Boundary {
		a--
	}
	for b < p+w && tok[b+1] != Boundary {
		b++
	}
	return a, b
}

// rotation is the shift, in [0, d), of a neighbour at offset o.
func rotation(o, d int32) int32 {
	s := o % d
	if s < 0 {
		s += d
	}
	return s
}

// tvList adds the index vectors of list's entries (documents) into out.
func tvList(list []int32, idx []int32, k int, out []int32) {
	for _, j := range list {
		for _, ent := range idx[int(j)*k : int(j)*k+k] {
			i, s := entry(ent)
			out[i] += s
		}
	}
}

func (e *cpuEngine) normalise(ctx context.Context, fromInts bool) (time.Duration, error) {
	return timed(func() error { return e.normaliseNow(ctx, fromInts) })
}

func (e *cpuEngine) normaliseNow(ctx context.Context, fromInts bool) error {
	sh := e.sh
	d, v := sh.cfg.Dim, sh.c.Vocab()
	return e.forEach(ctx, v, func(t int) {
		dst := e.seeds[t*d : (t+1)*d]
		if fromInts {
			unitInts(dst, e.ints[t*d:(t+1)*d])
		} else {
			unitFloats(dst, e.floats[t*d:(t+1)*d])
		}
	})
}

// unitInts sets dst to x scaled to unit length (zero stays zero).
func unitInts(dst []float32, x []int32) {
	var lanes [normLanes]float64
	for i, v := range x {
		f := float64(v)
		lanes[i%normLanes] += float64(f * f)
	}
	norm := reduceLanes(&lanes)
	for i, v := range x {
		if norm == 0 {
			dst[i] = 0
		} else {
			dst[i] = float32(float64(v) / norm)
		}
	}
}

// unitFloats is unitInts for float32 vectors.
func unitFloats(dst []float32, x []float32) {
	var lanes [normLanes]float64
	for i, v := range x {
		f := float64(v)
		lanes[i%normLanes] += float64(f * f)
	}
	norm := reduceLanes(&lanes)
	for i, v := range x {
		if norm == 0 {
			dst[i] = 0
		} else {
			dst[i] = float32(float64(v) / norm)
		}
	}
}

// reduceLanes adds the lanes pairwise (lane j += lane j+s for s = 128 ...
// 1) and returns the square root of the total.
func reduceLanes(l *[normLanes]float64) float64 {
	for s := normLanes / 2; s > 0; s /= 2 {
		for j := 0; j < s; j++ {
			l[j] += l[j+s]
		}
	}
	return math.Sqrt(l[0])
}

func (e *cpuEngine) retrain(ctx context.Context) (time.Duration, error) {
	return timed(func() error { return e.retrainNow(ctx) })
}

func (e *cpuEngine) retrainNow(ctx context.Context) error {
	sh := e.sh
	d := sh.cfg.Dim
	p := sh.termPlan
	scratch := make([][]float64, e.threads)
	for i := range scratch {
		scratch[i] = make([]float64, d)
	}
	if sh.cfg.Contexts == Document {
		dp := sh.docPlan
		// D[j]: the seeds of document j's tokens.
		err := e.forEachWorker(ctx, dp.nunits(), func(g, u int) {
			lo, hi, row := dp.units[3*u], dp.units[3*u+1], int(dp.units[3*u+2])
			gather(sh.c.Stream[lo:hi], e.seeds, e.docVecs[row*d:(row+1)*d], scratch[g])
		})
		if err != nil {
			return err
		}
		if err := e.combineFloats(ctx, dp, e.docVecs, scratch); err != nil {
			return err
		}
	}
	err := e.forEachWorker(ctx, p.nunits(), func(g, u int) {
		lo, hi, row := p.units[3*u], p.units[3*u+1], int(p.units[3*u+2])
		out := e.floats[row*d : (row+1)*d]
		if sh.cfg.Contexts == Window {
			retrainWindow(sh, sh.occ.pos[lo:hi], e.seeds, out, scratch[g])
		} else {
			gather(sh.occ.doc[lo:hi], e.docVecs, out, scratch[g])
		}
	})
	if err != nil {
		return err
	}
	return e.combineFloats(ctx, p, e.floats, scratch)
}

// combineFloats adds each multi-slice segment's partial rows, in order and
// in float64, into its output row.
func (e *cpuEngine) combineFloats(ctx context.Context, p plan, rows []float32, scratch [][]float64) error {
	d := e.sh.cfg.Dim
	return e.forEachWorker(ctx, p.ncombine(), func(g, c int) {
		dst, first, n := int(p.combine[3*c]), int(p.combine[3*c+1]), int(p.combine[3*c+2])
		acc := scratch[g]
		clear(acc)
		for r := first; r < first+n; r++ {
			addTo(acc, rows[r*d:(r+1)*d])
		}
		store(rows[dst*d:(dst+1)*d], acc)
	})
}

// retrainWindow sums into out the seeds of the window contexts of
// occurrences pos, rotated when permuting, accumulating from zero in acc
// (float64).
func retrainWindow(sh *shared, pos []int32, seeds []float32, out []float32, acc []float64) {
	clear(acc)
	tok := sh.c.Stream
	w, d := int32(sh.cfg.Window), int32(len(out))
	for _, p := range pos {
		a, b := window(tok, p, w)
		for q := a; q <= b; q++ {
			if q == p {
				continue
			}
			u := int(tok[q])
			src := seeds[u*int(d) : (u+1)*int(d)]
			if !sh.cfg.Permute {
				addTo(acc, src)
				continue
			}
			// Element i of the seed lands on (i + shift) mod d.
			s := rotation(q-p, d)
			addTo(acc[s:], src[:d-s])
			addTo(acc[:s], src[d-s:])
		}
	}
	store(out, acc)
}

// gather sums into out the rows of src that list names, accumulating from
// zero in acc (float64).
func gather(list []int32, src []float32, out []float32, acc []float64) {
	clear(acc)
	d := len(out)
	for _, r := range list {
		addTo(acc, src[int(r)*d:(int(r)+1)*d])
	}
	store(out, acc)
}

// addToGo is addTo in Go (unrolled by four: Go does not vectorise, and the
// loop overhead would otherwise dominate); add_amd64.s does the same with
// SSE2.
func addToGo(dst []float64, src []float32) {
	src = src[:len(dst)]
	i := 0
	for ; i+4 <= len(dst); i += 4 {
		d, s := dst[i:i+4:i+4], src[i:i+4:i+4]
		d[0] += float64(s[0])
		d[1] += float64(s[1])
		d[2] += float64(s[2])
		d[3] += float64(s[3])
	}
	for ; i < len(dst); i++ {
		dst[i] += float64(src[i])
	}
}

// store rounds acc to float32 into out.
func store(out []float32, acc []float64) {
	acc = acc[:len(out)]
	for i := range out {
		out[i] = float32(acc[i])
	}
}

func (e *cpuEngine) termVectorInts(ctx context.Context) ([]int32, error) {
	return e.ints[:e.sh.c.Vocab()*e.sh.cfg.Dim], nil
}

func (e *cpuEngine) retrained(ctx context.Context) ([]float32, error) {
	return e.floats[:e.sh.c.Vocab()*e.sh.cfg.Dim], nil
}

func (e *cpuEngine) unit(ctx context.Context) ([]float32, error) {
	return e.seeds[:e.sh.c.Vocab()*e.sh.cfg.Dim], nil
}

func (e *cpuEngine) rowSums(ctx context.Context) ([]int64, error) {
	d, v := e.sh.cfg.Dim, e.sh.c.Vocab()
	sums := make([]int64, v)
	err := e.forEach(ctx, v, func(t int) {
		var s int64
		for _, x := range e.ints[t*d : (t+1)*d] {
			s += int64(x)
		}
		sums[t] = s
	})
	return sums, err
}

func (e *cpuEngine) close() error {
	e.ints, e.seeds, e.floats, e.docVecs = nil, nil, nil, nil
	return nil
}
