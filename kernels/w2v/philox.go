package w2v

import "math/bits"

// Philox4x32-10 (Salmon, Moraes, Dror and Shaw, "Parallel random numbers:
// as easy as 1, 2, 3", SC 2011; the Random123 library), as kernels/lda
// has it: a counter-based generator, so a token's draws are a pure
// function of (seed, epoch, corpus position), and the GPU (w2v.cu's
// w2v_philox, the same function line for line) draws what the Go sampler
// draws whatever order or thread mapping it uses.

// Philox constants from Random123's philox.h.
const (
	philoxM0 = 0xD2511F53
	philoxM1 = 0xCD9E8D57
	philoxW0 = 0x9E3779B9 // golden ratio
	philoxW1 = 0xBB67AE85 // sqrt(3)-1
)

// philox4x32 is Philox4x32-10: ten rounds over a 128-bit counter with a
// 64-bit key, the key bumped between rounds.
func philox4x32(ctr [4]uint32, key [2]uint32) [4]uint32 {
	for r := 0; r < 10; r++ {
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

// stream is the draws of the raw token at corpus position pos in epoch e:
// the 32-bit words of Philox at counters (pos, e, k, pos >> 32) for
// k = 0, 1, 2, ..., four words per counter, in order; the key is the
// seed's two halves. Its first word decides subsampling, the rest go to
// the token's negatives (w2v.cu's w2v_stream).
type stream struct {
	ctr  [4]uint32
	key  [2]uint32
	buf  [4]uint32
	used int
}

func newStream(seed uint64, epoch int, pos int64) stream {
	s := stream{ctr: [4]uint32{uint32(pos), uint32(epoch), 0, uint32(uint64(pos) >> 32)}, key: [2]uint32{uint32(seed), uint32(seed >> 32)}}
	s.buf = philox4x32(s.ctr, s.key)
	return s
}

func (s *stream) next() uint32 {
	if s.used == 4 {
		s.ctr[2]++
		s.buf = philox4x32(s.ctr, s.key)
		s.used = 0
	}
	x := s.buf[s.used]
	s.used++
	return x
}

// scale maps a 32-bit uniform x to [0, n): floor(x*n / 2^32) (__umulhi).
func scale(x uint32, n int) uint32 { return uint32(uint64(x) * uint64(n) >> 32) }
