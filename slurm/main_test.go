package slurm_test

import (
	"fmt"
	"os"
	"testing"

	"github.com/heatsink-hpc/heatsink/agent/agenttest"
	"github.com/heatsink-hpc/heatsink/slurm"
)

// TestMain lets a copy of this test binary be the impostor agent, the
// Prolog or Epilog (what `heatsink slurm prolog` and `epilog` do), or the
// summary's writer child (what heatsink's hidden `slurm write-summary` is
// in production), run as a job's user.
func TestMain(m *testing.M) {
	agenttest.RunImpostorIfAsked()
	if len(os.Args) == 3 && (os.Args[1] == prologArg || os.Args[1] == epilogArg) {
		if err := prologOrEpilog(os.Args[1] == prologArg, os.Args[2]); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	if len(os.Args) == 3 && os.Args[1] == ctldEpilogArg {
		if err := ctldEpilog(os.Args[2]); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	if len(os.Args) == 4 && os.Args[1] == writerArg {
		path, err := slurm.ReceiveSummary(os.Args[2], os.Args[3], os.Stdin)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		fmt.Println(path)
		os.Exit(0)
	}
	code := m.Run()
	if writerDir != "" {
		os.RemoveAll(writerDir)
	}
	os.Exit(code)
}
