package lda

import "math/bits"

// Philox4x32-10 (Salmon, Moraes, Dror and Shaw, "Parallel random numbers:
// as easy as 1, 2, 3", SC 2011; the Random123 library): a counter-based
// generator, so the draw for a token is a pure function of (seed,
// iteration, token index) and the CPU and the GPU (lda.cu's lda_philox,
// the same function line for line) draw the same numbers whatever order or
// thread mapping they use.

// Philox constants from Random123's philox.h.
const (
	philoxM0 = 0xD2511F53
	philoxM1 = 0xCD9E8D57
	philoxW0 = 0x9E3779B9 // golden ratio
	philoxW1 = 0xBB67AE85 // sqrt(3)-1
)

// Philox4x32 is Philox4x32-10: ten rounds over a 128-bit counter with a
// 64-bit key, as Random123's philox4x32 (the key is bumped between rounds).
func Philox4x32(ctr [4]uint32, key [2]uint32) [4]uint32 {
	return philox4x32R(10, ctr, key)
}

func philox4x32R(rounds int, ctr [4]uint32, key [2]uint32) [4]uint32 {
	for r := 0; r < rounds; r++ {
		if r > 0 {
			key[0] += philoxW0
			key[1] += philoxW1
		}
		hi0, lo0 := bits.Mul32(philoxM0, ctr[0])
		hi1, lo1 := bits.Mul32(philoxM1, ctr[2])
		ctr = [4]uint32{hi1 ^ ctr[1] ^ key[0], lo1, hi0 ^ ctr[3] ^ key[1], lo0}
	}
	return ctr
}

// Streams separate the uses of one seed: the counter's third word.
const (
	streamSample = 0 // the sampler: iteration 0 draws the initial topics
)

// draw is the 128 random bits of token tok (its index in the corpus's
// document order) in iteration iter: counter (tok, iter, stream, 0), key
// the seed's two halves.
func draw(seed uint64, iter, tok uint32, stream uint32) [4]uint32 {
	return Philox4x32([4]uint32{tok, iter, stream, 0}, [2]uint32{uint32(seed), uint32(seed >> 32)})
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
