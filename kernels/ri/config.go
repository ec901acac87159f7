// Package ri is random indexing (Kanerva; Sahlgren; Polok and Smrž,
// "Implementing Random Indexing on GPU", HPC 2011): word vectors built
// without a co-occurrence matrix, as the sum of the sparse random index
// vectors of each term's contexts, on the GPU (ri.cu, term-centric kernels)
// and in Go (goroutines), which is both the cpu device and the kernels'
// exact reference.
//
// The computation, for a corpus (documents of tokens), dimension d, k
// nonzeros, window half-width w, seed:
//
//  1. Index vectors: every term (window contexts) or every document
//     (document contexts) gets a ternary vector of k entries +1/-1 at
//     distinct positions, derived from a hash of the term and the seed (see
//     index.go), identical on every machine.
//  2. Term vectors (int32, exact): with window contexts, C[t] = sum over
//     occurrences p of t, over positions q != p within w of p in the same
//     document, of index(token q) rotated by q-p when permuting (element i
//     moves to (i + q-p) mod d: Sahlgren, Holst and Kanerva 2008) and not
//     rotated otherwise; with document contexts, C[t] = sum over occurrences
//     p of t of index(document of p).
//  3. Retraining (float32, repeated passes): the previous pass's vectors,
//     scaled to unit length, are dense seeds S and the sum of step 2 is taken
//     again over S instead of index vectors. With document contexts a pass is
//     reflective: D[j] = sum over tokens p of document j of S[token p], then
//     C[t] = sum over occurrences p of t of D[document of p].
//  4. Normalisation: every vector scaled to unit Euclidean length.
//
// Retraining sums in float64 and stores float32; normalisation computes in
// float64. Floating-point sums have one defined order, which the CPU and
// the GPU both follow, so they agree bit for bit (the contract is 1e-6
// relative, per vector, which float64 sums meet even in another order): a
// term's occurrences in ascending position, cut into slices of
// Config.Slice occurrences; within a slice, occurrences in order and their
// neighbours in ascending position, summed from zero and rounded to
// float32; a term's vector is its slices' float32 sums added in slice
// order, in float64, rounded once. The squared norm of a vector of
// dimension d is the sum of 256 lanes (lane j holds elements j, j+256, ...
// in order, in float64), reduced pairwise (lane j += lane j+s for s = 128,
// 64, ..., 1); elements are float32(float64(x)/sqrt(norm²)).
package ri

import (
	"fmt"
)

// Contexts is what a term's context is.
type Contexts int

const (
	// Window contexts: the terms within Window positions either side.
	Window Contexts = iota
	// Document contexts: the document it occurs in.
	Document
)

// ParseContexts reads "window" or "document".
func ParseContexts(s string) (Contexts, error) {
	switch s {
	case "window":
		return Window, nil
	case "document":
		return Document, nil
	}
	return 0, fmt.Errorf("contexts %q: want window or document", s)
}

func (c Contexts) String() string {
	if c == Document {
		return "document"
	}
	return "window"
}

// Config is one random-indexing computation.
type Config struct {
	Dim       int // d, the vectors' dimension
	Nonzeros  int // k, the nonzero entries of an index vector
	Window    int // w, the window's half-width (window contexts)
	Permute   bool
	Contexts  Contexts
	Retrain   int  // retraining passes after the first
	Normalise bool // scale the final vectors to unit length
	Seed      uint64
	// Slice is the length of the slices a term's occurrence list is cut
	// into: the unit of parallel work, and part of the definition of the
	// floating-point summation order.
	Slice int
}

// Limits of Config's fields.
const (
	MaxDim      = 1 << 16
	MaxNonzeros = 1024
	MaxWindow   = 1024
	MaxRetrain  = 16
	MaxSlice    = 1 << 24
)

// DefaultConfig is the benchmark setting: d=2048, 10 nonzeros, a
// window of 5 either side, one retraining pass, normalised.
func DefaultConfig() Config {
	return Config{Dim: 2048, Nonzeros: 10, Window: 5, Contexts: Window, Retrain: 1, Normalise: true, Seed: 1, Slice: 1024}
}

// Validate checks the fields' ranges, naming the first one out of range.
func (c Config) Validate() error {
	switch {
	case c.Dim < 2 || c.Dim > MaxDim:
		return fmt.Errorf("dimension %d: want 2 to %d", c.Dim, MaxDim)
	case c.Nonzeros < 1 || c.Nonzeros > MaxNonzeros || c.Nonzeros > c.Dim/2:
		return fmt.Errorf("nonzeros %d: want 1 to min(%d, dimension/2 = %d)", c.Nonzeros, MaxNonzeros, c.Dim/2)
	case c.Contexts == Window && (c.Window < 1 || c.Window > MaxWindow):
		return fmt.Errorf("window %d: want 1 to %d", c.Window, MaxWindow)
	case c.Contexts != Window && c.Contexts != Document:
		return fmt.Errorf("contexts %d: want window or document", c.Contexts)
	case c.Retrain < 0 || c.Retrain > MaxRetrain:
		return fmt.Errorf("retrain %d: want 0 to %d passes", c.Retrain, MaxRetrain)
	case c.Slice < 1 || c.Slice > MaxSlice:
		return fmt.Errorf("slice %d: want 1 to %d occurrences", c.Slice, MaxSlice)
	}
	return nil
}

// plan cuts segments of a list (a term's occurrences, a document's tokens)
// into units of at most slice entries, each summed into its own row: a
// segment of one unit straight into its output row (rows [0, segments)),
// a longer one into partial rows (from row segments on) that combine then
// adds, in slice order, into the output row.
type plan struct {
	units   []int32 // lo, hi, row of each unit
	combine []int32 // output row, first partial row, number of partials
	rows    int     // output rows plus partial rows
}

// newPlan plans n segments; seg gives segment i's entries [lo, hi).
func newPlan(n int, seg func(i int) (lo, hi int32), slice int) plan {
	p := plan{rows: n}
	for i := 0; i < n; i++ {
		lo, hi := seg(i)
		if int(hi-lo) <= slice {
			p.units = append(p.units, lo, hi, int32(i))
			continue
		}
		first := p.rows
		for s := lo; s < hi; s += int32(min(int(hi-s), slice)) {
			e := s + int32(min(int(hi-s), slice))
			p.units = append(p.units, s, e, int32(p.rows))
			p.rows++
		}
		p.combine = append(p.combine, int32(i), int32(first), int32(p.rows-first))
	}
	return p
}

func (p plan) nunits() int   { return len(p.units) / 3 }
func (p plan) ncombine() int { return len(p.combine) / 3 }
func (p plan) partials() int {
	n := 0
	for c := 0; c < p.ncombine(); c++ {
		n += int(p.combine[3*c+2])
	}
	return n
}

// rowTraffic is the rows a gather over p writes and its combine reads and
// writes, for effective bandwidth.
func (p plan) rowTraffic() int64 {
	return int64(p.nunits() + p.partials() + p.ncombine())
}
