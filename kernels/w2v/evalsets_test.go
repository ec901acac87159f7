package w2v

import (
	"io/fs"
	"strings"
	"testing"
	"testing/fstest"
)

func TestBuiltinSetsAreAllThereAndScore(t *testing.T) {
	sets, err := OpenSets(BuiltinSets)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range append(append([]string{}, SimilaritySets...), AnalogySet) {
		if _, err := fs.Stat(sets, name); err != nil {
			t.Errorf("builtin sets: %v", err)
		}
	}
	v := plantedVectors(t)
	r, err := Evaluate(v, EvalOptions{Sets: sets})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Similarity) != len(SimilaritySets) || r.Analogy == nil || len(r.Notes) != 0 {
		t.Errorf("%d similarity sets, analogy %v, notes %q", len(r.Similarity), r.Analogy != nil, r.Notes)
	}
}

// A directory with only some of the sets scores those and says which it
// skipped; one with none of them is an error naming what it looked for.
func TestEvaluateSkipsAMissingSetWithANote(t *testing.T) {
	v := plantedVectors(t)
	some := fstest.MapFS{"ws353.txt": {Data: []byte("tiger cat 7.35\nking queen 8.58\nbook paper 7.46\n")}}
	r, err := Evaluate(v, EvalOptions{Sets: some})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Similarity) != 1 || r.Similarity[0].Set != "ws353.txt" || r.Analogy != nil {
		t.Errorf("scored %+v, analogy %v", r.Similarity, r.Analogy)
	}
	if len(r.Notes) != 4 || !strings.Contains(strings.Join(r.Notes, "|"), "SimLex999.txt not found; skipped") {
		t.Errorf("notes %q", r.Notes)
	}
	var b strings.Builder
	if err := r.WriteText(&b); err != nil || !strings.Contains(b.String(), "note: google.txt not found; skipped") {
		t.Errorf("text %q (%v)", b.String(), err)
	}
	if _, err := Evaluate(v, EvalOptions{Sets: fstest.MapFS{}}); err == nil || !strings.Contains(err.Error(), "no evaluation set found") {
		t.Errorf("empty sets: err %v", err)
	}
	if _, err := OpenSets(t.TempDir() + "/absent"); err == nil || !strings.Contains(err.Error(), "absent") {
		t.Errorf("absent directory: err %v", err)
	}
	if s, err := OpenSets("none"); s != nil || err != nil {
		t.Errorf("none: %v %v", s, err)
	}
}

// plantedVectors is a few words of a vocabulary, enough to be scored.
func plantedVectors(t *testing.T) *Vectors {
	t.Helper()
	words := []string{"tiger", "cat", "king", "queen", "book", "paper"}
	data := make([]float32, 2*len(words))
	for i := range words {
		data[2*i], data[2*i+1] = float32(i%3+1), float32(i/3+1)
	}
	v, err := NewVectors(words, 2, data)
	if err != nil {
		t.Fatal(err)
	}
	return v
}
