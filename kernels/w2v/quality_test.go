package w2v

import (
	"context"
	"fmt"
	"io/fs"
	"math"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// qualityScores are the quality measures of one run.
type qualityScores struct{ ws353, simlex, add, mul float64 }

// trainScored trains c with cfg on dev and scores the vectors on the
// evaluation sets in sets (a directory's, or OpenSets' builtin ones):
// WS-353, SimLex-999 and both analogy measures, with the whole report and
// the training's stats.
func trainScored(t *testing.T, c *Corpus, cfg Config, dev Device, sets fs.FS) (qualityScores, Report, Stats) {
	t.Helper()
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
	r, err := Evaluate(v, EvalOptions{Sets: sets})
	if err != nil {
		t.Fatal(err)
	}
	return qualityScores{r.Similarity[0].Spearman, r.Similarity[3].Spearman, r.Analogy.AddAccuracy(), r.Analogy.MulAccuracy()}, r, st
}

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
// (their ranges overlap) at the workload's bound on sentences at once
// (DefaultConcurrency) and context mode (Config.Fresh). The GPU also runs
// at the other bounds of W2V_QUALITY_CONC (comma-separated, 0 for all at
// once) and, with W2V_QUALITY_FRESH=0,1, in both context modes (the CPU
// too, each GPU run compared with the CPU in its mode), shown beside it:
// Hogwild's staleness grows with the sentences trained at once, and these
// English lines are short, so a bound of sentences holds few words.
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
	// The GPU at each bound and context mode, and the CPU in each mode;
	// runs[0] is the workload's default, which the check applies to.
	type run struct {
		name  string
		dev   Device
		fresh bool
		cpu   int // the CPU run of the same mode
	}
	def := DefaultConfig().Fresh
	var runs []run
	freshes := []bool{def}
	for _, f := range envInts("W2V_QUALITY_FRESH", nil) {
		if !slices.Contains(freshes, f != 0) {
			freshes = append(freshes, f != 0)
		}
	}
	concs := []int{DefaultConcurrency}
	for _, x := range envInts("W2V_QUALITY_CONC", nil) {
		if !slices.Contains(concs, x) {
			concs = append(concs, x)
		}
	}
	for _, f := range freshes {
		for _, x := range concs {
			dev := gpuDeviceForTest()
			dev.Concurrency = x
			runs = append(runs, run{name: fmt.Sprintf("gpu,%s,f=%v", concurrencyName(x), f), dev: dev, fresh: f})
		}
	}
	gpus := len(runs)
	for _, f := range freshes {
		runs = append(runs, run{name: fmt.Sprintf("cpu,f=%v", f), dev: CPU(runtime.GOMAXPROCS(0)), fresh: f})
	}
	for i := range runs[:gpus] {
		for j := gpus; j < len(runs); j++ {
			if runs[j].fresh == runs[i].fresh {
				runs[i].cpu = j
			}
		}
	}
	scores := make([][]qualityScores, len(runs))
	fmt.Printf("%-18s %4s %9s %7s %10s %8s %8s  %s\n", "device", "seed", "words/s", "WS-353", "SimLex-999", "3CosAdd", "3CosMul", "coverage (WS, SimLex, Google)")
	for seed := 1; seed <= seeds; seed++ {
		for i, rn := range runs {
			cfg := DefaultConfig()
			cfg.Epochs, cfg.Seed, cfg.Fresh = epochs, uint64(seed), rn.fresh
			q, r, st := trainScored(t, c, cfg, rn.dev, os.DirFS(dir))
			scores[i] = append(scores[i], q)
			fmt.Printf("%-18s %4d %7.2f M %7.3f %10.3f %8.3f %8.3f  %.0f%% %.0f%% %.0f%%\n", rn.name, seed, st.WordsPerS()/1e6, q.ws353, q.simlex, q.add, q.mul,
				100*r.Similarity[0].Coverage(), 100*r.Similarity[3].Coverage(), 100*float64(r.Analogy.Covered)/float64(r.Analogy.Questions))
		}
	}
	// The check: at the workload's bound and mode the GPU's and
	// the CPU's ranges over the seeds overlap; the others are shown too.
	for m := range qualityNames {
		lo, hi := make([]float64, len(runs)), make([]float64, len(runs))
		for i := range runs {
			var x []float64
			for _, q := range scores[i] {
				x = append(x, q.get(m))
			}
			lo[i], hi[i] = slices.Min(x), slices.Max(x)
		}
		fmt.Printf("%s:", qualityNames[m])
		for j := gpus; j < len(runs); j++ {
			fmt.Printf("  %s [%.3f, %.3f]", runs[j].name, lo[j], hi[j])
		}
		fmt.Println()
		for i := 0; i < gpus; i++ {
			k := runs[i].cpu
			ok := lo[i] <= hi[k] && lo[k] <= hi[i]
			fmt.Printf("    %-18s [%.3f, %.3f] overlaps %s: %v\n", runs[i].name, lo[i], hi[i], runs[k].name, ok)
			if i == 0 && (!ok || math.IsNaN(lo[i]) || math.IsNaN(lo[k])) {
				t.Errorf("%s: %s [%.3f, %.3f] and %s [%.3f, %.3f] do not overlap", qualityNames[m],
					runs[i].name, lo[i], hi[i], runs[k].name, lo[k], hi[k])
			}
		}
	}
}

// A table the Wombat quality test printed reads back as each trainer's
// scores in seed order, names with spaces included; every other line is
// skipped, and a file with no rows or a bad score is an error naming it.
func TestReadQualityTable(t *testing.T) {
	got, err := readQualityTable("testdata/quality-table.txt")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]qualityScores{
		"cpu sghs":        {{0.625, 0.333, 0.090, 0.077}, {0.642, 0.341, 0.090, 0.077}},
		"cpu wombat sghs": {{0.641, 0.354, 0.085, 0.074}},
	}
	if len(got) != len(want) {
		t.Fatalf("trainers %v, want %v", got, want)
	}
	for name, w := range want {
		if !slices.Equal(got[name], w) {
			t.Errorf("%s: %v, want %v", name, got[name], w)
		}
	}
	dir := t.TempDir()
	for _, c := range []struct{ name, text, want string }{
		{"empty.txt", "trainer seed words/s\n", "no rows"},
		{"bad.txt", "cpu sghs 1 0.15 M 0.625 x 0.090 0.077\n", `bad.txt:1: score "x"`},
	} {
		path := dir + "/" + c.name
		if err := os.WriteFile(path, []byte(c.text), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := readQualityTable(path); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one containing %q", c.name, err, c.want)
		}
	}
	if _, err := readQualityTable(dir + "/missing.txt"); err == nil || !strings.Contains(err.Error(), "missing.txt") {
		t.Errorf("missing file: error %v", err)
	}
}
