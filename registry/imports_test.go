package registry_test

import (
	"os/exec"
	"strings"
	"testing"
)

// Any package may register, and the configuration loader builds on the
// registry, so the registry must stay below both: it imports nothing of
// heatsink but the point type and its own keypath. go list sees what the
// compiler sees.
func TestRegistryImportsOnlyPointAndKeypath(t *testing.T) {
	const module = "github.com/heatsink-hpc/heatsink/"
	out, err := exec.Command("go", "list", "-deps", module+"registry").CombinedOutput()
	if err != nil {
		t.Fatalf("go list -deps registry: %v\n%s", err, out)
	}
	allowed := map[string]bool{"point": true, "registry": true, "registry/keypath": true}
	for _, dep := range strings.Fields(string(out)) {
		if rest, ok := strings.CutPrefix(dep, module); ok && !allowed[rest] {
			t.Errorf("registry imports %s", dep)
		}
	}
}
