package w2v

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestSpearmanHandComputed(t *testing.T) {
	for _, c := range []struct {
		name string
		x, y []float64
		want float64
	}{
		// Ranks of y with a tie: 1, 2, 3.5, 5, 3.5; r = 8/sqrt(10*9.5).
		{"tie", []float64{1, 2, 3, 4, 5}, []float64{5, 6, 7, 8, 7}, 8 / math.Sqrt(95)},
		{"monotone", []float64{1, 10, 100}, []float64{-3, -2, 7}, 1},
		{"reversed", []float64{1, 2, 3, 4}, []float64{4, 3, 2, 1}, -1},
	} {
		if got := Spearman(c.x, c.y); math.Abs(got-c.want) > 1e-12 {
			t.Errorf("%s: Spearman = %.15g, want %.15g", c.name, got, c.want)
		}
	}
	for _, c := range [][2][]float64{{{1}, {2}}, {{1, 1, 1}, {1, 2, 3}}} {
		if got := Spearman(c[0], c[1]); !math.IsNaN(got) {
			t.Errorf("Spearman(%v, %v) = %g, want NaN (undefined)", c[0], c[1], got)
		}
	}
}

func tinyVectors(t *testing.T, words []string, rows ...[]float32) *Vectors {
	t.Helper()
	var data []float32
	for _, r := range rows {
		data = append(data, r...)
	}
	v, err := NewVectors(words, len(rows[0]), data)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// The similarity score by hand: cosines (a,b) 0.7071, (a,c) 0, (b,c)
// 0.7071, (a,d) -0.995, ranks 3.5 2 3.5 1 against the humans' 4 2 3 1:
// r = 4.5/sqrt(4.5*5); the pair with a word without a vector is left out
// and counted in the coverage.
func TestSimilarityScoresCoveredPairs(t *testing.T) {
	v := tinyVectors(t, []string{"a", "b", "c", "d"}, []float32{1, 0}, []float32{1, 1}, []float32{0, 1}, []float32{-1, 0.1})
	pairs, err := ReadPairs(strings.NewReader("a\tb\t9\nA c 5\nb c 7\n\na d 1\na zz 3\n"))
	if err != nil {
		t.Fatal(err)
	}
	s := v.Similarity(pairs)
	if s.Pairs != 5 || s.Covered != 4 {
		t.Errorf("pairs %d covered %d, want 5 and 4", s.Pairs, s.Covered)
	}
	if want := 4.5 / math.Sqrt(22.5); math.Abs(s.Spearman-want) > 1e-12 {
		t.Errorf("Spearman %.15g, want %.15g", s.Spearman, want)
	}
	if math.Abs(s.Coverage()-0.8) > 1e-12 {
		t.Errorf("coverage %g", s.Coverage())
	}
}

func TestAnalogiesExcludeQuestionWordsAndCountUncoveredWrong(t *testing.T) {
	v := tinyVectors(t, []string{"man", "woman", "king", "queen", "apple"},
		[]float32{1, 0, 0}, []float32{1, 1, 0}, []float32{1, 0, 1}, []float32{1, 1, 1}, []float32{0, 0, -1})
	qs, err := ReadQuestions(strings.NewReader(": section\nman woman king queen\nMAN WOMAN KING QUEEN\nman woman king prince\nman king woman queen\n"))
	if err != nil {
		t.Fatal(err)
	}
	s := v.Analogies(qs, 2)
	// The second is the first lowercased; "prince" has no vector; the
	// last is right too (man:king :: woman:queen).
	if s.Questions != 4 || s.Covered != 3 || s.Add != 3 || s.Mul != 3 {
		t.Errorf("%+v, want 4 questions, 3 covered, 3 right by each method", s)
	}
	if s.AddAccuracy() != 0.75 {
		t.Errorf("3CosAdd accuracy %g, want 0.75 (the uncovered question counts wrong)", s.AddAccuracy())
	}
	// "king" is the nearest to king - man + woman before exclusion.
	one := v.Analogies([]Question{{"man", "man", "king", "king"}}, 1)
	if one.Add != 0 || one.Mul != 0 {
		t.Errorf("a question word was given as the answer: %+v", one)
	}
}

func TestEvaluationSetsParse(t *testing.T) {
	for _, bad := range []string{"a b\n", "a b c d\n", "a b x\n", "a b NaN\n", ""} {
		if _, err := ReadPairs(strings.NewReader(bad)); err == nil {
			t.Errorf("ReadPairs(%q) accepted it", bad)
		}
	}
	for _, bad := range []string{"a b c\n", "a b c d e\n", ": only\n"} {
		if _, err := ReadQuestions(strings.NewReader(bad)); err == nil {
			t.Errorf("ReadQuestions(%q) accepted it", bad)
		}
	}
	_, err := ReadPairs(strings.NewReader("a b 1\na b\n"))
	if err == nil || !strings.Contains(err.Error(), "line 2") {
		t.Errorf("error %v does not name line 2", err)
	}
}

// The shipped evaluation sets parse to their documented sizes.
func TestSharedEvaluationSets(t *testing.T) {
	dir := evalDir(t)
	for name, want := range map[string]int{"ws353.txt": 353, "SimLex999.txt": 999} {
		p, err := LoadPairs(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if len(p) != want {
			t.Errorf("%s: %d pairs, want %d", name, len(p), want)
		}
	}
	q, err := LoadQuestions(filepath.Join(dir, "google.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if len(q) != 19544 {
		t.Errorf("google.txt: %d questions, want 19544", len(q))
	}
}

// evalDir is the evaluation sets that ship with heatsink, or W2V_EVAL's
// copy of them (a test binary run elsewhere, as bench/w2v-gpu.sh does).
func evalDir(t testing.TB) string {
	t.Helper()
	if d := os.Getenv("W2V_EVAL"); d != "" {
		return d
	}
	return "evalsets"
}
