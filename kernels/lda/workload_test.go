package lda

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

// The defaults are EZLDA's setting: K=1024, α=50/K, β=0.01, on GPU 0,
// with the hybrid format, three branches and the balanced schedule.
func TestWorkloadDefaults(t *testing.T) {
	v := values(t, map[string]string{"corpus": "synthetic:preset=tiny"})
	p, err := Workload{}.Of(v)
	if err != nil {
		t.Fatal(err)
	}
	_, jc, err := readParams(p)
	if err != nil {
		t.Fatal(err)
	}
	if jc.cfg != DefaultConfig(1024) || jc.cfg.Alpha != 50.0/1024 || jc.cfg.Beta != 0.01 {
		t.Errorf("config %+v", jc.cfg)
	}
	if jc.dev.GPU != 0 || jc.dev.Options != (Options{}) || jc.sweeps != 1 || jc.llEvery != 1 {
		t.Errorf("device %+v, %d sweeps, ll every %d", jc.dev, jc.sweeps, jc.llEvery)
	}
}

func TestWorkloadIterateOnCPU(t *testing.T) {
	dir := t.TempDir()
	text := filepath.Join(dir, "text.txt")
	if err := os.WriteFile(text, []byte(strings.Repeat("the lord said unto moses and aaron\nin the beginning god created the heaven and the earth\n", 30)), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "model")
	for _, set := range []map[string]string{
		{"corpus": "synthetic:preset=tiny", "device": "cpu", "topics": "8", "iterations": "3", "check": "true", "output": out, "top_words": "3"},
		{"corpus": "synthetic:preset=tiny,docs=50", "device": "cpu", "topics": "5", "format": "sparse", "branches": "2", "schedule": "static", "threads": "3", "ll_every": "0"},
		{"corpus": text, "device": "cpu", "topics": "2", "alpha": "0.5", "min_count": "1"},
		{"corpus": "testdata/docword.tiny.txt", "device": "cpu", "topics": "3", "format": "dense"},
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
			if res.WorkUnit != "tokens" || res.Work <= 0 || m["tokens_per_s"] <= 0 || m["tokens"] <= 0 || m["device_bytes"] <= 0 {
				t.Errorf("%v: result %+v", set, res)
			}
			_, hasLL := m["loglik_nats_per_token"]
			if want := set["ll_every"] != "0"; hasLL != want || (hasLL && !(m["loglik_nats_per_token"] < 0)) {
				t.Errorf("%v: log-likelihood %v (present %v, want %v)", set, m["loglik_nats_per_token"], hasLL, want)
			}
			if set["branches"] == "2" && m["max_topic_pct"] != 0 {
				t.Errorf("%v: the two-branch sampler took the shortcut", set)
			}
			if want := float64((it + 1) * max(1, atoi(set["iterations"]))); m["sweeps"] != want {
				t.Errorf("%v: %g sweeps after iteration %d, want %g", set, m["sweeps"], it, want)
			}
		}
		if err := job.Close(); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{TopicsFile, WordTopicFile, DocTopicFile, VocabularyFile} {
		if _, err := os.Stat(filepath.Join(out, f)); err != nil {
			t.Errorf("output: %v", err)
		}
	}
}

func atoi(s string) int {
	n := 0
	for _, r := range s {
		n = 10*n + int(r-'0')
	}
	return n
}

func TestWorkloadErrors(t *testing.T) {
	for set, want := range map[string]map[string]string{
		"parameter device=\"gpu\"":          {"device": "gpu", "corpus": "synthetic:preset=tiny"},
		"no preset \"big\"":                 {"corpus": "synthetic:preset=big"},
		"parameter vocab is for UCI":        {"corpus": "testdata/perfile/a.txt", "vocab": "v.txt", "device": "cpu"},
		"no such file":                      {"corpus": "testdata/missing.txt", "device": "cpu"},
		"alpha 1e+06":                       {"alpha": "1e6", "corpus": "synthetic:preset=tiny"},
		"one document per file needs a dir": {"corpus": "testdata/perfile/a.txt", "documents": "file", "device": "cpu"},
		"gpus=2 needs a GPU device":         {"corpus": "synthetic:preset=tiny", "device": "cpu", "gpus": "2"},
	} {
		_, err := Workload{}.Start(context.Background(), values(t, want))
		if err == nil || !strings.Contains(err.Error(), set) {
			t.Errorf("%v: error %v, want %q", want, err, set)
		}
	}
}
