package w2v

import "fmt"

// huffman is word2vec's binary tree over the vocabulary for hierarchical
// softmax, as CreateBinaryTree builds it: word a's path from the root is
// codes[off[a]:off[a+1]] (the branch taken at each inner node, 0 or 1) and
// points[off[a]:off[a+1]] (those inner nodes, 0..V-2, the root V-2 first),
// the rows of syn1 it trains. Training pairs the j-th inner node with the
// label 1 - code[j], as word2vec does.
type huffman struct {
	off    []int32 // V+1
	codes  []uint8
	points []int32
}

// newHuffman builds word2vec's tree from counts, which word2vec sorts in
// descending order (its merge of two queues relies on it; </s> first
// breaks the order the way it does in word2vec too). It needs at least two
// words: one word has no decision to train.
func newHuffman(counts []int64) (*huffman, error) {
	v := len(counts)
	if v < 2 {
		return nil, fmt.Errorf("hierarchical softmax over %d words: the Huffman tree needs at least 2", v)
	}
	// The two queues of CreateBinaryTree: the leaves by count (read from
	// the end, the rarest first) and the inner nodes in creation order
	// (counts non-decreasing), merged by taking the smaller head.
	count := make([]int64, 2*v-1)
	copy(count, counts)
	for a := v; a < 2*v-1; a++ {
		count[a] = 1e15
	}
	parent := make([]int32, 2*v-1)
	binary := make([]uint8, 2*v-1)
	pos1, pos2 := v-1, v
	smallest := func() int {
		if pos1 >= 0 && count[pos1] < count[pos2] {
			pos1--
			return pos1 + 1
		}
		pos2++
		return pos2 - 1
	}
	for a := 0; a < v-1; a++ {
		min1 := smallest()
		min2 := smallest()
		count[v+a] = count[min1] + count[min2]
		parent[min1], parent[min2] = int32(v+a), int32(v+a)
		binary[min2] = 1
	}
	h := &huffman{off: make([]int32, v+1)}
	root := int32(2*v - 2)
	var code []uint8
	var point []int32
	for a := 0; a < v; a++ {
		code, point = code[:0], point[:0]
		for b := int32(a); b != root; b = parent[b] {
			code = append(code, binary[b])
			point = append(point, b)
		}
		// Walked leaf to root; stored root to leaf, inner nodes numbered
		// from 0 (node v+i is syn1's row i), the root's v-2.
		n := len(code)
		for j := n - 1; j >= 0; j-- {
			h.codes = append(h.codes, code[j])
		}
		h.points = append(h.points, int32(v-2))
		for j := n - 1; j >= 1; j-- {
			h.points = append(h.points, point[j]-int32(v))
		}
		h.off[a+1] = int32(len(h.codes))
	}
	return h, nil
}

// path is word w's codes and inner nodes, root first.
func (h *huffman) path(w int32) (codes []uint8, points []int32) {
	lo, hi := h.off[w], h.off[w+1]
	return h.codes[lo:hi], h.points[lo:hi]
}

// longest is the longest code's length.
func (h *huffman) longest() int {
	n := 0
	for a := 0; a+1 < len(h.off); a++ {
		n = max(n, int(h.off[a+1]-h.off[a]))
	}
	return n
}
