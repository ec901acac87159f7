package ri

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// addTo (SSE2 on amd64) computes exactly what the scalar Go loop does, for
// every length and for awkward values (denormals, infinities, NaN, signed
// zeros, huge and tiny magnitudes together).
func TestAddToMatchesScalar(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	special := []float32{0, float32(math.Copysign(0, -1)), math.SmallestNonzeroFloat32, -math.SmallestNonzeroFloat32,
		math.MaxFloat32, -math.MaxFloat32, float32(math.Inf(1)), float32(math.Inf(-1)), float32(math.NaN()), 1e-30, 3e30}
	for n := 0; n <= 70; n++ {
		src := make([]float32, n)
		dst := make([]float64, n)
		for i := range src {
			src[i] = float32(rng.NormFloat64() * math.Pow(10, float64(rng.IntN(20)-10)))
			dst[i] = rng.NormFloat64() * math.Pow(10, float64(rng.IntN(30)-15))
			if rng.IntN(5) == 0 {
				src[i] = special[rng.IntN(len(special))]
			}
		}
		want := slices.Clone(dst)
		addToGo(want, src)
		addTo(dst, src)
		for i := range dst {
			if math.Float64bits(dst[i]) != math.Float64bits(want[i]) && !(math.IsNaN(dst[i]) && math.IsNaN(want[i])) {
				t.Fatalf("n=%d element %d: %v + %v gave %v, the scalar loop %v", n, i, want[i], src[i], dst[i], want[i])
			}
		}
	}
}

// BenchmarkAddTo compares the retraining inner loop with and without SSE2
// on one row of d=2048 (in cache: the loop's own cost).
func BenchmarkAddTo(b *testing.B) {
	src := make([]float32, 2048)
	dst := make([]float64, 2048)
	for i := range src {
		src[i] = float32(i)
	}
	for _, impl := range []struct {
		name string
		f    func([]float64, []float32)
	}{{"go", addToGo}, {"simd", addTo}} {
		b.Run(impl.name, func(b *testing.B) {
			for b.Loop() {
				impl.f(dst, src)
			}
			b.ReportMetric(float64(len(src))*float64(b.N)/b.Elapsed().Seconds()/1e9, "Gelem/s")
		})
	}
}
