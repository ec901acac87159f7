package ri

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"os"
	"sort"
	"strconv"
	"strings"
)

// SimPair is one word pair of a similarity set with its human score.
type SimPair struct {
	A, B  string
	Score float64
}

// ReadSimilarity reads a word-similarity set in hyperwords' format
// (WS-353, SimLex-999): "word1 word2 score" per line, separated by tabs or
// spaces; blank lines are skipped. Words are lower-cased as the tokenizer
// lower-cases the corpus.
func ReadSimilarity(r io.Reader) ([]SimPair, error) {
	var out []SimPair
	sc := bufio.NewScanner(r)
	line := 0
	for sc.Scan() {
		line++
		f := strings.Fields(sc.Text())
		if len(f) == 0 {
			continue
		}
		if len(f) != 3 {
			return nil, fmt.Errorf("line %d: %q: want word1 word2 score", line, sc.Text())
		}
		s, err := strconv.ParseFloat(f[2], 64)
		if err != nil || math.IsNaN(s) || math.IsInf(s, 0) {
			return nil, fmt.Errorf("line %d: score %q is not a number", line, f[2])
		}
		out = append(out, SimPair{strings.ToLower(f[0]), strings.ToLower(f[1]), s})
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("line %d: %w", line+1, err)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no word pairs")
	}
	return out, nil
}

// LoadSimilarity reads a similarity set from path.
func LoadSimilarity(path string) ([]SimPair, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	p, err := ReadSimilarity(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return p, nil
}

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

// Spearman is Spearman's rank correlation of x and y: Pearson's
// correlation of their ranks, tied values sharing their mean rank. It is
// NaN for fewer than two values or when either has no spread.
func Spearman(x, y []float64) float64 {
	if len(x) != len(y) || len(x) < 2 {
		return math.NaN()
	}
	return pearson(ranks(x), ranks(y))
}

// ranks returns the 1-based ranks of x, ties averaged.
func ranks(x []float64) []float64 {
	order := make([]int, len(x))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return x[order[a]] < x[order[b]] })
	r := make([]float64, len(x))
	for i := 0; i < len(order); {
		j := i
		for j+1 < len(order) && x[order[j+1]] == x[order[i]] {
			j++
		}
		mean := float64(i+j)/2 + 1
		for m := i; m <= j; m++ {
			r[order[m]] = mean
		}
		i = j + 1
	}
	return r
}

func pearson(x, y []float64) float64 {
	n := float64(len(x))
	var mx, my float64
	for i := range x {
		mx += x[i]
		my += y[i]
	}
	mx, my = mx/n, my/n
	var sxy, sxx, syy float64
	for i := range x {
		dx, dy := x[i]-mx, y[i]-my
		sxy += dx * dy
		sxx += dx * dx
		syy += dy * dy
	}
	if sxx == 0 || syy == 0 {
		return math.NaN()
	}
	return sxy / math.Sqrt(sxx*syy)
}
