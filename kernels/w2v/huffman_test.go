package w2v

import (
	"container/heap"
	"math/rand/v2"
	"slices"
	"testing"
)

// Counts 5, 3, 2, 1 worked through word2vec's CreateBinaryTree by hand:
// merges (1,2)->node 4 (count 3; the 2 takes branch 1), then (node 4, 3)
// -> node 5 (6; the leaf 3 takes 1), then (5, node 5) -> node 6, the root
// (the inner node takes 1). Inner nodes v..2v-2 become rows 0..v-2 of syn1.
func TestHuffmanMatchesWord2vecByHand(t *testing.T) {
	h, err := newHuffman([]int64{5, 3, 2, 1})
	if err != nil {
		t.Fatal(err)
	}
	want := []struct {
		codes  []uint8
		points []int32
	}{
		{[]uint8{0}, []int32{2}},
		{[]uint8{1, 1}, []int32{2, 1}},
		{[]uint8{1, 0, 1}, []int32{2, 1, 0}},
		{[]uint8{1, 0, 0}, []int32{2, 1, 0}},
	}
	for w, x := range want {
		codes, points := h.path(int32(w))
		if !slices.Equal(codes, x.codes) || !slices.Equal(points, x.points) {
			t.Errorf("word %d: codes %v points %v, want %v %v", w, codes, points, x.codes, x.points)
		}
	}
	if h.longest() != 3 {
		t.Errorf("longest code %d, want 3", h.longest())
	}
}

func TestHuffmanRefusesOneWord(t *testing.T) {
	if _, err := newHuffman([]int64{7}); err == nil {
		t.Error("a one-word vocabulary built a tree")
	}
}

// countHeap is a textbook Huffman construction's queue, the reference for
// the optimal weighted code length.
type countHeap []int64

func (h countHeap) Len() int           { return len(h) }
func (h countHeap) Less(i, j int) bool { return h[i] < h[j] }
func (h countHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *countHeap) Push(x any)        { *h = append(*h, x.(int64)) }
func (h *countHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// optimalWeightedLength is sum(count * code length) of any Huffman code:
// the sum of every merge's count.
func optimalWeightedLength(counts []int64) int64 {
	h := countHeap(slices.Clone(counts))
	heap.Init(&h)
	var total int64
	for h.Len() > 1 {
		a, b := heap.Pop(&h).(int64), heap.Pop(&h).(int64)
		total += a + b
		heap.Push(&h, a+b)
	}
	return total
}

// For random descending counts (Zipfian, flat, with ties): the codes are
// prefix-free, their weighted length is a Huffman code's (optimal), every
// prefix of a code names one inner node whatever word it leads to, and
// every inner node is on some path.
func TestHuffmanIsAnOptimalPrefixCode(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for trial := 0; trial < 200; trial++ {
		v := 2 + r.IntN(300)
		counts := make([]int64, v)
		for i := range counts {
			switch trial % 3 {
			case 0:
				counts[i] = 1 + int64(100000/(i+1))
			case 1:
				counts[i] = 1 + r.Int64N(5)
			default:
				counts[i] = 1 + r.Int64N(1e6)
			}
		}
		slices.SortFunc(counts, func(a, b int64) int { return int(b - a) })
		h, err := newHuffman(counts)
		if err != nil {
			t.Fatal(err)
		}
		var weighted int64
		node := map[string]int32{} // code prefix -> inner node
		seen := make([]bool, v-1)
		codes := map[string]int{}
		for w := 0; w < v; w++ {
			c, p := h.path(int32(w))
			if len(c) == 0 || len(c) != len(p) {
				t.Fatalf("trial %d word %d: %d codes, %d points", trial, w, len(c), len(p))
			}
			weighted += counts[w] * int64(len(c))
			key := ""
			for j := range c {
				if p[j] < 0 || int(p[j]) >= v-1 {
					t.Fatalf("trial %d word %d: point %d outside 0..%d", trial, w, p[j], v-2)
				}
				if n, ok := node[key]; ok && n != p[j] {
					t.Fatalf("trial %d: prefix %q leads to nodes %d and %d", trial, key, n, p[j])
				}
				node[key] = p[j]
				seen[p[j]] = true
				key += string('0' + c[j])
			}
			codes[key] = w
		}
		for code, w := range codes {
			for j := 1; j < len(code); j++ {
				if other, ok := codes[code[:j]]; ok {
					t.Fatalf("trial %d: word %d's code %s is a prefix of word %d's %s", trial, other, code[:j], w, code)
				}
			}
		}
		if len(codes) != v {
			t.Fatalf("trial %d: %d distinct codes for %d words", trial, len(codes), v)
		}
		if want := optimalWeightedLength(counts); weighted != want {
			t.Fatalf("trial %d (%d words): weighted length %d, a Huffman code's is %d", trial, v, weighted, want)
		}
		for i, s := range seen {
			if !s {
				t.Fatalf("trial %d: inner node %d on no path", trial, i)
			}
		}
	}
}
