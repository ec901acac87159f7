//go:build !amd64

package ri

// addTo adds src into dst element by element, in float64: the retraining
// sums' inner loop.
func addTo(dst []float64, src []float32) { addToGo(dst, src) }
