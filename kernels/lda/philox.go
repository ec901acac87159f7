package lda

import (
	"math/bits"

	"github.com/heatsink-hpc/heatsink/kernels/philox"
)

// The sampler's draws come from Philox4x32-10 (kernels/philox), so the
// draw for a token is a pure function of (seed, iteration, token index),
// and lda.cu's lda_philox draws the same numbers.

// Streams separate the uses of one seed: the counter's third word.
const (
	streamSample = 0 // the sampler: iteration 0 draws the initial topics
)

// draw is the 128 random bits of token tok (its index in the corpus's
// document order) in iteration iter: counter (tok, iter, stream, 0), key
// the seed's two halves.
func draw(seed uint64, iter, tok uint32, stream uint32) [4]uint32 {
	return philox.Philox4x32([4]uint32{tok, iter, stream, 0}, philox.Key(seed))
}

// tokenUniform is the 64-bit uniform token tok samples with in iteration
// iter (iterations count from 1).
func tokenUniform(seed uint64, iter, tok uint32) uint64 {
	r := draw(seed, iter, tok, streamSample)
	return uint64(r[0]) | uint64(r[1])<<32
}

// initialTopic is token tok's topic before the first iteration: uniform in
// [0, k) from iteration 0's draw.
func initialTopic(seed uint64, tok uint32, k int) uint32 {
	r := draw(seed, 0, tok, streamSample)
	return uint32(uint64(r[0]) * uint64(k) >> 32)
}

// scaleUniform maps a 64-bit uniform r to [0, total): floor(r·total/2^64).
// It is non-decreasing in total, which the max-topic shortcut's proof uses.
func scaleUniform(r, total uint64) uint64 {
	hi, _ := bits.Mul64(r, total)
	return hi
}
