package ri

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"sort"
	"strconv"
	"strings"
)

// Vectors are word vectors: Data holds len(Terms) rows of Dim elements.
type Vectors struct {
	Terms []string
	Dim   int
	Data  []float32

	index map[string]int
}

// NewVectors wraps rows of dim elements, one per term.
func NewVectors(terms []string, dim int, data []float32) (*Vectors, error) {
	if dim < 1 || len(data) != len(terms)*dim {
		return nil, fmt.Errorf("vectors: %d values for %d terms of dimension %d", len(data), len(terms), dim)
	}
	v := &Vectors{Terms: terms, Dim: dim, Data: data, index: make(map[string]int, len(terms))}
	for i, t := range terms {
		if _, dup := v.index[t]; dup {
			return nil, fmt.Errorf("vectors: term %q appears twice", t)
		}
		v.index[t] = i
	}
	return v, nil
}

// Row returns term's vector, if it has one.
func (v *Vectors) Row(term string) ([]float32, bool) {
	i, ok := v.index[term]
	if !ok {
		return nil, false
	}
	return v.Data[i*v.Dim : (i+1)*v.Dim], true
}

// WriteWord2Vec writes the vectors in word2vec's text format: a line
// "terms dim", then a line per term, the term and its elements separated by
// spaces (shortest decimal that reads back as the same float32).
func (v *Vectors) WriteWord2Vec(w io.Writer) error {
	bw := bufio.NewWriterSize(w, 1<<16)
	fmt.Fprintf(bw, "%d %d\n", len(v.Terms), v.Dim)
	var buf []byte
	for i, t := range v.Terms {
		buf = append(buf[:0], t...)
		for _, x := range v.Data[i*v.Dim : (i+1)*v.Dim] {
			buf = append(buf, ' ')
			buf = strconv.AppendFloat(buf, float64(x), 'g', -1, 32)
		}
		buf = append(buf, '\n')
		if _, err := bw.Write(buf); err != nil {
			return err
		}
	}
	return bw.Flush()
}

// SaveWord2Vec writes the vectors to path in word2vec's text format.
func (v *Vectors) SaveWord2Vec(path string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := v.WriteWord2Vec(f); err != nil {
		f.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	return f.Close()
}

// maxVectorLine bounds one line of a word2vec file (a term and its
// elements).
const maxVectorLine = 1 << 24

// ReadWord2Vec reads word2vec's text format. Errors name the line.
func ReadWord2Vec(r io.Reader) (*Vectors, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<16), maxVectorLine)
	if !sc.Scan() {
		if err := sc.Err(); err != nil {
			return nil, fmt.Errorf("line 1: %w", err)
		}
		return nil, errors.New("line 1: empty file, want a header \"terms dim\"")
	}
	head := strings.Fields(sc.Text())
	if len(head) != 2 {
		return nil, fmt.Errorf("line 1: header %q, want \"terms dim\"", sc.Text())
	}
	n, err1 := strconv.Atoi(head[0])
	dim, err2 := strconv.Atoi(head[1])
	if err1 != nil || err2 != nil || n < 0 || dim < 1 || dim > MaxDim {
		return nil, fmt.Errorf("line 1: header %q, want two counts (dimension 1 to %d)", sc.Text(), MaxDim)
	}
	terms := make([]string, 0, min(n, 1<<20))
	data := make([]float32, 0, min(n, 1<<20)*dim)
	line := 1
	for sc.Scan() {
		line++
		f := strings.Fields(sc.Text())
		if len(f) == 0 {
			continue
		}
		if len(terms) == n {
			return nil, fmt.Errorf("line %d: more vectors than the header's %d", line, n)
		}
		if len(f) != dim+1 {
			return nil, fmt.Errorf("line %d: %d values for term %q, want %d", line, len(f)-1, f[0], dim)
		}
		for _, s := range f[1:] {
			x, err := strconv.ParseFloat(s, 32)
			if err != nil {
				return nil, fmt.Errorf("line %d: term %q: %q is not a number", line, f[0], s)
			}
			data = append(data, float32(x))
		}
		terms = append(terms, f[0])
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("line %d: %w", line+1, err)
	}
	if len(terms) != n {
		return nil, fmt.Errorf("%d vectors, the header says %d", len(terms), n)
	}
	v, err := NewVectors(terms, dim, data)
	if err != nil {
		return nil, err
	}
	return v, nil
}

// LoadWord2Vec reads a word2vec text file.
func LoadWord2Vec(path string) (*Vectors, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	v, err := ReadWord2Vec(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return v, nil
}

// Cosine is the cosine similarity of a and b, in float64; 0 if either is
// zero.
func Cosine(a, b []float32) float64 {
	var ab, aa, bb float64
	for i := range a {
		x, y := float64(a[i]), float64(b[i])
		ab += x * y
		aa += x * x
		bb += y * y
	}
	if aa == 0 || bb == 0 {
		return 0
	}
	return ab / math.Sqrt(aa*bb)
}

// Neighbour is a term and its cosine similarity to a query.
type Neighbour struct {
	Term   string
	Cosine float64
}

// Nearest returns the n terms most similar (cosine) to term, itself
// excluded, most similar first (ties by term).
func (v *Vectors) Nearest(term string, n int) ([]Neighbour, error) {
	q, ok := v.Row(term)
	if !ok {
		return nil, fmt.Errorf("%q has no vector (not in the corpus's vocabulary)", term)
	}
	all := make([]Neighbour, 0, len(v.Terms))
	for i, t := range v.Terms {
		if t == term {
			continue
		}
		all = append(all, Neighbour{t, Cosine(q, v.Data[i*v.Dim:(i+1)*v.Dim])})
	}
	sort.Slice(all, func(i, j int) bool {
		if all[i].Cosine != all[j].Cosine {
			return all[i].Cosine > all[j].Cosine
		}
		return all[i].Term < all[j].Term
	})
	return all[:min(n, len(all))], nil
}
