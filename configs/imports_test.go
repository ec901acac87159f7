package configs_test

import (
	"os/exec"
	"strings"
	"testing"
)

// The loader learns the sections from the registry, so that adding a
// source never touches it: it must import no source, sink, workload or
// alert package, directly or not. go list sees what the compiler sees.
func TestConfigsImportsNoSourceSinkWorkloadOrAlerts(t *testing.T) {
	const module = "github.com/heatsink-hpc/heatsink/"
	for _, pkg := range []string{"configs", "registry"} {
		out, err := exec.Command("go", "list", "-deps", module+pkg).CombinedOutput()
		if err != nil {
			t.Fatalf("go list -deps %s: %v\n%s", pkg, err, out)
		}
		for _, dep := range strings.Fields(string(out)) {
			rest, ok := strings.CutPrefix(dep, module)
			if !ok {
				continue
			}
			for _, banned := range []string{"sensors", "collectors", "workloads", "alerts", "node"} {
				if rest == banned || strings.HasPrefix(rest, banned+"/") {
					t.Errorf("%s imports %s", pkg, dep)
				}
			}
		}
	}
}
