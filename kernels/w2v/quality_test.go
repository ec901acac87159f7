package w2v

import (
	"context"
	"fmt"
	"math"
	"os"
	"runtime"
	"slices"
	"strconv"
	"testing"
	"text/tabwriter"
)

// qualityScores are the quality measures of one run.
type qualityScores struct{ ws353, simlex, add, mul float64 }

func (q qualityScores) get(i int) float64 { return [4]float64{q.ws353, q.simlex, q.add, q.mul}[i] }

var qualityNames = [4]string{"WS-353", "SimLex-999", "3CosAdd", "3CosMul"}

func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}

// TestGPUQualityMatchesCPU trains the real-English corpus (W2V_QUALITY, from
// scripts/corpus-english.sh) with W2V_QUALITY_SEEDS seeds (5) on the GPU and
// on the CPU (every core, Hogwild) at the benchmark's setting, W2V_QUALITY_EPOCHS
// epochs (3), and checks that the two devices' scores on WS-353, SimLex-999
// and the Google analogies lie within each other's spread over the seeds
// (their ranges overlap). A GPU run with about a thousand sentences at once
// is shown beside them: the default batch runs thousands at once, and a
// simulation here of fully stale Hogwild (every sentence of a wave of 4000
// training from the wave's starting weights) destroyed the English
// vectors, while the GPU's staleness is far shorter (an output row for one
// output, a context row for its 2*W_f+1 windows).
func TestGPUQualityMatchesCPU(t *testing.T) {
	path := os.Getenv("W2V_QUALITY")
	if path == "" {
		t.Skip("set W2V_QUALITY to the real-English corpus (scripts/corpus-english.sh)")
	}
	needGPU(t)
	dir := evalDir(t)
	seeds, epochs := envInt("W2V_QUALITY_SEEDS", 5), envInt("W2V_QUALITY_EPOCHS", 3)
	c, err := LoadCorpus(path, CorpusOptions{MinCount: 5})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%s: %d words, %d tokens, %d sentences; %d seeds, %d epochs", path, c.Vocab.Size(), c.Tokens(), c.Sentences(), seeds, epochs)
	// The GPU at the workload's default batch (thousands of sentences at
	// once), the GPU with about a thousand sentences at once (less stale
	// Hogwild: shows whether concurrency is what costs quality, if any),
	// and the CPU on every core.
	low := gpuDeviceForTest()
	low.Concurrency = 1024
	devices := []Device{gpuDeviceForTest(), low, CPU(runtime.GOMAXPROCS(0))}
	names := []string{"gpu", fmt.Sprintf("gpu, %d at once", low.Concurrency), "cpu"}
	scores := make([][]qualityScores, len(devices))
	fmt.Printf("%-18s %4s %9s %7s %10s %8s %8s  %s\n", "device", "seed", "words/s", "WS-353", "SimLex-999", "3CosAdd", "3CosMul", "coverage (WS, SimLex, Google)")
	for seed := 1; seed <= seeds; seed++ {
		for i, dev := range devices {
			cfg := DefaultConfig()
			cfg.Epochs, cfg.Seed = epochs, uint64(seed)
			tr, err := NewTrainer(context.Background(), c, cfg, dev)
			if err != nil {
				t.Fatal(err)
			}
			st, err := tr.Train(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			v, err := tr.Vectors(context.Background())
			tr.Close()
			if err != nil {
				t.Fatal(err)
			}
			r, err := Evaluate(v, EvalOptions{Dir: dir})
			if err != nil {
				t.Fatal(err)
			}
			q := qualityScores{r.Similarity[0].Spearman, r.Similarity[3].Spearman, r.Analogy.AddAccuracy(), r.Analogy.MulAccuracy()}
			scores[i] = append(scores[i], q)
			fmt.Printf("%-18s %4d %7.2f M %7.3f %10.3f %8.3f %8.3f  %.0f%% %.0f%% %.0f%%\n", names[i], seed, st.WordsPerS()/1e6, q.ws353, q.simlex, q.add, q.mul,
				100*r.Similarity[0].Coverage(), 100*r.Similarity[3].Coverage(), 100*float64(r.Analogy.Covered)/float64(r.Analogy.Questions))
		}
	}
	// The check: the GPU's (default batch) and the CPU's ranges
	// over the seeds overlap; the low-concurrency GPU is shown beside them.
	tw := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "measure\tGPU min\tGPU max\t1024-at-once GPU min\tmax\tCPU min\tCPU max\tGPU within CPU\t")
	for m := range qualityNames {
		var lo, hi [3]float64
		for i := range devices {
			var x []float64
			for _, q := range scores[i] {
				x = append(x, q.get(m))
			}
			lo[i], hi[i] = slices.Min(x), slices.Max(x)
		}
		ok := lo[0] <= hi[2] && lo[2] <= hi[0]
		fmt.Fprintf(tw, "%s\t%.3f\t%.3f\t%.3f\t%.3f\t%.3f\t%.3f\t%v\t\n", qualityNames[m], lo[0], hi[0], lo[1], hi[1], lo[2], hi[2], ok)
		if !ok || math.IsNaN(lo[0]) || math.IsNaN(lo[2]) {
			t.Errorf("%s: GPU [%.3f, %.3f] and CPU [%.3f, %.3f] do not overlap", qualityNames[m], lo[0], hi[0], lo[2], hi[2])
		}
	}
	tw.Flush()
}
