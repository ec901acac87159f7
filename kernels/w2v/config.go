// Package w2v is word2vec's skip-gram with negative sampling (SGNS) in the
// design of FULL-W2V (Randall, Allen and Ge, "FULL-W2V: Fully Exploiting
// Data Reuse for W2V on GPU-Accelerated Systems", ICS 2021): a CUDA kernel
// (kernels/w2v/w2v.cu) and a Go trainer with the same arithmetic, which is both
// the kernel's reference and the cpu device of the full-w2v workload
// (Hogwild over goroutines, as word2vec.c does with threads). Around them:
// corpora (text files with a saved and reused vocabulary, and seeded
// synthetic corpora: a Zipfian one of text8's shape and ones with planted
// clusters and analogies), vectors in word2vec's text and binary formats,
// and evaluation (WS-353 and SimLex-999 Spearman, Google analogies by
// 3CosAdd and 3CosMul, planted-structure scores).
//
// # The computation
//
// A corpus is a list of sentences of vocabulary ids, cut only at a maximum
// length (and, for text, at line ends). For every epoch e and raw token at
// corpus position i, the draws come from Philox4x32-10 keyed by the seed
// and counted by (i, e) (philox.go), so the GPU draws them too, in any
// order, and gets the same:
//
//   - whether the token is kept: word2vec's subsampling, a token of a word
//     of count c kept with probability (sqrt(c/(s*T)) + 1) * s*T/c for
//     threshold s and T training words;
//   - N negatives for every kept token, drawn from word2vec's table of
//     unigram counts to the power 0.75, redrawn when equal to the token's
//     word; they are shared by every context word of the window centred
//     there (FULL-W2V's reuse);
//
// and sentence i's learning rate is linear in the words processed before
// it: alpha0 * max(1e-4, 1 - done/(epochs*T + 1)).
//
// A sentence of kept length L >= 2 is then trained with the fixed window
// W_f = ceil(W/2): for every centre position w in order, its outputs (the
// centre word with label 1, then its N negatives with label 0) are taken
// one at a time: the output's row o is read from syn1neg, paired in turn
// with every context position p = w-W_f .. w+W_f (p != w, 0 <= p < L) in
// ascending order:
//
//	f = c_p . o          (the dot-product order below)
//	g = (label - sigma(f)) * alpha
//	c_p <- c_p + g*o ;  o <- o + g*c_p(old)
//
// and written back: syn1neg[o] += (o - o at its read). A context vector
// c_p is a private copy of syn0[token p], read when position p enters the
// window (positions 0..W_f before the first centre, position w+W_f+1 after
// centre w) and written back as syn0 += (c_p - c_p at its read) when it
// leaves (position w-W_f after centre w, first; the rest after the last
// centre, in ascending order); with Config.Fresh, the copies of centre w's
// contexts are read before its outputs and written back after them, in
// ascending order. sigma is word2vec's table of 1000 logistic
// values over [-6, 6), indexed by int((f+6) * 1000/12); f >= 6 and f <= -6
// saturate. Every operation is a float32 operation rounded on its own (no
// fused multiply-add, in Go or on the GPU). (The GPU reads each row a
// little before this order does, so that its loads overlap the work, and
// reads it again where this order would see a write of its own between.)
//
// The dot product of a d-vector follows the GPU's lanes: with a warp per
// sentence (d <= 256) lane j of 32 sums elements j, j+32, j+64, ... in
// order starting from zero; with a block per sentence (FULL-W2V's layout,
// d <= 1024) thread t of 32*ceil(d/32) holds element t alone. Lane sums
// are reduced by butterfly within each warp of 32 (s = 16, 8, 4, 2, 1:
// lane j adds lane j^s) and warp sums added in warp order. Computed this
// way, the Go trainer run on one goroutine and the kernel run one sentence
// at a time agree bit for bit; on many goroutines or sentences at once the
// updates race as word2vec's do (Hogwild).
//
// # Hierarchical softmax and Wombat
//
// Config.Objective ObjectiveHS trains hierarchical softmax over word2vec's
// Huffman tree (huffman.go) in word2vec's SGHS order (sghs.go), with the
// same fixed window and subsampling. Config.Kernel KernelWombat trains
// either objective as Wombat (Simonton and Alaghband, "Efficient and
// Accurate Word2Vec Implementations in GPU and Shared-Memory Multicore
// Architectures") does: a window as one small matrix step on the CPU
// (wombat.go), and on the GPU host-assembled tiles and pairs (wombat_plan.go
// defines them and the kernels' arithmetic; wombat_gpu.go runs them).
//
// Differences from word2vec.c, all FULL-W2V's but the generator: the fixed
// window instead of a random one of mean size (W+1)/2; negatives shared by
// a window instead of drawn per context word; context and output vectors
// updated in private copies and written back as deltas; the learning rate
// set per sentence; Philox's draws instead of word2vec's linear
// congruential generator.
package w2v

import (
	"fmt"
)

// Kernel layouts: how the d elements of a vector are spread over the GPU's
// threads, which fixes the order of the dot product's additions.
const (
	// KernelAuto picks KernelWarp for d <= MaxWarpDim, else KernelBlock.
	KernelAuto = "auto"
	// KernelWarp is a warp per sentence, ceil(d/32) elements per lane.
	KernelWarp = "warp"
	// KernelBlock is FULL-W2V's block per sentence, one element per thread.
	KernelBlock = "block"
	// KernelWombat is Wombat's batched training (Simonton and Alaghband):
	// a window's outputs and contexts trained as one small matrix product
	// on the CPU (wombat.go), and on the GPU host-assembled batches of
	// 4x8 tiles and single pairs (w2v.cu's wombat_* kernels). Its dot
	// products follow the warp layout's lanes.
	KernelWombat = "wombat"
)

// Objectives: what the output vectors predict.
const (
	// ObjectiveNS is negative sampling: the centre word against N
	// negatives, with output vectors per word (syn1neg).
	ObjectiveNS = "ns"
	// ObjectiveHS is hierarchical softmax: the binary decisions on the
	// path from word2vec's Huffman root to the centre word, with output
	// vectors per inner node (syn1; huffman.go).
	ObjectiveHS = "hs"
)

// Limits of Config's fields.
const (
	MaxDim       = 1024 // a block of at most 1024 threads, one element each
	MaxWarpDim   = 256  // a warp with at most 8 elements per lane
	MaxWindow    = 20   // W_f <= 10: the ring of 2*W_f+1 vectors fits shared memory
	MaxNegatives = 64
	MaxEpochs    = 1000
)

// Config is one training run's hyperparameters (word2vec's flag names in
// brackets).
type Config struct {
	Dim       int     // d, the vectors' size [-size]
	Window    int     // W [-window]; the fixed window is W_f = ceil(W/2)
	Negatives int     // N [-negative]
	Sample    float64 // subsampling threshold s [-sample]; 0 keeps every token
	Alpha     float64 // starting learning rate [-alpha]
	Epochs    int     // [-iter]
	Seed      uint64  // seeds the initial weights and every sentence's draws
	// TableSize is the unigram table's length (word2vec: 1e8). Its draws
	// are random reads: a table that fits the caches is much faster to
	// sample, at a coarser distribution for the rarest words.
	TableSize int
	// Kernel is the layout (KernelAuto, KernelWarp, KernelBlock); the CPU
	// follows it too, so that both compute the same sums.
	Kernel string
	// Fresh keeps a context copy for one window, as word2vec does: read
	// when the window starts, written back when it ends. Without it a copy
	// lives in FULL-W2V's ring for its 2*W_f+1 windows, read and written
	// once; with thousands of sentences at once (the GPU) such a copy
	// misses many other sentences' updates to its row, and they its own.
	Fresh bool
	// Objective is ObjectiveNS ("" too) or ObjectiveHS [-negative N / -hs 1].
	Objective string
}

// HS says the objective is hierarchical softmax.
func (c Config) HS() bool { return c.Objective == ObjectiveHS }

// Wombat says the kernel is Wombat's batched training.
func (c Config) Wombat() bool { return c.Kernel == KernelWombat }

// DefaultConfig is the benchmark setting: d=128, N=5, W=5 (W_f=3),
// sample 1e-3, alpha 0.025 (word2vec's skip-gram default), one epoch; and
// fresh contexts, which keep GPU vectors as good as the CPU's with
// thousands of sentences at once.
func DefaultConfig() Config {
	return Config{Dim: 128, Window: 5, Negatives: 5, Sample: 1e-3, Alpha: 0.025, Epochs: 1, Seed: 1,
		TableSize: 1e7, Kernel: KernelAuto, Fresh: true}
}

// WindowFixed is FULL-W2V's fixed window W_f = ceil(W/2): word2vec draws
// its window uniformly from 1..W, whose mean is (W+1)/2.
func (c Config) WindowFixed() int { return (c.Window + 1) / 2 }

// Validate checks the fields' ranges, naming the first one out of range.
func (c Config) Validate() error {
	switch {
	case c.Dim < 1 || c.Dim > MaxDim:
		return fmt.Errorf("dimension %d: want 1 to %d", c.Dim, MaxDim)
	case c.Window < 1 || c.Window > MaxWindow:
		return fmt.Errorf("window %d: want 1 to %d", c.Window, MaxWindow)
	case c.Negatives < 1 || c.Negatives > MaxNegatives:
		return fmt.Errorf("negatives %d: want 1 to %d", c.Negatives, MaxNegatives)
	case !(c.Sample >= 0 && c.Sample < 1):
		return fmt.Errorf("sample %g: want 0 (off) or a threshold below 1", c.Sample)
	case !(c.Alpha > 0 && c.Alpha <= 1):
		return fmt.Errorf("alpha %g: want a learning rate in (0, 1]", c.Alpha)
	case c.Epochs < 1 || c.Epochs > MaxEpochs:
		return fmt.Errorf("epochs %d: want 1 to %d", c.Epochs, MaxEpochs)
	case c.TableSize < 1 || c.TableSize > 1<<30:
		return fmt.Errorf("unigram table size %d: want 1 to %d", c.TableSize, 1<<30)
	}
	switch c.Objective {
	case "", ObjectiveNS, ObjectiveHS:
	default:
		return fmt.Errorf("objective %q: want %s or %s", c.Objective, ObjectiveNS, ObjectiveHS)
	}
	_, err := c.layout()
	return err
}

// layout is the lane arrangement of the kernel Config.Kernel selects.
func (c Config) layout() (layout, error) {
	k := c.Kernel
	if k == "" || k == KernelAuto {
		k = KernelWarp
		if c.Dim > MaxWarpDim {
			k = KernelBlock
		}
	}
	switch k {
	case KernelWarp:
		if c.Dim > MaxWarpDim {
			return layout{}, fmt.Errorf("kernel %s holds at most %d elements (8 per lane); dimension %d needs kernel %s",
				KernelWarp, MaxWarpDim, c.Dim, KernelBlock)
		}
		return newLayout(c.Dim, 1), nil
	case KernelBlock:
		return newLayout(c.Dim, (c.Dim+31)/32), nil
	case KernelWombat:
		// Wombat's vector kernel spreads a vector over one warp's lanes
		// at any d; its tiles keep 12 rows in shared memory.
		return newLayout(c.Dim, 1), nil
	}
	return layout{}, fmt.Errorf("kernel %q: want %s, %s, %s or %s", c.Kernel, KernelAuto, KernelWarp, KernelBlock, KernelWombat)
}

// layout is how a vector's d elements sit on warps x 32 lanes: element e on
// lane e mod (32*warps), the lane's k-th element being e = lane + k*32*warps.
type layout struct {
	dim, warps int
	ept        int // elements per lane, rounded up to a power of two (the kernel's template)
}

func newLayout(dim, warps int) layout {
	lanes := 32 * warps
	per := (dim + lanes - 1) / lanes
	ept := 1
	for ept < per {
		ept *= 2
	}
	return layout{dim: dim, warps: warps, ept: ept}
}

// kernelName is the CUDA kernel that runs this layout.
func (l layout) kernelName() string {
	if l.warps > 1 {
		return "w2v_sgns_block"
	}
	return fmt.Sprintf("w2v_sgns_warp%d", l.ept)
}
