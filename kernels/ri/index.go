package ri

// Index vectors are derived from a key and the run's seed alone, so that any
// machine, and the GPU (ri.cu, ri_index_vectors), builds the same ones:
//
//   - a term's key is the 64-bit FNV-1a hash of its bytes (after
//     tokenisation, so lower-case UTF-8); document j's key (document
//     contexts) is mix64(j + docKeySalt);
//   - the vector draws r_i = mix64(base + (i+1)*golden), i = 0, 1, 2, ..., with
//     base = key XOR mix64(seed): SplitMix64's output stream started from
//     base;
//   - draw r_i proposes position (high 32 bits of r_i * d) >> 32 (Lemire's
//     multiply-shift) with sign +1 if bit 0 of r_i is 0 and -1 if it is 1; a
//     position already taken is skipped, until k distinct positions are
//     drawn.
//
// An entry of the index table is the position for +1 and its bitwise
// complement (-position-1) for -1, in draw order, k entries per vector.

const (
	fnvOffset64 = 0xcbf29ce484222325
	fnvPrime64  = 0x100000001b3
	golden64    = 0x9e3779b97f4a7c15
	// docKeySalt is "document" in ASCII: it separates document keys from
	// small integers.
	docKeySalt = 0x646f63756d656e74
)

// fnv1a64 is the 64-bit FNV-1a hash of b.
func fnv1a64(b []byte) uint64 {
	h := uint64(fnvOffset64)
	for _, c := range b {
		h ^= uint64(c)
		h *= fnvPrime64
	}
	return h
}

// mix64 is SplitMix64's output function (Steele, Lea and Flood 2014).
func mix64(z uint64) uint64 {
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// TermKey is the key a term's index vector is derived from.
func TermKey(term string) uint64 { return fnv1a64([]byte(term)) }

// DocKey is the key document j's index vector is derived from.
func DocKey(j int) uint64 { return mix64(uint64(j) + docKeySalt) }

// indexVector writes the k entries of key's index vector into out (len k),
// for dimension d (k <= d/2 is checked by Config.Validate).
func indexVector(key, seed uint64, d int, out []int32) {
	base := key ^ mix64(seed)
	n := 0
	for i := uint64(1); n < len(out); i++ {
		r := mix64(base + i*golden64)
		pos := int32((r >> 32) * uint64(d) >> 32)
		dup := false
		for _, e := range out[:n] {
			if e == pos || ^e == pos {
				dup = true
				break
			}
		}
		if dup {
			continue
		}
		if r&1 != 0 {
			pos = ^pos
		}
		out[n] = pos
		n++
	}
}

// entry decodes an index-table entry into its position and sign.
func entry(e int32) (pos int32, sign int32) {
	if e >= 0 {
		return e, 1
	}
	return ^e, -1
}

// IndexTable returns the index vectors of keys, k entries each, as one
// table (vector i at [i*k, (i+1)*k)).
func IndexTable(keys []uint64, seed uint64, d, k int) []int32 {
	t := make([]int32, len(keys)*k)
	for i, key := range keys {
		indexVector(key, seed, d, t[i*k:(i+1)*k])
	}
	return t
}

// Dense expands index vector i of table (k entries each) into a dense
// vector of dimension d.
func Dense(table []int32, i, k, d int) []int32 {
	v := make([]int32, d)
	for _, e := range table[i*k : (i+1)*k] {
		p, s := entry(e)
		v[p] += s
	}
	return v
}
