package agent

import (
	"os"
	"testing"

	"github.com/heatsink-hpc/heatsink/agent/agenttest"
)

// TestMain lets a copy of this test binary be the impostor agent.
func TestMain(m *testing.M) {
	agenttest.RunImpostorIfAsked()
	os.Exit(m.Run())
}
