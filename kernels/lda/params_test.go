package lda

import (
	"testing"

	"github.com/heatsink-hpc/heatsink/workloads/workloadstest"
)

// The tags are literals; the limits they copy are config.go's, so a
// change there must show here.
func TestParamsBoundsAreTheConfigs(t *testing.T) {
	workloadstest.CheckBounds(t, Workload{}.Params(), map[string]float64{"topics": MaxTopics, "beta": MaxBeta}, nil)
	for _, s := range (Workload{}).Params() {
		if s.Name == "beta" && *s.Min != MinBeta {
			t.Errorf("beta: min %v, want %v", *s.Min, MinBeta)
		}
		if s.Name == "corpus" && s.Default != SyntheticPrefix+"preset=nytimes-tenth" {
			t.Errorf("corpus: default %q", s.Default)
		}
	}
}
