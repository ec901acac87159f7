//go:build race

package w2v

import (
	"math"
	"sync/atomic"
	"unsafe"
)

// rowLoad copies row i of a V x d matrix into dst with atomic loads (see
// race_off.go for why the plain build does not).
func rowLoad(dst, m []float32, i, d int) {
	row := m[i*d : i*d+d]
	for e := range row {
		dst[e] = math.Float32frombits(atomic.LoadUint32((*uint32)(unsafe.Pointer(&row[e]))))
	}
}

// rowAddDelta adds (cur - orig) to row i of m, each element by an atomic
// compare-and-swap, as the GPU's atomicAdd does.
func rowAddDelta(m []float32, i, d int, cur, orig []float32) {
	row := m[i*d : i*d+d]
	for e := range row {
		delta := cur[e] - orig[e]
		p := (*uint32)(unsafe.Pointer(&row[e]))
		for {
			old := atomic.LoadUint32(p)
			if atomic.CompareAndSwapUint32(p, old, math.Float32bits(math.Float32frombits(old)+delta)) {
				break
			}
		}
	}
}

// rowAxpy adds g*x to row i of m, each element by an atomic
// compare-and-swap.
func rowAxpy(m []float32, i, d int, g float32, x []float32) {
	row := m[i*d : i*d+d]
	for e := range row {
		atomicAddF32(&row[e], float32(g*x[e]))
	}
}

// rowAdd adds x to row i of m, each element by an atomic compare-and-swap.
func rowAdd(m []float32, i, d int, x []float32) {
	row := m[i*d : i*d+d]
	for e := range row {
		atomicAddF32(&row[e], x[e])
	}
}

func atomicAddF32(x *float32, v float32) {
	p := (*uint32)(unsafe.Pointer(x))
	for {
		old := atomic.LoadUint32(p)
		if atomic.CompareAndSwapUint32(p, old, math.Float32bits(math.Float32frombits(old)+v)) {
			return
		}
	}
}

// raceBuild says the race detector is on: tests skip the long quality runs
// (the concurrent trainer is still exercised, on smaller corpora).
const raceBuild = true
