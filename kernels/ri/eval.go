package ri

import (
	"io"

	"github.com/heatsink-hpc/heatsink/kernels/embeval"
)

// SimPair is one word pair of a similarity set with its human score.
type SimPair = embeval.Pair

// ReadSimilarity reads a word-similarity set in hyperwords' format
// (WS-353, SimLex-999); see embeval.ReadPairs.
func ReadSimilarity(r io.Reader) ([]SimPair, error) { return embeval.ReadPairs(r) }

// LoadSimilarity reads a similarity set from path.
func LoadSimilarity(path string) ([]SimPair, error) { return embeval.LoadPairs(path) }

// SimScore is how vectors did on a similarity set (hyperwords'
// convention): Spearman's rank correlation between cosine and human score
// over the pairs whose words both have vectors, and how many those are.
type SimScore struct {
	Pairs, Covered int
	// Spearman is NaN when fewer than two pairs are covered.
	Spearman float64
}

// Coverage is the fraction of pairs scored.
func (s SimScore) Coverage() float64 { return float64(s.Covered) / float64(s.Pairs) }

// EvalSimilarity scores v on pairs.
func EvalSimilarity(v *Vectors, pairs []SimPair) SimScore {
	var cos, human []float64
	for _, p := range pairs {
		a, okA := v.Row(p.A)
		b, okB := v.Row(p.B)
		if !okA || !okB {
			continue
		}
		cos = append(cos, Cosine(a, b))
		human = append(human, p.Score)
	}
	return SimScore{Pairs: len(pairs), Covered: len(cos), Spearman: Spearman(cos, human)}
}

// Spearman is Spearman's rank correlation of x and y; see embeval.Spearman.
func Spearman(x, y []float64) float64 { return embeval.Spearman(x, y) }
