//go:build heatsink_probe

package node

// The one line that adds a source, here the test source of internal/probe
// (cmd/heatsink's TestAddingASourceTakesOnePackageAndOneImport builds
// heatsink with -tags heatsink_probe).
import _ "github.com/heatsink-hpc/heatsink/internal/probe"
