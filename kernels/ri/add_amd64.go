package ri

// addF32ToF64 adds src[i], widened, to dst[i] for 8*blocks elements
// (add_amd64.s: SSE2 CVTPS2PD and ADDPD, each element's add rounded as
// Go's float64 addition rounds it).
//
//go:noescape
func addF32ToF64(dst *float64, src *float32, blocks int)

// addTo adds src into dst element by element, in float64: the retraining
// sums' inner loop.
func addTo(dst []float64, src []float32) {
	src = src[:len(dst)]
	n := len(dst) &^ 7
	if n > 0 {
		addF32ToF64(&dst[0], &src[0], n/8)
	}
	addToGo(dst[n:], src[n:])
}
