package w2v

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"runtime"
	"strings"
	"sync"
	"text/tabwriter"

	"github.com/heatsink-hpc/heatsink/kernels/embeval"
	"github.com/heatsink-hpc/heatsink/point/schema"
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas32"
)

// The evaluation follows hyperwords (Levy, Goldberg and Dagan 2015), the
// conventions of the sets in evalsets/: similarity is Spearman's
// rank correlation between cosine and human scores over the pairs whose
// words both have vectors, with the coverage reported; analogies are
// answered by 3CosAdd and 3CosMul over unit vectors, the question's three
// words excluded from the answers, a question with a word without a
// vector counted wrong. Test words are lowercased, as hyperwords does.

// Pair is a scored word pair of a similarity set.
type Pair = embeval.Pair

// ReadPairs reads a similarity set: "word1 word2 score" per line, tab or
// space separated (WS-353, SimLex-999 as hyperwords distributes them).
func ReadPairs(r io.Reader) ([]Pair, error) { return embeval.ReadPairs(r) }

// Question is an analogy: A is to B as C is to D.
type Question [4]string

// ReadQuestions reads analogies, "a b c d" per line (Google's set as
// hyperwords distributes it); lines starting with ':' (section headers of
// the original file) are skipped.
func ReadQuestions(r io.Reader) ([]Question, error) {
	var out []Question
	sc := bufio.NewScanner(r)
	line := 0
	for sc.Scan() {
		line++
		t := strings.TrimSpace(sc.Text())
		if t == "" || strings.HasPrefix(t, ":") {
			continue
		}
		f := strings.Fields(strings.ToLower(t))
		if len(f) != 4 {
			return nil, fmt.Errorf("line %d: want four words, got %d", line, len(f))
		}
		out = append(out, Question{f[0], f[1], f[2], f[3]})
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("line %d: %w", line+1, err)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no questions")
	}
	return out, nil
}

func loadWith[T any](path string, read func(io.Reader) ([]T, error)) ([]T, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	out, err := read(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return out, nil
}

// LoadPairs reads a similarity set file.
func LoadPairs(path string) ([]Pair, error) { return loadWith(path, ReadPairs) }

// LoadQuestions reads an analogy file.
func LoadQuestions(path string) ([]Question, error) { return loadWith(path, ReadQuestions) }

// SimilarityScore is a similarity set's result.
type SimilarityScore struct {
	Pairs, Covered int
	Spearman       float64 // NaN with fewer than two covered pairs or no spread
}

// Coverage is the fraction of pairs scored.
func (s SimilarityScore) Coverage() float64 { return float64(s.Covered) / float64(s.Pairs) }

// Similarity scores the vectors on pairs.
func (v *Vectors) Similarity(pairs []Pair) SimilarityScore {
	var cos, human []float64
	for _, p := range pairs {
		i, ok1 := v.Index(p.A)
		j, ok2 := v.Index(p.B)
		if !ok1 || !ok2 {
			continue
		}
		cos = append(cos, cosine(v.Row(i), v.Row(j)))
		human = append(human, p.Score)
	}
	return SimilarityScore{Pairs: len(pairs), Covered: len(cos), Spearman: Spearman(cos, human)}
}

func cosine(a, b []float32) float64 {
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

// Spearman is Spearman's rank correlation of x and y; see embeval.Spearman.
func Spearman(x, y []float64) float64 { return embeval.Spearman(x, y) }

// AnalogyScore is an analogy set's result.
type AnalogyScore struct {
	Questions, Covered int
	Add, Mul           int // questions answered right by 3CosAdd, 3CosMul
}

// AddAccuracy is 3CosAdd's accuracy over all questions (uncovered ones wrong).
func (s AnalogyScore) AddAccuracy() float64 { return float64(s.Add) / float64(s.Questions) }

// MulAccuracy is 3CosMul's accuracy over all questions.
func (s AnalogyScore) MulAccuracy() float64 { return float64(s.Mul) / float64(s.Questions) }

// Unit returns the vectors scaled to unit length (zero vectors stay zero).
func (v *Vectors) Unit() []float32 {
	out := make([]float32, len(v.Data))
	for i := range v.Words {
		row := v.Row(i)
		var n float64
		for _, x := range row {
			n += float64(x) * float64(x)
		}
		if n == 0 {
			continue
		}
		s := 1 / math.Sqrt(n)
		for k, x := range row {
			out[i*v.Dim+k] = float32(float64(x) * s)
		}
	}
	return out
}

// Analogies answers each question a:b :: c:? over every vector by
//
//	3CosAdd: argmax_x  cos'(x,b) - cos'(x,a) + cos'(x,c)
//	3CosMul: argmax_x  cos'(x,b) * cos'(x,c) / (cos'(x,a) + 0.01)
//
// with cos' = (cos+1)/2 (hyperwords; Levy and Goldberg 2014), and counts
// the questions whose answer is d. Threads bounds the goroutines (0: one
// per core).
func (v *Vectors) Analogies(qs []Question, threads int) AnalogyScore {
	if threads <= 0 {
		threads = runtime.GOMAXPROCS(0)
	}
	sc := AnalogyScore{Questions: len(qs)}
	// The similarity rows of every word the covered questions use.
	rowOf := map[string]int{}
	var words []int
	var covered []Question
	for _, q := range qs {
		ok := true
		for _, w := range q {
			if _, in := v.Index(w); !in {
				ok = false
			}
		}
		if !ok {
			continue
		}
		covered = append(covered, q)
		for _, w := range q[:3] {
			if _, seen := rowOf[w]; !seen {
				i, _ := v.Index(w)
				rowOf[w] = len(words)
				words = append(words, i)
			}
		}
	}
	sc.Covered = len(covered)
	if len(covered) == 0 {
		return sc
	}
	n, d := len(v.Words), v.Dim
	unit := v.Unit()
	a := make([]float32, len(words)*d)
	for k, i := range words {
		copy(a[k*d:(k+1)*d], unit[i*d:(i+1)*d])
	}
	// sims = A * Unit^T: one row of cosines per question word.
	sims := make([]float32, len(words)*n)
	blas32.Gemm(blas.NoTrans, blas.Trans, 1,
		blas32.General{Rows: len(words), Cols: d, Stride: d, Data: a},
		blas32.General{Rows: n, Cols: d, Stride: d, Data: unit},
		0, blas32.General{Rows: len(words), Cols: n, Stride: n, Data: sims})
	for i, s := range sims {
		sims[i] = (s + 1) / 2
	}
	var mu sync.Mutex
	var wg sync.WaitGroup
	per := (len(covered) + threads - 1) / threads
	for lo := 0; lo < len(covered); lo += per {
		wg.Add(1)
		go func(part []Question) {
			defer wg.Done()
			add, mul := 0, 0
			for _, q := range part {
				sa := sims[rowOf[q[0]]*n : (rowOf[q[0]]+1)*n]
				sb := sims[rowOf[q[1]]*n : (rowOf[q[1]]+1)*n]
				scc := sims[rowOf[q[2]]*n : (rowOf[q[2]]+1)*n]
				ia, _ := v.Index(q[0])
				ib, _ := v.Index(q[1])
				ic, _ := v.Index(q[2])
				want, _ := v.Index(q[3])
				bestAdd, bestMul := -1, -1
				var maxAdd, maxMul float32
				for x := 0; x < n; x++ {
					if x == ia || x == ib || x == ic {
						continue
					}
					fa := sb[x] - sa[x] + scc[x]
					fm := sb[x] * scc[x] / (sa[x] + 0.01)
					if bestAdd < 0 || fa > maxAdd {
						bestAdd, maxAdd = x, fa
					}
					if bestMul < 0 || fm > maxMul {
						bestMul, maxMul = x, fm
					}
				}
				if bestAdd == want {
					add++
				}
				if bestMul == want {
					mul++
				}
			}
			mu.Lock()
			sc.Add += add
			sc.Mul += mul
			mu.Unlock()
		}(covered[lo:min(lo+per, len(covered))])
	}
	wg.Wait()
	return sc
}

// The evaluation sets Evaluate reads from a directory, as hyperwords names
// them (see evalsets/README.md).
var (
	SimilaritySets = []string{"ws353.txt", "ws353_similarity.txt", "ws353_relatedness.txt", "SimLex999.txt"}
	AnalogySet     = "google.txt"
)

// NamedSimilarity is one similarity set's score.
type NamedSimilarity struct {
	Set string
	SimilarityScore
}

// Report is an evaluation of vectors.
type Report struct {
	Words, Dim int
	Similarity []NamedSimilarity
	Analogy    *AnalogyScore // the Google set; nil when not evaluated
	Planted    *PlantedScore // a planted corpus's truth; nil when not given
	Notes      []string      // sets skipped, and why
}

// EvalOptions say what Evaluate scores.
type EvalOptions struct {
	// Sets holds the evaluation sets (see OpenSets); nil skips them.
	Sets fs.FS
	// Truth is a planted corpus's ground truth; nil skips it.
	Truth *Truth
	// Threads bounds the goroutines (0: one per core).
	Threads int
}

// Evaluate scores vectors on the similarity and analogy sets in o.Sets
// and on o.Truth. A set missing from o.Sets is skipped with a note; a
// o.Sets holding none of them is an error.
func Evaluate(v *Vectors, o EvalOptions) (Report, error) {
	r := Report{Words: len(v.Words), Dim: v.Dim}
	if o.Sets != nil {
		found := 0
		for _, name := range SimilaritySets {
			pairs, err := loadFS(o.Sets, name, ReadPairs)
			if errors.Is(err, fs.ErrNotExist) {
				r.Notes = append(r.Notes, name+" not found; skipped")
				continue
			}
			if err != nil {
				return r, err
			}
			found++
			r.Similarity = append(r.Similarity, NamedSimilarity{name, v.Similarity(pairs)})
		}
		qs, err := loadFS(o.Sets, AnalogySet, ReadQuestions)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			r.Notes = append(r.Notes, AnalogySet+" not found; skipped")
		case err != nil:
			return r, err
		default:
			found++
			a := v.Analogies(qs, o.Threads)
			r.Analogy = &a
		}
		if found == 0 {
			return r, fmt.Errorf("no evaluation set found (want any of %s, %s)", strings.Join(SimilaritySets, ", "), AnalogySet)
		}
	}
	if o.Truth != nil {
		p := o.Truth.Score(v, o.Threads)
		r.Planted = &p
	}
	return r, nil
}

// setMetric names each similarity set's Spearman metric (point/schema).
var setMetric = map[string]string{
	"ws353.txt":             schema.FieldWS353Spearman,
	"ws353_similarity.txt":  schema.FieldWS353SimilaritySpearman,
	"ws353_relatedness.txt": schema.FieldWS353RelatednessSpearman,
	"SimLex999.txt":         schema.FieldSimLex999Spearman,
}

// addMetrics puts the sets' scores into an iteration's metrics: Spearman
// per similarity set (left out when NaN: fewer than two pairs covered),
// 3CosAdd and 3CosMul accuracy on the analogies.
func (r Report) addMetrics(m map[string]float64) {
	for _, s := range r.Similarity {
		if !math.IsNaN(s.Spearman) {
			m[setMetric[s.Set]] = s.Spearman
		}
	}
	if r.Analogy != nil && r.Analogy.Questions > 0 {
		m[schema.FieldGoogleAnalogyAdd] = r.Analogy.AddAccuracy()
		m[schema.FieldGoogleAnalogyMul] = r.Analogy.MulAccuracy()
	}
}

func loadFS[T any](fsys fs.FS, name string, read func(io.Reader) ([]T, error)) ([]T, error) {
	f, err := fsys.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	out, err := read(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return out, nil
}

// WriteText prints the report as a table.
func (r Report) WriteText(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "%d vectors of dimension %d\n", r.Words, r.Dim)
	for _, n := range r.Notes {
		fmt.Fprintf(tw, "note: %s\n", n)
	}
	if len(r.Similarity) > 0 || r.Analogy != nil {
		fmt.Fprintln(tw, "SET\tSCORE\tCOVERED\t")
	}
	for _, s := range r.Similarity {
		sp := "n/a"
		if !math.IsNaN(s.Spearman) {
			sp = fmt.Sprintf("%.3f", s.Spearman)
		}
		fmt.Fprintf(tw, "%s\tSpearman %s\t%d/%d (%.0f%%)\t\n", s.Set, sp, s.Covered, s.Pairs, 100*s.Coverage())
	}
	if a := r.Analogy; a != nil {
		fmt.Fprintf(tw, "%s\t3CosAdd %.3f  3CosMul %.3f\t%d/%d (%.0f%%)\t\n", AnalogySet, a.AddAccuracy(), a.MulAccuracy(),
			a.Covered, a.Questions, 100*float64(a.Covered)/float64(a.Questions))
	}
	if p := r.Planted; p != nil {
		fmt.Fprintf(tw, "planted clusters\tpurity %.3f (chance %.3f)\t%d words\t\n", p.ClusterPurity, p.ClusterChance, p.ClusterWords)
		if p.Analogy.Questions > 0 {
			fmt.Fprintf(tw, "planted analogies\t3CosAdd %.3f  3CosMul %.3f (chance %.4f)\t%d/%d\t\n", p.Analogy.AddAccuracy(),
				p.Analogy.MulAccuracy(), p.AnalogyChance, p.Analogy.Covered, p.Analogy.Questions)
		}
	}
	return tw.Flush()
}
