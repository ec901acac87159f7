package ri

import (
	"testing"

	"github.com/heatsink-hpc/heatsink/workloads"
)

// The tags are literals; the limits they copy are config.go's and
// trainer.go's, so a change there must show here.
func TestParamsBoundsAreTheConfigs(t *testing.T) {
	checkSpecs(t, Workload{}.Params(), map[string]float64{
		"dim": MaxDim, "nonzeros": MaxNonzeros, "window": MaxWindow, "retrain": MaxRetrain, "slice": MaxSlice,
	}, map[string][]string{"kernel": {KernelBlock, KernelWarp, KernelThread}})
	for _, s := range (Workload{}).Params() {
		if s.Name == "corpus" && s.Default != ZipfPrefix+"tokens=10M" {
			t.Errorf("corpus: default %q", s.Default)
		}
	}
}

func checkSpecs(t *testing.T, specs []workloads.ParamSpec, max map[string]float64, choices map[string][]string) {
	t.Helper()
	for _, s := range specs {
		if m, ok := max[s.Name]; ok && (s.Max == nil || *s.Max != m) {
			t.Errorf("%s: max %v, want %v", s.Name, s.Max, m)
		}
		if c, ok := choices[s.Name]; ok && !equal(s.Choices, c) {
			t.Errorf("%s: choices %q, want %q", s.Name, s.Choices, c)
		}
		delete(max, s.Name)
		delete(choices, s.Name)
	}
	if len(max)+len(choices) > 0 {
		t.Errorf("no parameters %v %v", max, choices)
	}
}

func equal(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
