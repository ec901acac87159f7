package ri

import (
	"testing"

	"github.com/heatsink-hpc/heatsink/workloads/workloadstest"
)

// The tags are literals; the limits they copy are config.go's and
// trainer.go's, so a change there must show here.
func TestParamsBoundsAreTheConfigs(t *testing.T) {
	workloadstest.CheckBounds(t, Workload{}.Params(), map[string]float64{
		"dim": MaxDim, "nonzeros": MaxNonzeros, "window": MaxWindow, "retrain": MaxRetrain, "slice": MaxSlice,
	}, map[string][]string{"kernel": {KernelBlock, KernelWarp, KernelThread}})
	for _, s := range (Workload{}).Params() {
		if s.Name == "corpus" && s.Default != ZipfPrefix+"tokens=10M" {
			t.Errorf("corpus: default %q", s.Default)
		}
	}
}
