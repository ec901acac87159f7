package ri

import (
	"math"
	"slices"
	"strconv"
	"testing"
)

// The hash and the generator are the published ones: FNV-1a 64 and
// SplitMix64's output function.
func TestHashConstants(t *testing.T) {
	for _, tc := range []struct {
		name      string
		got, want uint64
	}{
		{`fnv1a64("")`, fnv1a64(nil), 0xcbf29ce484222325},
		{`fnv1a64("a")`, fnv1a64([]byte("a")), 0xaf63dc4c8601ec8c},
		// SplitMix64 seeded with 0: its first output.
		{"mix64(golden)", mix64(golden64), 0xe220a8397b1dcdaf},
	} {
		if tc.got != tc.want {
			t.Errorf("%s = %#x, want %#x", tc.name, tc.got, tc.want)
		}
	}
}

// The index vectors are frozen: vectors saved by one version, or computed
// by ri.cu, must stay comparable. The expected entries come from an
// independent Python transcription of the definition in index.go.
func TestIndexVectorDefinition(t *testing.T) {
	for _, tc := range []struct {
		key  uint64
		want []int32
	}{
		{TermKey("god"), []int32{-1489, 1017, -1066, 1931, -808, -587, -1852, 2029, -990, -1888}},
		{DocKey(3), []int32{1793, -615, -616, -1045, 473, 1375, -1550, -1280, 331, -1401}},
	} {
		got := make([]int32, 10)
		indexVector(tc.key, 1, 2048, got)
		if !slices.Equal(got, tc.want) {
			t.Errorf("key %#x: %v, want %v", tc.key, got, tc.want)
		}
	}
}

// Every index vector has exactly k distinct positions in [0, d), about
// half of them +1, and distinct vectors are nearly orthogonal: two random
// k-sparse vectors share about k²/d positions, so the mean |cos| is about
// k/d; the bound asserted is 1.5 k/d (and no pair above 0.5).
func TestIndexVectorsNearlyOrthogonal(t *testing.T) {
	for _, tc := range []struct{ d, k, n int }{{2048, 10, 1500}, {512, 8, 1500}, {64, 32, 300}} {
		keys := make([]uint64, tc.n)
		for i := range keys {
			keys[i] = TermKey("term" + strconv.Itoa(i))
		}
		table := IndexTable(keys, 42, tc.d, tc.k)
		plus := 0
		dense := make([][]int32, tc.n)
		for i := range keys {
			seen := map[int32]bool{}
			for _, e := range table[i*tc.k : (i+1)*tc.k] {
				p, s := entry(e)
				if p < 0 || int(p) >= tc.d || seen[p] {
					t.Fatalf("d=%d k=%d vector %d: entries %v: position out of range or repeated", tc.d, tc.k, i, table[i*tc.k:(i+1)*tc.k])
				}
				seen[p] = true
				if s > 0 {
					plus++
				}
			}
			dense[i] = Dense(table, i, tc.k, tc.d)
		}
		if f := float64(plus) / float64(tc.n*tc.k); f < 0.45 || f > 0.55 {
			t.Errorf("d=%d k=%d: %.3f of the entries are +1, want about half", tc.d, tc.k, f)
		}
		if tc.k*2 > tc.d/2 {
			continue // dense vectors: orthogonality is not the point
		}
		var sum, worst float64
		pairs := 0
		for i := 0; i < tc.n; i++ {
			for j := i + 1; j < tc.n; j++ {
				dot := 0
				for _, e := range table[j*tc.k : (j+1)*tc.k] {
					p, s := entry(e)
					dot += int(dense[i][p] * s)
				}
				c := math.Abs(float64(dot)) / float64(tc.k)
				sum += c
				worst = max(worst, c)
				pairs++
			}
		}
		mean := sum / float64(pairs)
		t.Logf("d=%d k=%d: mean |cos| %.5f (k/d = %.5f), max %.3f over %d pairs", tc.d, tc.k, mean, float64(tc.k)/float64(tc.d), worst, pairs)
		if bound := 1.5 * float64(tc.k) / float64(tc.d); mean > bound {
			t.Errorf("d=%d k=%d: mean |cos| %.5f above %.5f", tc.d, tc.k, mean, bound)
		}
		if worst > 0.5 {
			t.Errorf("d=%d k=%d: a pair has |cos| %.3f", tc.d, tc.k, worst)
		}
	}
}

// The seed changes every vector; the same seed gives the same ones.
func TestIndexVectorsSeed(t *testing.T) {
	keys := []uint64{TermKey("light"), TermKey("darkness"), DocKey(0)}
	a, b, c := IndexTable(keys, 1, 1024, 8), IndexTable(keys, 1, 1024, 8), IndexTable(keys, 2, 1024, 8)
	if !slices.Equal(a, b) {
		t.Fatal("same seed, different vectors")
	}
	for i := range keys {
		if slices.Equal(a[i*8:(i+1)*8], c[i*8:(i+1)*8]) {
			t.Errorf("key %d: seeds 1 and 2 give the same vector", i)
		}
	}
}
