package w2v

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/heatsink-hpc/heatsink/kernels/cuda"
	"github.com/heatsink-hpc/heatsink/workloads"
)

func workloadValues(t *testing.T, set ...string) workloads.Values {
	t.Helper()
	m, err := workloads.ParseSet(set)
	if err != nil {
		t.Fatal(err)
	}
	v, err := Workload{}.Decode(m)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func TestWorkloadOnTheCPUScoresAPlantedCorpus(t *testing.T) {
	v := workloadValues(t, "device=cpu", "corpus=planted:tokens=30k,clusters=3,entities=3,noise=100",
		"dim=16", "epochs=3", "table=100000", "threads=2")
	job, err := Workload{}.Start(context.Background(), v)
	if err != nil {
		t.Fatal(err)
	}
	defer job.Close()
	for i := 0; i < 2; i++ {
		r, err := job.Iterate(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if r.WorkUnit != "words" || r.Work < 3*30000 || r.Metrics["words_per_s"] <= 0 {
			t.Errorf("iteration %d: %v %s, metrics %v", i, r.Work, r.WorkUnit, r.Metrics)
		}
		for _, k := range []string{"cluster_purity", "planted_analogy_add", "planted_analogy_mul", "kept_fraction", "train_s"} {
			if _, ok := r.Metrics[k]; !ok {
				t.Errorf("iteration %d: no metric %s", i, k)
			}
		}
		if _, ok := r.Metrics["kernel_words_per_s"]; ok {
			t.Error("the cpu reports a kernel rate")
		}
		if r.Metrics["cluster_purity"] < 0.8 {
			t.Errorf("iteration %d: cluster purity %.3f", i, r.Metrics["cluster_purity"])
		}
	}
}

// Hierarchical softmax, and Wombat's batches for it, run as the workload
// on the CPU and learn the planted clusters.
func TestWorkloadTrainsHSAndWombatOnTheCPU(t *testing.T) {
	for _, kernel := range []string{KernelAuto, KernelWombat} {
		v := workloadValues(t, "device=cpu", "corpus=planted:tokens=30k,clusters=3,entities=3,noise=100",
			"dim=16", "epochs=3", "threads=2", "objective=hs", "kernel="+kernel)
		job, err := Workload{}.Start(context.Background(), v)
		if err != nil {
			t.Fatal(err)
		}
		r, err := job.Iterate(context.Background())
		job.Close()
		if err != nil {
			t.Fatal(err)
		}
		if r.Work < 3*30000 || r.Metrics["words_per_s"] <= 0 || r.Metrics["cluster_purity"] < 0.8 {
			t.Errorf("kernel %s: work %v, metrics %v", kernel, r.Work, r.Metrics)
		}
	}
}

// A paused guard holds training between groups of sentences; a cancelled
// context ends it with the context's error.
func TestWorkloadHonoursCancellation(t *testing.T) {
	v := workloadValues(t, "device=cpu", "corpus=zipf:words=1000,tokens=2M", "dim=16", "table=1000")
	job, err := Workload{}.Start(context.Background(), v)
	if err != nil {
		t.Fatal(err)
	}
	defer job.Close()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := job.Iterate(ctx); err != context.Canceled {
		t.Errorf("Iterate after cancel: %v, want context.Canceled", err)
	}
}

func TestWorkloadRejectsBadInputBeforeStarting(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		set  []string
		want string
	}{
		{[]string{"corpus=" + filepath.Join(dir, "missing.txt")}, "missing.txt"},
		{[]string{"corpus=zipf:colour=1"}, "unknown key"},
		{[]string{"corpus="}, "empty"},
		{[]string{"device=gpu"}, "device"},
		{[]string{"vocab=" + filepath.Join(dir, "v.txt")}, "v.txt"},
		{[]string{"dim=300", "kernel=warp", "device=cpu"}, "kernel warp"},
		{[]string{"objective=hs", "device=0"}, "needs kernel wombat"},
	} {
		v := workloadValues(t, c.set...)
		_, err := Workload{}.Start(context.Background(), v)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("--set %v: error %v, want one mentioning %q", c.set, err, c.want)
		}
	}
}

// The GPU device without a driver says so, before anything runs.
func TestWorkloadWithoutAGPUSaysSo(t *testing.T) {
	if testOpen != nil {
		t.Skip("emulated GPU")
	}
	if _, err := cuda.Load(); err == nil {
		t.Skip("a CUDA driver is here")
	}
	v := workloadValues(t, "corpus=zipf:words=100,tokens=1000")
	_, err := Workload{}.Start(context.Background(), v)
	if err == nil || !strings.Contains(err.Error(), "CUDA driver") {
		t.Errorf("device=0 without a driver: %v, want an error saying there is no CUDA driver", err)
	}
}

// With sets, a text corpus's vectors are scored on the evaluation sets
// after every iteration, as metrics a tuning floor can hold: two topics
// whose words share sentences, and pairs within a topic rated high.
func TestWorkloadScoresATextCorpusOnTheEvaluationSets(t *testing.T) {
	dir := t.TempDir()
	topics := [][]string{{"cat", "dog", "pet", "fur", "paw"}, {"car", "road", "wheel", "engine", "tyre"}}
	var b strings.Builder
	for i := 0; i < 3000; i++ {
		w := topics[i%2]
		for k := 0; k < 8; k++ {
			b.WriteString(w[(i*7+k*3)%len(w)] + " ")
		}
		b.WriteString("\n")
	}
	corpus := filepath.Join(dir, "two-topics.txt")
	sets := filepath.Join(dir, "sets")
	pairs := "cat dog 9\ncar wheel 8\ncat car 1\ndog engine 1\npet fur 8\nroad paw 1\nfur tyre 1\nroad wheel 7\n"
	if err := os.MkdirAll(sets, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, text := range map[string]string{corpus: b.String(), filepath.Join(sets, "ws353.txt"): pairs, filepath.Join(sets, "SimLex999.txt"): pairs} {
		if err := os.WriteFile(name, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	v := workloadValues(t, "device=cpu", "corpus="+corpus, "sets="+sets, "min_count=1", "dim=16", "epochs=3", "table=10000", "threads=1")
	job, err := Workload{}.Start(context.Background(), v)
	if err != nil {
		t.Fatal(err)
	}
	defer job.Close()
	r, err := job.Iterate(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"ws353_spearman", "simlex999_spearman"} {
		if got, ok := r.Metrics[k]; !ok || got < 0.5 {
			t.Errorf("%s = %v (reported %v), want a positive rank correlation: same-topic pairs are rated high", k, got, ok)
		}
	}
	if _, ok := r.Metrics["google_analogy_add"]; ok {
		t.Error("analogies scored from a directory without google.txt")
	}
	if _, err := (Workload{}).Start(context.Background(), workloadValues(t, "device=cpu", "sets="+filepath.Join(dir, "nowhere"))); err == nil ||
		!strings.Contains(err.Error(), "parameter sets") || !strings.Contains(err.Error(), "nowhere") {
		t.Errorf("a missing sets directory: %v", err)
	}
}
