// Package philox is Philox4x32-10 (Salmon, Moraes, Dror and Shaw,
// "Parallel random numbers: as easy as 1, 2, 3", SC 2011; the Random123
// library), the counter-based generator the GPU workloads draw from. A
// draw is a pure function of its counter and key, so a CUDA kernel that
// computes the same rounds (lda.cu's lda_philox, w2v.cu's w2v_philox) draws
// exactly what the Go references draw, whatever order or thread mapping
// either uses.
package philox

import "math/bits"

// Constants from Random123's philox.h.
const (
	m0 = 0xD2511F53
	m1 = 0xCD9E8D57
	w0 = 0x9E3779B9 // golden ratio
	w1 = 0xBB67AE85 // sqrt(3)-1
)

// Rounds is the number of rounds of Philox4x32-10.
const Rounds = 10

// Philox4x32 is Philox4x32-10: ten rounds over a 128-bit counter with a
// 64-bit key, as Random123's philox4x32 (the key is bumped between rounds).
func Philox4x32(ctr [4]uint32, key [2]uint32) [4]uint32 { return philox4x32R(Rounds, ctr, key) }

func philox4x32R(rounds int, ctr [4]uint32, key [2]uint32) [4]uint32 {
	for r := 0; r < rounds; r++ {
		if r > 0 {
			key[0] += w0
			key[1] += w1
		}
		hi0, lo0 := bits.Mul32(m0, ctr[0])
		hi1, lo1 := bits.Mul32(m1, ctr[2])
		ctr = [4]uint32{hi1 ^ ctr[1] ^ key[0], lo1, hi0 ^ ctr[3] ^ key[1], lo0}
	}
	return ctr
}

// Key splits a 64-bit seed into Philox's key: low word first.
func Key(seed uint64) [2]uint32 { return [2]uint32{uint32(seed), uint32(seed >> 32)} }
