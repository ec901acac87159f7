package w2v

import (
	"testing"

	"github.com/heatsink-hpc/heatsink/workloads/workloadstest"
)

// The tags are literals; the limits they copy are config.go's, corpus.go's
// and trainer.go's, so a change there must show here.
func TestParamsBoundsAreTheConfigs(t *testing.T) {
	workloadstest.CheckBounds(t, Workload{}.Params(), map[string]float64{
		"dim": MaxDim, "window": MaxWindow, "negatives": MaxNegatives, "epochs": MaxEpochs,
	}, map[string][]string{
		"sentences": {string(Lines), string(Word2Vec)}, "objective": {ObjectiveNS, ObjectiveHS},
		"kernel": {KernelAuto, KernelWarp, KernelBlock, KernelWombat}, "wombat_layout": {WombatWindows, WombatTiles},
	})
	for _, s := range (Workload{}).Params() {
		if s.Name == "corpus" && s.Default != ZipfPrefix {
			t.Errorf("corpus: default %q", s.Default)
		}
	}
}
