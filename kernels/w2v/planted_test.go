package w2v

import (
	"context"
	"math"
	"testing"
)

// trainPlanted trains the planted corpus of spec with the default
// objective and kernel; trainPlantedWith (sghs_test.go) names them.
func trainPlanted(t *testing.T, spec string, dev Device) (PlantedScore, Stats) {
	t.Helper()
	d := DefaultConfig()
	return trainPlantedWith(t, spec, dev, d.Objective, d.Kernel)
}

// The CPU trainer finds the planted clusters and analogies; on the same
// corpus with its tokens shuffled (same counts, no co-occurrence
// structure) it stays at chance: the negative control that shows the
// scores measure what training learnt, not the words' frequencies.
func TestCPUTrainerFindsPlantedStructure(t *testing.T) {
	if raceBuild {
		t.Skip("minutes under the race detector; TestCPUTrainerHogwildRuns covers the concurrency")
	}
	const spec = "planted:tokens=300k,seed=3"
	sc, st := trainPlanted(t, spec, CPU(2))
	t.Logf("planted: purity %.3f (chance %.3f), analogies 3CosAdd %.3f 3CosMul %.3f of %d (chance %.4f); %.0f words/s",
		sc.ClusterPurity, sc.ClusterChance, sc.Analogy.AddAccuracy(), sc.Analogy.MulAccuracy(), sc.Analogy.Questions, sc.AnalogyChance, st.WordsPerS())
	if sc.ClusterWords != 80 || sc.Analogy.Covered != sc.Analogy.Questions || sc.Analogy.Questions != 540 {
		t.Fatalf("scored %d clustered words and %d of %d analogies: want all 80 and 540", sc.ClusterWords, sc.Analogy.Covered, sc.Analogy.Questions)
	}
	if sc.ClusterPurity < 0.9 || sc.Analogy.AddAccuracy() < 0.8 || sc.Analogy.MulAccuracy() < 0.8 {
		t.Errorf("planted structure not found: purity %.3f, analogies %.3f / %.3f", sc.ClusterPurity, sc.Analogy.AddAccuracy(), sc.Analogy.MulAccuracy())
	}
	if st.Words != 5*300007 && st.Words < 5*300000 {
		t.Errorf("counted %d words over 5 epochs of a 300k corpus", st.Words)
	}

	ctl, _ := trainPlanted(t, spec+",shuffle=true", CPU(2))
	t.Logf("shuffled: purity %.3f (chance %.3f), analogies %.3f / %.3f", ctl.ClusterPurity, ctl.ClusterChance, ctl.Analogy.AddAccuracy(), ctl.Analogy.MulAccuracy())
	// 80 words at chance 0.089: a purity of 0.3 is more than 6 standard
	// deviations above it.
	if ctl.ClusterPurity > 0.3 || ctl.Analogy.AddAccuracy() > 0.05 || ctl.Analogy.MulAccuracy() > 0.05 {
		t.Errorf("the shuffled control scores above chance: purity %.3f, analogies %.3f / %.3f", ctl.ClusterPurity, ctl.Analogy.AddAccuracy(), ctl.Analogy.MulAccuracy())
	}
}

// Hogwild on four goroutines trains: the weights move and stay finite.
// (Under the race detector this is the concurrent trainer's race test: the
// shared rows are read and updated atomically there, race_on.go.)
func TestCPUTrainerHogwildRuns(t *testing.T) {
	p, _ := ParsePlanted("planted:tokens=20k,clusters=3,entities=3,noise=100")
	c, err := p.Generate(100)
	if err != nil {
		t.Fatal(err)
	}
	cfg := DefaultConfig()
	cfg.Dim, cfg.TableSize = 16, 1000
	tr, err := NewTrainer(context.Background(), c, cfg, CPU(4))
	if err != nil {
		t.Fatal(err)
	}
	st, err := tr.Train(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	v, _ := tr.Vectors(context.Background())
	syn0 := make([]float32, len(v.Data))
	initWeights(syn0, make([]float32, len(syn0)), cfg.Dim, cfg.Seed)
	moved := 0
	for i, x := range v.Data {
		if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
			t.Fatalf("element %d is %g", i, x)
		}
		if x != syn0[i] {
			moved++
		}
	}
	if moved < len(syn0)/2 || st.Kept == 0 || st.Kept > st.Tokens {
		t.Errorf("%d of %d elements moved; kept %d of %d tokens", moved, len(syn0), st.Kept, st.Tokens)
	}
}

// One goroutine is deterministic: the same seed gives the same vectors,
// another seed others.
func TestCPUTrainerIsDeterministicOnOneGoroutine(t *testing.T) {
	p, _ := ParsePlanted("planted:tokens=5k,clusters=3,entities=2,noise=100")
	c, err := p.Generate(50)
	if err != nil {
		t.Fatal(err)
	}
	run := func(seed uint64) []float32 {
		cfg := DefaultConfig()
		cfg.Dim, cfg.TableSize, cfg.Seed, cfg.Epochs = 20, 1000, seed, 2
		tr, err := NewTrainer(context.Background(), c, cfg, CPU(1))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := tr.Train(context.Background()); err != nil {
			t.Fatal(err)
		}
		v, _ := tr.Vectors(context.Background())
		return v.Data
	}
	a, b, other := run(1), run(1), run(2)
	if !equalF32(a, b) {
		t.Error("two runs with seed 1 differ")
	}
	if equalF32(a, other) {
		t.Error("seeds 1 and 2 give the same vectors")
	}
}

func equalF32(a, b []float32) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestPlantedTruthAndSpec(t *testing.T) {
	p, err := ParsePlanted("planted:clusters=2,size=3,entities=3,relations=2,tokens=5k")
	if err != nil {
		t.Fatal(err)
	}
	tr := p.Truth()
	if len(tr.Clusters) != 2 || len(tr.Clusters[1]) != 3 || tr.Clusters[1][2] != "k1m2" {
		t.Errorf("clusters %v", tr.Clusters)
	}
	// 3 entities x 2 others x 2 relations x 1 other.
	if len(tr.Analogies) != 12 || tr.Analogies[0] != (Question{"e0r0", "e0r1", "e1r0", "e1r1"}) {
		t.Errorf("%d analogies, first %v", len(tr.Analogies), tr.Analogies[0])
	}
	c, err := p.Generate(DefaultMaxSentence)
	if err != nil {
		t.Fatal(err)
	}
	if c.Tokens() < 5000 || c.Tokens() > 5012 {
		t.Errorf("%d tokens, want 5k (a sentence over)", c.Tokens())
	}
	for _, w := range []string{"k1m2", "e2r1", "e2c0", "r1c3", "n1"} {
		if _, ok := c.Vocab.ID(w); !ok {
			t.Errorf("word %s missing from the corpus", w)
		}
	}
	for _, bad := range []string{"planted:clusters", "planted:size=1", "planted:entities=1", "planted:colour=3", "planted:tokens=1,tokens=2", "planted:shuffle=maybe"} {
		if _, err := ParsePlanted(bad); err == nil {
			t.Errorf("ParsePlanted(%q) accepted it", bad)
		}
	}
}
