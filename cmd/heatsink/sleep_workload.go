//go:build heatsink_sleep

package main

// The one line that adds a workload, here the test workload of
// internal/sleepworkload (TestAddingAWorkloadTakesOnePackageAndOneImport
// builds heatsink with -tags heatsink_sleep).
import _ "github.com/heatsink-hpc/heatsink/internal/sleepworkload"
