package ri

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/heatsink-hpc/heatsink/workloads"
)

func values(t *testing.T, set map[string]string) workloads.Values {
	t.Helper()
	v, err := Workload{}.Decode(set)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// The defaults are the benchmark configuration and valid.
func TestWorkloadDefaults(t *testing.T) {
	p, _ := Workload{}.Of(values(t, nil))
	cfg, err := ConfigFromParams(p)
	if err != nil {
		t.Fatal(err)
	}
	if cfg != DefaultConfig() {
		t.Errorf("defaults %+v, want %+v", cfg, DefaultConfig())
	}
}

func TestWorkloadIterateOnCPU(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "text.txt")
	if err := os.WriteFile(path, []byte(smallText), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, set := range []map[string]string{
		{"corpus": path, "device": "cpu", "dim": "256", "retrain": "2", "permute": "true", "threads": "2"},
		{"corpus": "zipf:tokens=20k,vocab=2k", "device": "cpu", "dim": "300", "contexts": "document", "slice": "50"},
		{"corpus": "zipf:tokens=5k,doc=10", "device": "cpu", "dim": "64", "nonzeros": "4", "retrain": "0", "normalise": "false"},
	} {
		job, err := Workload{}.Start(context.Background(), values(t, set))
		if err != nil {
			t.Fatalf("%v: %v", set, err)
		}
		for it := 0; it < 2; it++ {
			res, err := job.Iterate(context.Background())
			if err != nil {
				t.Fatalf("%v iteration %d: %v", set, it, err)
			}
			m := res.Metrics
			if res.WorkUnit != "tokens" || res.Work <= 0 || m["term_vectors_tokens_per_s"] <= 0 || m["tokens"] <= 0 {
				t.Errorf("%v: result %+v", set, res)
			}
			_, hasRetrain := m["retrain_tokens_per_s"]
			if want := set["retrain"] != "0"; hasRetrain != want {
				t.Errorf("%v: retrain metrics present %v, want %v", set, hasRetrain, want)
			}
		}
		if err := job.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

func TestWorkloadStartErrors(t *testing.T) {
	for _, tc := range []struct {
		set  map[string]string
		want string
	}{
		{map[string]string{"corpus": "/nonexistent/kjv.txt", "device": "cpu"}, "/nonexistent/kjv.txt"},
		{map[string]string{"corpus": "zipf:tokens=0", "device": "cpu"}, "tokens=0"},
		{map[string]string{"corpus": "", "device": "cpu"}, "corpus is empty"},
		{map[string]string{"device": "gpu0"}, "device="},
		{map[string]string{"dim": "16", "nonzeros": "9", "device": "cpu"}, "nonzeros"},
		// About 600k terms x 65536 x 4 bytes: hundreds of GiB, refused before
		// anything is allocated.
		{map[string]string{"corpus": "zipf:tokens=1M,vocab=1M", "dim": "65536", "device": "cpu"}, "memory is available"},
	} {
		_, err := Workload{}.Start(context.Background(), values(t, tc.set))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: error %v, want one containing %q", tc.set, err, tc.want)
		}
	}
}

// Train returns the vectors Run computed, one per vocabulary term.
func TestTrain(t *testing.T) {
	v := values(t, map[string]string{"corpus": "zipf:tokens=3k,vocab=100", "device": "cpu", "dim": "32", "nonzeros": "2"})
	vecs, st, err := Train(context.Background(), v)
	if err != nil {
		t.Fatal(err)
	}
	if len(vecs.Terms) != st.Vocab || vecs.Dim != 32 || len(vecs.Data) != st.Vocab*32 {
		t.Fatalf("%d terms, dim %d, %d values; stats %+v", len(vecs.Terms), vecs.Dim, len(vecs.Data), st)
	}
	row, _ := vecs.Row(vecs.Terms[0])
	var n float64
	for _, x := range row {
		n += float64(x) * float64(x)
	}
	if n < 0.999 || n > 1.001 {
		t.Errorf("normalised vector has squared length %g", n)
	}
}

func TestMemAvailable(t *testing.T) {
	path := filepath.Join(t.TempDir(), "meminfo")
	text := "MemTotal:       24576000 kB\nMemFree:        20000000 kB\nMemAvailable:   22000000 kB\n"
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	if n, ok := memAvailable(path); !ok || n != 22000000<<10 {
		t.Errorf("memAvailable = %d, %v; want %d", n, ok, int64(22000000)<<10)
	}
	if _, ok := memAvailable(filepath.Join(t.TempDir(), "absent")); ok {
		t.Error("an absent file gave a reading")
	}
}

// check reports the iterations' agreement with the exact CPU reference:
// the CPU path, with its own goroutines and slices, agrees on every vector.
func TestWorkloadReportsItsAgreementWithTheCPUReference(t *testing.T) {
	set := map[string]string{"device": "cpu", "corpus": "zipf:tokens=20k,doc=10", "dim": "64", "nonzeros": "4", "retrain": "1", "threads": "2", "slice": "7", "check": "true"}
	job, err := Workload{}.Start(context.Background(), values(t, set))
	if err != nil {
		t.Fatal(err)
	}
	defer job.Close()
	for i := 0; i < 2; i++ {
		r, err := job.Iterate(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if r.Metrics["reference_agreement"] != 1 || r.Metrics["max_rel_err"] > 1e-6 {
			t.Errorf("iteration %d: agreement %v, max_rel_err %v; want every vector within 1e-6", i+1, r.Metrics["reference_agreement"], r.Metrics["max_rel_err"])
		}
	}
	set["check"] = "false"
	plain, err := Workload{}.Start(context.Background(), values(t, set))
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Close()
	if r, err := plain.Iterate(context.Background()); err != nil || r.Metrics["reference_agreement"] != 0 {
		t.Errorf("without check: %v %v", r.Metrics, err)
	}
}

// Agreement counts the rows within 1e-6 relative and the largest
// difference, and a vector of another shape agrees nowhere.
func TestAgreementOfVectorsWithAReference(t *testing.T) {
	ref := []float32{1, 0, 0, 1, 0, 0}
	got := []float32{1, 0, 0, 1.5, 0, 0}
	if share, rel := Agreement(got, ref, 2); share != 2.0/3 || rel != 0.5 {
		t.Errorf("share %v rel %v, want 2/3 and 0.5", share, rel)
	}
	if share, rel := Agreement(got[:4], ref, 2); share != 0 || rel != 1 {
		t.Errorf("another shape: share %v rel %v", share, rel)
	}
}
