package lda

import "math"

// The definitions of the package comment's "Integer weights", shared by
// every engine; lda.cu computes the same values with the same IEEE
// operations (__dadd_rn, __ddiv_rn, __dmul_rn, ldexp, frexp).

// phiOf is φ = (w + β) / denom.
func phiOf(w uint32, denom, beta float64) float64 { return (float64(w) + beta) / denom }

// scaleOf is the exponent s with bound·2^s in [2^31, 2^32).
func scaleOf(bound float64) int {
	_, e := math.Frexp(bound)
	return 32 - e
}

// quantPhi is φ̂ = floor(φ·2^s).
func quantPhi(phi float64, s int) uint32 { return uint32(math.Ldexp(phi, s)) }

// quantAlpha is a = floor((α·φ)·2^s); the conversion rounds the product
// before scaling, as the GPU's __dmul_rn does.
func quantAlpha(phi, alpha float64, s int) uint64 {
	return uint64(math.Ldexp(float64(alpha*phi), s))
}

// Scale exponents: s_v is at least minScale (bound_v <= 1) and, with
// β >= MinBeta, fewer than numScales values occur.
const (
	minScale  = 31
	numScales = 64
)

// topicConsts are an iteration's per-topic constants and the shared
// branch's tables, from the frozen topic totals.
type topicConsts struct {
	alpha, beta float64
	denom       []float64
	zmax        float64 // β / min_k denom[k]: no zero-count φ is larger
	scales      int     // tables for s in [minScale, minScale+scales)
	// For scale s, row s-minScale: zphi[k] = φ̂ of a zero count,
	// gpre[k] = g_s[0] + ... + g_s[k], zphiMax = floor(zmax·2^s).
	zphi    [][]uint32
	gpre    [][]uint64
	zphiMax []uint32
}

func newTopicConsts(t []uint32, v int, alpha, beta float64) *topicConsts {
	k := len(t)
	tc := &topicConsts{alpha: alpha, beta: beta, denom: make([]float64, k)}
	vbeta := float64(float64(v) * beta)
	dmin := math.Inf(1)
	for i, n := range t {
		tc.denom[i] = float64(n) + vbeta
		dmin = min(dmin, tc.denom[i])
	}
	tc.zmax = phiOf(0, dmin, beta)
	tc.scales = scaleOf(tc.zmax) - minScale + 1
	tc.zphi = make([][]uint32, tc.scales)
	tc.gpre = make([][]uint64, tc.scales)
	tc.zphiMax = make([]uint32, tc.scales)
	for i := range tc.scales {
		s := minScale + i
		zphi, gpre := make([]uint32, k), make([]uint64, k)
		sum := uint64(0)
		for j := range k {
			phi := phiOf(0, tc.denom[j], beta)
			zphi[j] = quantPhi(phi, s)
			sum += quantAlpha(phi, alpha, s)
			gpre[j] = sum
		}
		tc.zphi[i], tc.gpre[i], tc.zphiMax[i] = zphi, gpre, quantPhi(tc.zmax, s)
	}
	return tc
}

// g is g_s[k].
func (tc *topicConsts) g(s int, k int) uint64 {
	p := tc.gpre[s-minScale]
	if k == 0 {
		return p[0]
	}
	return p[k] - p[k-1]
}

// gtotal is Σ_k g_s[k].
func (tc *topicConsts) gtotal(s int) uint64 {
	p := tc.gpre[s-minScale]
	return p[len(p)-1]
}

// searchShared returns the topic of x in the shared branch of scale s:
// the smallest k with g_s[0] + ... + g_s[k] > x (x below the total).
func (tc *topicConsts) searchShared(s int, x uint64) uint32 {
	p := tc.gpre[s-minScale]
	lo, hi := 0, len(p)-1
	for lo < hi {
		mid := (lo + hi) / 2
		if p[mid] > x {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	return uint32(lo)
}

// wordStat is what a token of a word needs besides its rows: the scale,
// the max topic and the shortcut's bound.
type wordStat struct {
	s    int32
	kmax uint32
	a1   uint32 // φ̂[kmax]
	a2   uint32 // bound on φ̂ of every other topic
	e1   uint64 // e[kmax]
	ew   uint64 // Σ_k e[k]
	atot uint64 // A = Σ_k a[k] = ew + Σ_k g_s[k]
}
