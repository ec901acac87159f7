package main

import (
	"encoding/json"
	"fmt"
	"path/filepath"

	"github.com/heatsink-hpc/heatsink/agent"
	"github.com/heatsink-hpc/heatsink/buildinfo"
	"github.com/spf13/cobra"
)

func newVersionCmd() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "version",
		Short: "The module version and VCS revision this binary was built from (also --version)",
		Long: `version prints the module version, the VCS revision and whether the tree
had uncommitted changes, as go build recorded them in a git checkout. run.json
records the same under "versions". A build without VCS information can be
given it at link time:

  go build -ldflags "-X github.com/heatsink-hpc/heatsink/buildinfo.version=v0.4.0 \
      -X github.com/heatsink-hpc/heatsink/buildinfo.revision=$(git rev-parse HEAD)" ./cmd/heatsink`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			i := buildinfo.Read()
			if asJSON {
				enc := json.NewEncoder(cmd.OutOrStdout())
				enc.SetIndent("", "  ")
				return enc.Encode(i)
			}
			_, err := fmt.Fprintln(cmd.OutOrStdout(), i)
			return err
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the build information as JSON")
	return cmd
}

// versions are recorded in run.json.
func versions() map[string]string { return buildinfo.Read().Versions() }

// agentBuild is the version heatsink version prints, for /metrics'
// heatsink_build_info.
func agentBuild() agent.Build {
	i := buildinfo.Read()
	return agent.Build{Version: i.Version, Revision: i.Revision, GoVersion: i.GoVersion}
}

func absDir(dir string) string {
	if a, err := filepath.Abs(dir); err == nil {
		return a
	}
	return dir
}
