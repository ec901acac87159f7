// Package embeval holds what the word-embedding workloads (ri, w2v) share
// to score vectors on similarity sets as hyperwords does: the sets' reader
// and Spearman's rank correlation.
package embeval

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
)

// Pair is one word pair of a similarity set with its human score.
type Pair struct {
	A, B  string
	Score float64
}

// ReadPairs reads a word-similarity set in hyperwords' format (WS-353,
// SimLex-999): "word1 word2 score" per line, separated by tabs or spaces;
// blank lines are skipped. Words are lower-cased, as hyperwords does.
func ReadPairs(r io.Reader) ([]Pair, error) {
	var out []Pair
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
		out = append(out, Pair{strings.ToLower(f[0]), strings.ToLower(f[1]), s})
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("line %d: %w", line+1, err)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no word pairs")
	}
	return out, nil
}

// LoadPairs reads a similarity set from path; errors name the file.
func LoadPairs(path string) ([]Pair, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	p, err := ReadPairs(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return p, nil
}

// Spearman is Spearman's rank correlation of x and y: Pearson's correlation
// of their ranks, tied values sharing their mean rank (as
// scipy.stats.spearmanr, which hyperwords uses). It is NaN for fewer than
// two values or when either has no spread.
func Spearman(x, y []float64) float64 {
	if len(x) != len(y) || len(x) < 2 {
		return math.NaN()
	}
	return pearson(ranks(x), ranks(y))
}

// ranks returns the 1-based ranks of x, ties averaged.
func ranks(x []float64) []float64 {
	idx := make([]int, len(x))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int {
		switch {
		case x[a] < x[b]:
			return -1
		case x[a] > x[b]:
			return 1
		}
		return 0
	})
	r := make([]float64, len(x))
	for i := 0; i < len(idx); {
		j := i
		for j+1 < len(idx) && x[idx[j+1]] == x[idx[i]] {
			j++
		}
		mean := float64(i+j)/2 + 1
		for k := i; k <= j; k++ {
			r[idx[k]] = mean
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
