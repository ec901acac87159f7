// Package workloadstest holds what the workload packages' tests share.
package workloadstest

import (
	"slices"
	"testing"

	"github.com/heatsink-hpc/heatsink/workloads"
)

// CheckBounds fails t unless the parameters named in max have those
// maxima and those named in choices those choices, in order. A workload's
// tags are literals that copy its package's limits (MaxDim, the kernel
// names); this holds the two together, so a change of one shows in a test.
func CheckBounds(t *testing.T, specs []workloads.ParamSpec, max map[string]float64, choices map[string][]string) {
	t.Helper()
	seen := map[string]bool{}
	for _, s := range specs {
		seen[s.Name] = true
		if m, ok := max[s.Name]; ok && (s.Max == nil || *s.Max != m) {
			t.Errorf("%s: max %v, want %v", s.Name, s.Max, m)
		}
		if c, ok := choices[s.Name]; ok && !slices.Equal(s.Choices, c) {
			t.Errorf("%s: choices %q, want %q", s.Name, s.Choices, c)
		}
	}
	for name := range max {
		if !seen[name] {
			t.Errorf("no parameter %s", name)
		}
	}
	for name := range choices {
		if !seen[name] {
			t.Errorf("no parameter %s", name)
		}
	}
}
