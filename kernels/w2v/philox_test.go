package w2v

import (
	"testing"

	"github.com/heatsink-hpc/heatsink/kernels/philox"
)

// A stream walks its counter's third word, four words at a time.
func TestStreamTakesFourWordsPerCounter(t *testing.T) {
	s := newStream(0x0123456789abcdef, 7, 1<<33+5)
	key := [2]uint32{0x89abcdef, 0x01234567}
	for k := uint32(0); k < 3; k++ {
		want := philox.Philox4x32([4]uint32{5, 7, k, 2}, key)
		for i := range want {
			if got := s.next(); got != want[i] {
				t.Fatalf("word %d of counter %d: %08x, want %08x", i, k, got, want[i])
			}
		}
	}
}
