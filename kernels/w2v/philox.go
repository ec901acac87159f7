package w2v

import "github.com/heatsink-hpc/heatsink/kernels/philox"

// A token's draws come from Philox4x32-10 (kernels/philox), so they are a
// pure function of (seed, epoch, corpus position), and the GPU (w2v.cu's
// w2v_philox) draws what the Go sampler draws whatever order or thread
// mapping it uses.

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
	s := stream{ctr: [4]uint32{uint32(pos), uint32(epoch), 0, uint32(uint64(pos) >> 32)}, key: philox.Key(seed)}
	s.buf = philox.Philox4x32(s.ctr, s.key)
	return s
}

func (s *stream) next() uint32 {
	if s.used == 4 {
		s.ctr[2]++
		s.buf = philox.Philox4x32(s.ctr, s.key)
		s.used = 0
	}
	x := s.buf[s.used]
	s.used++
	return x
}

// scale maps a 32-bit uniform x to [0, n): floor(x*n / 2^32) (__umulhi).
func scale(x uint32, n int) uint32 { return uint32(uint64(x) * uint64(n) >> 32) }
