package kernels_test

import (
	"context"
	"testing"

	"github.com/heatsink-hpc/heatsink/kernels/dgemm"
	"github.com/heatsink-hpc/heatsink/kernels/lda"
	"github.com/heatsink-hpc/heatsink/kernels/ri"
	"github.com/heatsink-hpc/heatsink/kernels/stream"
	"github.com/heatsink-hpc/heatsink/kernels/w2v"
	"github.com/heatsink-hpc/heatsink/workloads"
)

// TestEveryBuiltinReportsWhatItDeclares runs each built-in workload's CPU
// path once, at a tiny size, and holds the metrics it reports to the fields
// it declares through point/schema: a metric nobody declared (or one named
// like the iteration's own n) fails here rather than in InfluxDB. A field
// only a GPU or an optional stage reports is declared but not seen here.
func TestEveryBuiltinReportsWhatItDeclares(t *testing.T) {
	for _, tc := range []struct {
		w   workloads.Workload
		set map[string]string
	}{
		{workloads.CPUStream{}, map[string]string{"size": "64KiB", "ntimes": "2", "threads": "1"}},
		{stream.Workload{}, map[string]string{"device": "cpu", "array_size": "4096", "passes": "2"}},
		{dgemm.Workload{}, map[string]string{"device": "cpu", "n": "32", "samples": "4"}},
		{ri.Workload{}, map[string]string{"device": "cpu", "corpus": "zipf:tokens=5k,doc=10", "dim": "64", "nonzeros": "4", "retrain": "1", "threads": "1"}},
		{lda.Workload{}, map[string]string{"device": "cpu", "corpus": "synthetic:preset=tiny,docs=50", "topics": "4", "iterations": "2", "threads": "1"}},
		{w2v.Workload{}, map[string]string{"device": "cpu", "corpus": "planted:tokens=5k,clusters=2,entities=3,noise=50", "dim": "8", "epochs": "1", "table": "10000", "threads": "1"}},
	} {
		t.Run(tc.w.Name(), func(t *testing.T) {
			d, ok := tc.w.(workloads.MetricDeclarer)
			if !ok {
				t.Fatalf("%T declares no metrics (workloads.MetricDeclarer)", tc.w)
			}
			v, err := workloads.ParseValues(tc.w.Params(), tc.set)
			if err != nil {
				t.Fatalf("parse %v: %v", tc.set, err)
			}
			job, err := tc.w.Start(context.Background(), v)
			if err != nil {
				t.Fatalf("start %v: %v", tc.set, err)
			}
			defer job.Close()
			res, err := job.Iterate(context.Background())
			if err != nil {
				t.Fatalf("iterate %v: %v", tc.set, err)
			}
			if len(res.Metrics) == 0 {
				t.Fatal("no metrics reported")
			}
			if err := workloads.CheckMetrics(d.Metrics(), res.Metrics); err != nil {
				t.Errorf("%v: %v", res.Metrics, err)
			}
		})
	}
}
