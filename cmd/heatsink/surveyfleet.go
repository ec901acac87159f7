package main

import (
	"errors"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/heatsink-hpc/heatsink/analysis"
	"github.com/heatsink-hpc/heatsink/node"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// fleetOnly are survey's flags the launcher keeps to itself; every other
// flag given is passed on to each node's survey.
var fleetOnly = map[string]bool{"launcher": true, "nodes": true, "partition": true, "out": true, "against": true, "config": true}

// runSurveyOrFleet surveys this node, or with --launcher the nodes of an
// allocation.
func runSurveyOrFleet(cmd *cobra.Command, sf *surveyFlags, args []string) error {
	if sf.fleet.launcher == "" || sf.fleet.launcher == "local" {
		if cmd.Flags().Changed("nodes") || sf.fleet.partition != "" {
			return &exitError{code: 2, err: errors.New("--nodes and --partition survey the nodes of an allocation: give --launcher slurm")}
		}
		return runSurveyCmd(cmd, sf, args)
	}
	return runSurveyFleetCmd(cmd, sf, args)
}

// runSurveyFleetCmd is heatsink survey --launcher slurm: every node of an
// allocation surveyed at once, then judged as a fleet. Exit status 2 when
// the survey could not start or a node failed (the others are judged and
// reported all the same), 1 when anything is flagged, else 0.
func runSurveyFleetCmd(cmd *cobra.Command, sf *surveyFlags, args []string) error {
	f, err := surveyFleet(cmd, sf, args)
	if err != nil {
		return &exitError{code: 2, err: err}
	}
	if err := analysis.WriteFleetTable(cmd.OutOrStdout(), f); err != nil {
		return &exitError{code: 2, err: err}
	}
	fmt.Fprintf(cmd.ErrOrStderr(), "heatsink: fleet survey %s -> %s\n", f.RunID, filepath.Join(absDir(sf.out), analysis.SurveyFile))
	if code := f.ExitCode(); code != 0 {
		return &exitError{code: code}
	}
	return nil
}

func surveyFleet(cmd *cobra.Command, sf *surveyFlags, args []string) (analysis.FleetSurvey, error) {
	var none analysis.FleetSurvey
	switch {
	case sf.fleet.launcher != "slurm":
		return none, fmt.Errorf("--launcher %q: want local or slurm", sf.fleet.launcher)
	case sf.out == "":
		return none, errors.New("--out DIR is required: the fleet's survey.json and each node's survey under DIR/nodes/")
	}
	if err := errors.Join(checkNewRunDir(sf.out), sf.plan.Check()); err != nil {
		return none, err
	}
	against, err := readAgainst(sf.against)
	if err != nil {
		return none, err
	}
	// The load is checked here, before any node is allocated.
	if _, _, err := surveyLoad(sf, args); err != nil {
		return none, err
	}
	worker, err := fleetWorker(cmd, sf, args)
	if err != nil {
		return none, err
	}
	dir, err := filepath.Abs(sf.out)
	if err != nil {
		return none, err
	}
	ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	defer stop()
	return node.SurveyFleet(ctx, node.FleetOptions{Nodes: sf.fleet.nodes, Partition: sf.fleet.partition, Dir: dir,
		Survey: worker, Analysis: surveyAnalysisOptions(sf.plan), Rule: analysis.DefaultSurveyRule(), Against: against,
		Progress: cmd.ErrOrStderr()})
}

// fleetWorker returns each node's survey command line: this binary's
// survey with every flag given passed on, --out the node's directory and
// --config with {node} replaced by the node's name (a site may keep one
// configuration per node), and the load command after --.
func fleetWorker(cmd *cobra.Command, sf *surveyFlags, args []string) (func(node, dir string) []string, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("find the heatsink binary to run on the nodes: %w", err)
	}
	conf := sf.configPath
	if conf != "" {
		if conf, err = filepath.Abs(conf); err != nil {
			return nil, err
		}
	}
	var pass []string
	cmd.Flags().Visit(func(f *pflag.Flag) {
		if fleetOnly[f.Name] {
			return
		}
		if sv, ok := f.Value.(pflag.SliceValue); ok {
			for _, v := range sv.GetSlice() {
				pass = append(pass, "--"+f.Name+"="+v)
			}
			return
		}
		pass = append(pass, "--"+f.Name+"="+f.Value.String())
	})
	return func(node, dir string) []string {
		argv := []string{exe, "survey", "--out", dir}
		if conf != "" {
			argv = append(argv, "--config", strings.ReplaceAll(conf, "{node}", node))
		}
		argv = append(argv, pass...)
		if len(args) > 0 {
			argv = append(append(argv, "--"), args...)
		}
		return argv
	}, nil
}
