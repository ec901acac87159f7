package w2v

import "testing"

// Random123's known-answer vectors for philox4x32-10 (kat_vectors).
func TestPhiloxKnownAnswers(t *testing.T) {
	for _, c := range []struct {
		ctr  [4]uint32
		key  [2]uint32
		want [4]uint32
	}{
		{[4]uint32{0, 0, 0, 0}, [2]uint32{0, 0}, [4]uint32{0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8}},
		{[4]uint32{0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff}, [2]uint32{0xffffffff, 0xffffffff}, [4]uint32{0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd}},
		{[4]uint32{0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344}, [2]uint32{0xa4093822, 0x299f31d0}, [4]uint32{0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1}},
	} {
		if got := philox4x32(c.ctr, c.key); got != c.want {
			t.Errorf("philox4x32(%08x, %08x) = %08x, want %08x", c.ctr, c.key, got, c.want)
		}
	}
}

// A stream walks its counter's third word, four words at a time.
func TestStreamTakesFourWordsPerCounter(t *testing.T) {
	s := newStream(0x0123456789abcdef, 7, 1<<33+5)
	key := [2]uint32{0x89abcdef, 0x01234567}
	for k := uint32(0); k < 3; k++ {
		want := philox4x32([4]uint32{5, 7, k, 2}, key)
		for i := range want {
			if got := s.next(); got != want[i] {
				t.Fatalf("word %d of counter %d: %08x, want %08x", i, k, got, want[i])
			}
		}
	}
}
