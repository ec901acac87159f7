package w2v

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"
)

// sigmaRef is the logistic table's value at f, in float64, with ok false
// where word2vec's hierarchical softmax skips the pair.
func sigmaRef(f float64, table []float32) (float64, bool) {
	if f <= -maxExp || f >= maxExp {
		return 0, false
	}
	i := int((f + maxExp) * float64(expScale))
	return float64(table[min(max(i, 0), expTableSize-1)]), true
}

// toyModel is a model of v words of dimension d with small random weights
// in both matrices, and its float64 copy.
func toyModel(v, d int, counts []int64, wombat bool) (*model, [][]float64, [][]float64) {
	r := rand.New(rand.NewPCG(3, 4))
	h, _ := newHuffman(counts)
	lay := newLayout(d, 1)
	m := &model{syn0: make([]float32, v*d), syn1: make([]float32, v*d), dim: d, lay: lay, table: newExpTable(), hs: h, wombat: wombat}
	s0, s1 := make([][]float64, v), make([][]float64, v)
	for i := 0; i < v; i++ {
		s0[i], s1[i] = make([]float64, d), make([]float64, d)
		for e := 0; e < d; e++ {
			m.syn0[i*d+e] = float32(r.Float64() - 0.5)
			m.syn1[i*d+e] = float32(r.Float64()-0.5) / 2
			s0[i][e], s1[i][e] = float64(m.syn0[i*d+e]), float64(m.syn1[i*d+e])
		}
	}
	return m, s0, s1
}

func dot64(x, y []float64) float64 {
	var s float64
	for i := range x {
		s += x[i] * y[i]
	}
	return s
}

func closeRows(t *testing.T, what string, got []float32, want [][]float64, d int) {
	t.Helper()
	worst := 0.0
	for i, row := range want {
		for e, x := range row {
			worst = max(worst, math.Abs(float64(got[i*d+e])-x))
		}
	}
	if worst > 1e-5 {
		t.Errorf("%s: off by %.3g from the float64 transcription", what, worst)
	}
}

// trainSentenceHS is word2vec's SGHS loop: checked against a float64
// transcription of TrainModelThread's skip-gram, hierarchical-softmax
// branch (labels 1 - code, pairs with |f| >= 6 skipped, neu1e added to the
// context after its path), on a sentence with repeated words.
func TestSGHSFollowsWord2vec(t *testing.T) {
	const v, d, wf = 6, 40, 2
	counts := []int64{30, 20, 9, 5, 3, 1}
	m, s0, s1 := toyModel(v, d, counts, false)
	toks := []int32{0, 3, 1, 0, 5, 2, 4, 0}
	const alpha = 0.3
	m.trainSentenceHS(toks, wf, alpha, newHSScratch(d))

	skipped, trained := 0, 0
	for w := range toks {
		codes, points := m.hs.path(toks[w])
		for p := max(0, w-wf); p <= min(len(toks)-1, w+wf); p++ {
			if p == w {
				continue
			}
			l1 := s0[toks[p]]
			neu1e := make([]float64, d)
			for j, node := range points {
				sig, ok := sigmaRef(dot64(l1, s1[node]), m.table)
				if !ok {
					skipped++
					continue
				}
				trained++
				g := (1 - float64(codes[j]) - sig) * alpha
				for e := range neu1e {
					neu1e[e] += g * s1[node][e]
					s1[node][e] += g * l1[e]
				}
			}
			for e := range l1 {
				l1[e] += neu1e[e]
			}
		}
	}
	if trained == 0 {
		t.Fatal("no pair trained")
	}
	closeRows(t, "syn0", m.syn0, s0, d)
	closeRows(t, "syn1", m.syn1, s1, d)
}

// A Wombat window is Algorithm 1: every pair activated from the rows as
// they were, the updates G^T Wo and G Wi added after; checked against a
// float64 transcription for both objectives.
func TestWombatWindowIsOneMatrixStep(t *testing.T) {
	const v, d = 8, 48
	counts := []int64{40, 30, 20, 10, 8, 4, 2, 1}
	for _, hs := range []bool{true, false} {
		m, s0, s1 := toyModel(v, d, counts, true)
		if !hs {
			m.hs = nil
		}
		// Large weights, so that some hierarchical-softmax pairs saturate.
		for i := range m.syn1 {
			m.syn1[i] *= 3
		}
		for i := range s1 {
			for e := range s1[i] {
				s1[i][e] = float64(m.syn1[i*d+e])
			}
		}
		toks := []int32{2, 5, 7, 2, 1}
		negs := []int32{1, 3, 4, 0, 6, 0, 2, 3, 7, 4, 5, 1, 0, 6, 2}
		const n, wf, alpha = 3, 2, 0.2
		sc := newWombatScratch(d, wf, m.wombatOutputs(n))
		m.trainSentenceWombat(toks, negs, n, wf, alpha, sc)

		for w := range toks {
			var out []int32
			var label []float64
			if hs {
				codes, points := m.hs.path(toks[w])
				out = points
				for _, c := range codes {
					label = append(label, float64(1-c))
				}
			} else {
				out = append([]int32{toks[w]}, negs[w*n:w*n+n]...)
				label = []float64{1, 0, 0, 0}
			}
			var ctx []int32
			for p := max(0, w-wf); p <= min(len(toks)-1, w+wf); p++ {
				if p != w {
					ctx = append(ctx, toks[p])
				}
			}
			g := make([][]float64, len(out))
			for j, o := range out {
				g[j] = make([]float64, len(ctx))
				for i, c := range ctx {
					f := dot64(s1[o], s0[c])
					sig, ok := sigmaRef(f, m.table)
					switch {
					case ok:
					case hs:
						continue
					case f >= maxExp:
						sig = 1
					default:
						sig = 0
					}
					g[j][i] = (label[j] - sig) * alpha
				}
			}
			ui, uo := make([][]float64, len(ctx)), make([][]float64, len(out))
			for i := range ctx {
				ui[i] = make([]float64, d)
				for j, o := range out {
					for e := range ui[i] {
						ui[i][e] += g[j][i] * s1[o][e]
					}
				}
			}
			for j := range out {
				uo[j] = make([]float64, d)
				for i, c := range ctx {
					for e := range uo[j] {
						uo[j][e] += g[j][i] * s0[c][e]
					}
				}
			}
			for i, c := range ctx {
				for e := range ui[i] {
					s0[c][e] += ui[i][e]
				}
			}
			for j, o := range out {
				for e := range uo[j] {
					s1[o][e] += uo[j][e]
				}
			}
		}
		name := map[bool]string{true: "hs", false: "ns"}[hs]
		closeRows(t, name+" syn0", m.syn0, s0, d)
		closeRows(t, name+" syn1", m.syn1, s1, d)
	}
}

func trainPlantedWith(t *testing.T, spec string, dev Device, objective, kernel string) (PlantedScore, Stats) {
	t.Helper()
	p, err := ParsePlanted(spec)
	if err != nil {
		t.Fatal(err)
	}
	c, err := p.Generate(DefaultMaxSentence)
	if err != nil {
		t.Fatal(err)
	}
	cfg := DefaultConfig()
	cfg.Dim, cfg.Epochs, cfg.TableSize, cfg.Objective, cfg.Kernel = 32, 5, 1e6, objective, kernel
	tr, err := NewTrainer(context.Background(), c, cfg, dev)
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	st, err := tr.Train(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	v, err := tr.Vectors(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return p.Truth().Score(v, 2), st
}

// SGHS and Wombat's batched trainers (both objectives) recover the planted
// clusters and analogies as the SGNS trainer does (the same thresholds as
// TestCPUTrainerFindsPlantedStructure), and stay at chance on the shuffled
// control.
func TestCPUTrainersFindPlantedStructure(t *testing.T) {
	if raceBuild {
		t.Skip("minutes under the race detector; TestHSAndWombatHogwildRun covers the concurrency")
	}
	const spec = "planted:tokens=300k,seed=3"
	for _, k := range []struct{ objective, kernel string }{
		{ObjectiveHS, KernelAuto}, {ObjectiveHS, KernelWombat}, {ObjectiveNS, KernelWombat},
	} {
		t.Run(k.objective+"-"+k.kernel, func(t *testing.T) {
			sc, st := trainPlantedWith(t, spec, CPU(2), k.objective, k.kernel)
			t.Logf("%s: purity %.3f (chance %.3f), analogies 3CosAdd %.3f 3CosMul %.3f of %d; %.0f words/s",
				st.Device, sc.ClusterPurity, sc.ClusterChance, sc.Analogy.AddAccuracy(), sc.Analogy.MulAccuracy(), sc.Analogy.Questions, st.WordsPerS())
			if sc.ClusterPurity < 0.9 || sc.Analogy.AddAccuracy() < 0.8 || sc.Analogy.MulAccuracy() < 0.8 {
				t.Errorf("planted structure not found: purity %.3f, analogies %.3f / %.3f", sc.ClusterPurity, sc.Analogy.AddAccuracy(), sc.Analogy.MulAccuracy())
			}
			ctl, _ := trainPlantedWith(t, spec+",shuffle=true", CPU(2), k.objective, k.kernel)
			if ctl.ClusterPurity > 0.3 || ctl.Analogy.AddAccuracy() > 0.05 || ctl.Analogy.MulAccuracy() > 0.05 {
				t.Errorf("the shuffled control scores above chance: purity %.3f, analogies %.3f / %.3f", ctl.ClusterPurity, ctl.Analogy.AddAccuracy(), ctl.Analogy.MulAccuracy())
			}
		})
	}
}

// On one goroutine SGHS and Wombat are deterministic (seed 1 twice gives
// the same vectors, seed 2 others); on four they train Hogwild and stay
// finite (under -race, the concurrent trainers' race test).
func TestHSAndWombatDeterministicAndHogwild(t *testing.T) {
	p, _ := ParsePlanted("planted:tokens=10k,clusters=3,entities=2,noise=100")
	c, err := p.Generate(50)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []struct{ objective, kernel string }{
		{ObjectiveHS, KernelAuto}, {ObjectiveHS, KernelWombat}, {ObjectiveNS, KernelWombat},
	} {
		run := func(seed uint64, threads int) []float32 {
			cfg := DefaultConfig()
			cfg.Dim, cfg.TableSize, cfg.Seed, cfg.Epochs, cfg.Objective, cfg.Kernel = 20, 1000, seed, 2, k.objective, k.kernel
			tr, err := NewTrainer(context.Background(), c, cfg, CPU(threads))
			if err != nil {
				t.Fatal(err)
			}
			if _, err := tr.Train(context.Background()); err != nil {
				t.Fatal(err)
			}
			v, _ := tr.Vectors(context.Background())
			if err := v.CheckFinite(); err != nil {
				t.Fatalf("%s %s on %d goroutines: %v", k.objective, k.kernel, threads, err)
			}
			return v.Data
		}
		a, b, other := run(1, 1), run(1, 1), run(2, 1)
		if !equalF32(a, b) || equalF32(a, other) {
			t.Errorf("%s %s: seed 1 twice equal %v, seeds 1 and 2 equal %v", k.objective, k.kernel, equalF32(a, b), equalF32(a, other))
		}
		run(1, 4)
	}
}

func TestHSConfigErrors(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Objective = "cbow"
	if err := cfg.Validate(); err == nil {
		t.Error("objective cbow accepted")
	}
	one := &Corpus{Vocab: NewVocab(map[string]int64{"a": 9}, 1, 0)}
	one.tokens, one.starts, one.counted = []int32{0, 0, 0}, []int64{0, 3}, []int32{3}
	cfg = DefaultConfig()
	cfg.Objective = ObjectiveHS
	if _, err := NewTrainer(context.Background(), one, cfg, CPU(1)); err == nil {
		t.Error("hierarchical softmax over one word accepted")
	}
}
