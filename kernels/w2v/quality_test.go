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
// (their ranges overlap).
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
	devices := []Device{gpuDeviceForTest(), CPU(runtime.GOMAXPROCS(0))}
	scores := make([][]qualityScores, len(devices))
	tw := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "device\tseed\twords/s\tWS-353\tSimLex-999\t3CosAdd\t3CosMul\tcoverage\t")
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
			fmt.Fprintf(tw, "%s\t%d\t%.2f M\t%.3f\t%.3f\t%.3f\t%.3f\t%.0f%% %.0f%% %.0f%%\t\n", dev, seed, st.WordsPerS()/1e6, q.ws353, q.simlex, q.add, q.mul,
				100*r.Similarity[0].Coverage(), 100*r.Similarity[3].Coverage(), 100*float64(r.Analogy.Covered)/float64(r.Analogy.Questions))
			tw.Flush()
		}
	}
	fmt.Fprintln(tw, "measure\tGPU min\tGPU max\tCPU min\tCPU max\twithin\t")
	for m := range qualityNames {
		var lo, hi [2]float64
		for i := range devices {
			var x []float64
			for _, q := range scores[i] {
				x = append(x, q.get(m))
			}
			lo[i], hi[i] = slices.Min(x), slices.Max(x)
		}
		ok := lo[0] <= hi[1] && lo[1] <= hi[0]
		fmt.Fprintf(tw, "%s\t%.3f\t%.3f\t%.3f\t%.3f\t%v\t\n", qualityNames[m], lo[0], hi[0], lo[1], hi[1], ok)
		if !ok || math.IsNaN(lo[0]) || math.IsNaN(lo[1]) {
			t.Errorf("%s: GPU [%.3f, %.3f] and CPU [%.3f, %.3f] do not overlap", qualityNames[m], lo[0], hi[0], lo[1], hi[1])
		}
	}
	tw.Flush()
}
