package lda

import "testing"

// The draws are uniform enough for the sampler: the initial topics of many
// tokens spread evenly over K, and the 64-bit uniforms' top bits too.
func TestDrawsAreUniform(t *testing.T) {
	const k, n = 16, 160_000
	var topics [k]int
	var halves [2]int
	for tok := uint32(0); tok < n; tok++ {
		topics[initialTopic(42, tok, k)]++
		halves[tokenUniform(42, 3, tok)>>63]++
	}
	// Each bin has mean n/k = 10000 and sd ~97; 6 sd is a generous bound.
	for i, c := range topics {
		if c < 10000-600 || c > 10000+600 {
			t.Errorf("topic %d drawn %d times of %d, want about %d", i, c, n, n/k)
		}
	}
	if halves[0] < n/2-1200 || halves[0] > n/2+1200 {
		t.Errorf("top bit of the uniforms set %d times of %d", halves[1], n)
	}
	// Different iterations, tokens and seeds give different numbers.
	if tokenUniform(1, 1, 0) == tokenUniform(1, 2, 0) || tokenUniform(1, 1, 0) == tokenUniform(1, 1, 1) ||
		tokenUniform(1, 1, 0) == tokenUniform(2, 1, 0) || tokenUniform(1<<32, 1, 0) == tokenUniform(0, 1, 0) {
		t.Error("draws do not depend on every part of their key")
	}
}

func TestScaleUniformIsMonotoneAndInRange(t *testing.T) {
	for _, r := range []uint64{0, 1, 1 << 63, ^uint64(0), 0x123456789abcdef0} {
		prev := uint64(0)
		for _, total := range []uint64{1, 2, 3, 1000, 1 << 40, 1<<63 + 5, ^uint64(0)} {
			x := scaleUniform(r, total)
			if x >= total {
				t.Errorf("scaleUniform(%#x, %d) = %d, not below the total", r, total, x)
			}
			if x < prev {
				t.Errorf("scaleUniform(%#x, ·) decreased from %d to %d at total %d", r, prev, x, total)
			}
			prev = x
		}
	}
}
