package w2v

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// moduleRow is one FULL-W2V setting TestGPUModuleTable measures: a GPU
// layout, a bound on sentences at once and the context mode.
type moduleRow struct {
	kernel string
	conc   int
	fresh  bool
}

// name is the row as the table prints it, one word per field so that
// bench/w2v-ldcg.sh and readQualityTable split it alike.
func (r moduleRow) name() string {
	mode := "fresh"
	if !r.fresh {
		mode = "ring"
	}
	return fmt.Sprintf("gpu %s conc=%s %s", r.kernel, concurrencyName(r.conc), mode)
}

// parseModuleRows reads W2V_MODULE_ROWS: comma-separated KERNEL:CONC or
// KERNEL:CONC:ring (KERNEL warp or block, CONC sentences at once, 0 for
// all; fresh contexts, the workload's default, unless ring).
func parseModuleRows(spec string) ([]moduleRow, error) {
	var rows []moduleRow
	for _, f := range strings.Split(spec, ",") {
		p := strings.Split(strings.TrimSpace(f), ":")
		if len(p) < 2 || len(p) > 3 {
			return nil, fmt.Errorf("W2V_MODULE_ROWS: row %q: want KERNEL:CONC or KERNEL:CONC:ring", f)
		}
		r := moduleRow{kernel: p[0], fresh: true}
		if r.kernel != KernelWarp && r.kernel != KernelBlock {
			return nil, fmt.Errorf("W2V_MODULE_ROWS: row %q: kernel %q: want %s or %s", f, p[0], KernelWarp, KernelBlock)
		}
		c, err := strconv.Atoi(p[1])
		if err != nil || c < 0 {
			return nil, fmt.Errorf("W2V_MODULE_ROWS: row %q: concurrency %q: want a whole number >= 0 (0: all at once)", f, p[1])
		}
		r.conc = c
		if len(p) == 3 {
			if p[2] != "ring" {
				return nil, fmt.Errorf("W2V_MODULE_ROWS: row %q: mode %q: the only one besides the default (fresh) is ring", f, p[2])
			}
			r.fresh = false
		}
		rows = append(rows, r)
	}
	return rows, nil
}

func TestParseModuleRows(t *testing.T) {
	for _, c := range []struct {
		spec string
		want []moduleRow
		err  string
	}{
		{spec: "warp:2048", want: []moduleRow{{KernelWarp, 2048, true}}},
		{spec: "warp:2048, block:0:ring", want: []moduleRow{{KernelWarp, 2048, true}, {KernelBlock, 0, false}}},
		{spec: "wombat:1024", err: `kernel "wombat"`},
		{spec: "warp", err: `row "warp"`},
		{spec: "warp:-1", err: `concurrency "-1"`},
		{spec: "warp:lots", err: `concurrency "lots"`},
		{spec: "warp:64:stale", err: `mode "stale"`},
		{spec: "warp:64,", err: `row ""`},
	} {
		got, err := parseModuleRows(c.spec)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%q: error %v, want one containing %q", c.spec, err, c.err)
			}
			continue
		}
		if err != nil || !slices.Equal(got, c.want) {
			t.Errorf("%q: %v, %v; want %v", c.spec, got, err, c.want)
		}
	}
	if got := (moduleRow{KernelBlock, 0, false}).name(); got != "gpu block conc=all ring" {
		t.Errorf("name %q", got)
	}
}

// TestGPUModuleTable measures whichever w2v module this process loaded
// (the embedded one, or a build of w2v.cu in HEATSINK_KERNELS_DIR, such
// as a variant of one of its macros), so that bench/w2v-ldcg.sh can run
// the same binary on each build and compare them row by row. With
// W2V_MODULE=1 on a GPU machine, for each row of W2V_MODULE_ROWS
// (default warp:2048,warp:32768,block:2048,block:32768) it prints:
//
//   - speed: FULL-W2V on the text8-shaped synthetic corpus (or
//     W2V_BENCH_CORPUS), the workload's defaults (d=128, N=5, W=5, sample
//     1e-3, seed 1): words/s as word2vec counts them and over the kernels'
//     time, median, least and most of W2V_BENCH_RUNS (5) one-epoch runs
//     after a warm-up, on one trainer;
//   - quality, where W2V_QUALITY names the real-English corpus
//     (scripts/corpus-english.sh): seeds 1..W2V_QUALITY_SEEDS (5), each
//     trained W2V_QUALITY_EPOCHS (3) epochs and scored on the builtin sets
//     (what the workload reports with sets=builtin), in
//     TestWombatQualityMatchesCPU's table format, whose committed CPU
//     rows ("cpu sgns") are the same setting.
//
// W2V_MODULE_PARTS (default "speed,quality") picks the parts.
func TestGPUModuleTable(t *testing.T) {
	if os.Getenv("W2V_MODULE") == "" {
		t.Skip("set W2V_MODULE=1 to measure the loaded w2v module")
	}
	needGPU(t)
	spec := os.Getenv("W2V_MODULE_ROWS")
	if spec == "" {
		spec = "warp:2048,warp:32768,block:2048,block:32768"
	}
	rows, err := parseModuleRows(spec)
	if err != nil {
		t.Fatal(err)
	}
	parts := strings.Split(os.Getenv("W2V_MODULE_PARTS"), ",")
	all := os.Getenv("W2V_MODULE_PARTS") == ""
	t.Logf("module: HEATSINK_KERNELS_DIR=%q (empty: the embedded one)", os.Getenv("HEATSINK_KERNELS_DIR"))
	if all || slices.Contains(parts, "speed") {
		moduleSpeed(t, rows)
	}
	if all || slices.Contains(parts, "quality") {
		moduleQuality(t, rows)
	}
}

// moduleRowSetting is the Config and Device of row r.
func moduleRowSetting(r moduleRow) (Config, Device) {
	cfg := DefaultConfig()
	cfg.Kernel, cfg.Fresh = r.kernel, r.fresh
	dev := gpuDeviceForTest()
	dev.Concurrency = r.conc
	return cfg, dev
}

func moduleSpeed(t *testing.T, rows []moduleRow) {
	spec, c := gpuBenchCorpus(t)
	runs := envInt("W2V_BENCH_RUNS", 5)
	t.Logf("speed corpus %s: %d words, %d tokens, %d sentences; %d runs after a warm-up", spec, c.Vocab.Size(), c.Tokens(), c.Sentences(), runs)
	fmt.Printf("%-6s %-30s %10s %15s %21s\n", "part", "row", "words/s", "kernel words/s", "words/s least, most")
	for _, r := range rows {
		cfg, dev := moduleRowSetting(r)
		tr, err := NewTrainer(context.Background(), c, cfg, dev)
		if err != nil {
			t.Fatal(err)
		}
		var rates, kernel []float64
		for i := -1; i < runs; i++ {
			st, err := tr.Train(context.Background())
			if err != nil {
				tr.Close()
				t.Fatal(err)
			}
			if i >= 0 { // -1 is the warm-up
				rates = append(rates, st.WordsPerS())
				kernel = append(kernel, float64(st.Words)/st.Kernel.Seconds())
			}
		}
		if err := tr.Close(); err != nil {
			t.Fatal(err)
		}
		fmt.Printf("%-6s %-30s %8.2f M %13.2f M %8.2f M %8.2f M\n", "speed", r.name(), median(rates)/1e6, median(kernel)/1e6,
			slices.Min(rates)/1e6, slices.Max(rates)/1e6)
	}
}

func moduleQuality(t *testing.T, rows []moduleRow) {
	path := os.Getenv("W2V_QUALITY")
	if path == "" {
		t.Log("quality: skipped (set W2V_QUALITY to the real-English corpus)")
		return
	}
	sets, err := OpenSets(BuiltinSets)
	if err != nil {
		t.Fatal(err)
	}
	seeds, epochs := envInt("W2V_QUALITY_SEEDS", 5), envInt("W2V_QUALITY_EPOCHS", 3)
	c, err := LoadCorpus(path, CorpusOptions{MinCount: 5})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("quality corpus %s: %d words, %d tokens, %d sentences; %d seeds, %d epochs", path, c.Vocab.Size(), c.Tokens(), c.Sentences(), seeds, epochs)
	fmt.Printf("%-30s %4s %9s %7s %10s %8s %8s\n", "trainer", "seed", "words/s", "WS-353", "SimLex-999", "3CosAdd", "3CosMul")
	for _, r := range rows {
		for seed := 1; seed <= seeds; seed++ {
			cfg, dev := moduleRowSetting(r)
			cfg.Epochs, cfg.Seed = epochs, uint64(seed)
			q, _, st := trainScored(t, c, cfg, dev, sets)
			fmt.Printf("%-30s %4d %7.2f M %7.3f %10.3f %8.3f %8.3f\n", r.name(), seed, st.WordsPerS()/1e6, q.ws353, q.simlex, q.add, q.mul)
		}
	}
}
