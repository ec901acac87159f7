//go:build heatsink_gpusim

package node

// The simulated GPUs of internal/gpusim, for the fleet survey's test on
// the loopback Slurm cluster (cmd/heatsink's TestSurveyFleetOnRealSlurm
// builds heatsink with -tags heatsink_gpusim). Never in a release build.
import _ "github.com/heatsink-hpc/heatsink/internal/gpusim"
