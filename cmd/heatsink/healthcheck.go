package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/heatsink-hpc/heatsink/agent"
	"github.com/heatsink-hpc/heatsink/collectors/influx"
	"github.com/heatsink-hpc/heatsink/slurm"
	"github.com/spf13/cobra"
)

// healthCheckFlags are heatsink healthcheck's flags.
type healthCheckFlags struct {
	node, rules, state string
	severities         []string
	coolFor            time.Duration
	untrusted          int
	agent              agent.ClientOptions
}

func newHealthCheckCmd() *cobra.Command {
	var hf healthCheckFlags
	cmd := &cobra.Command{
		Use:   "healthcheck",
		Short: "Drain this Slurm node while a hotspot rule fires, resume it once cooled (HealthCheckProgram)",
		Long:  healthCheckLong,
		Args:  cobra.NoArgs,
		RunE:  func(cmd *cobra.Command, args []string) error { return runHealthCheck(cmd, &hf) },
	}
	f := cmd.Flags()
	f.StringVar(&hf.agent.URL, "agent", "http://127.0.0.1:9109", "the node agent's address (collect --listen); https:// with --web.config.file")
	f.StringVar(&hf.agent.Socket, "agent-socket", agent.DefaultSocket, "the node agent's Unix socket (collect --socket), used instead of --agent whenever it exists; \"\" never")
	f.StringVar(&hf.agent.WebConfig, "web.config.file", "", "the agent's own web configuration: its TLS certificate is the one trusted, its basic auth asks for --agent-auth")
	f.StringVar(&hf.agent.AuthFile, "agent-auth", "", "file (mode 0600) holding \"user:password\" for the agent's basic auth")
	f.IntVar(&hf.untrusted, "untrusted-checks", 2, "drain a node in service after this many checks in a row that could not trust the agent (1: at the first)")
	f.StringVar(&hf.node, "node", "", "Slurm node name (default $SLURMD_NODENAME, else the short host name)")
	f.StringVar(&hf.rules, "rules", "", "regular expression on the names of the rules that drain (default all)")
	f.StringSliceVar(&hf.severities, "severity", []string{"critical"}, "severities of the rules that drain")
	f.DurationVar(&hf.coolFor, "cool-for", 2*time.Minute, "how long no rule may fire before a node heatsink drained is resumed")
	f.StringVar(&hf.state, "state", "", "file remembering since when the node is cool and how often the agent was untrusted (default under /var/lib/heatsink)")
	return cmd
}

// runHealthCheck is heatsink healthcheck: one check, its outcome printed.
func runHealthCheck(cmd *cobra.Command, hf *healthCheckFlags) error {
	node := hf.node
	if node == "" {
		node = os.Getenv("SLURMD_NODENAME")
	}
	if node == "" {
		h, _ := os.Hostname()
		node, _, _ = strings.Cut(h, ".")
	}
	state := hf.state
	if state == "" {
		state = filepath.Join(stateDir(), "healthcheck-"+node+".cool")
	}
	if hf.untrusted < 1 {
		return fmt.Errorf("--untrusted-checks %d: want 1 or more", hf.untrusted)
	}
	client, err := agent.NewClient(hf.agent)
	if err != nil {
		return err
	}
	hc := &slurm.HealthCheck{Node: node, Agent: client, Severities: hf.severities, CoolFor: hf.coolFor,
		UntrustedChecks: hf.untrusted, StateFile: state}
	if hf.rules != "" {
		re, err := regexp.Compile(hf.rules)
		if err != nil {
			return fmt.Errorf("--rules: %w", err)
		}
		hc.Rules = re
	}
	out, err := hc.Run(cmd.Context())
	if err != nil {
		return err
	}
	fmt.Fprintf(cmd.OutOrStdout(), "heatsink healthcheck %s: %s (state %s)", node, out.Action, out.Node.State)
	if out.Reason != "" {
		fmt.Fprintf(cmd.OutOrStdout(), ": %s", out.Reason)
	}
	fmt.Fprintln(cmd.OutOrStdout())
	return nil
}

const healthCheckLong = `healthcheck is a Slurm HealthCheckProgram: it asks the node agent (heatsink
collect --listen) which alert rules fire. When a selected rule fires (by default
every rule of severity critical), it drains the node with scontrol, the rule and
device as the reason ("heatsink: ..."). A node heatsink drained is resumed once no
selected rule has fired for --cool-for; the rules' own margins are the
temperature hysteresis, --cool-for the time hysteresis. A node drained for any
other reason is left alone.

It trusts only the agent: over --agent-socket (used whenever it exists) the
socket and the process answering on it must be root's; over https the agent
must present the certificate of its --web.config.file, and the check sends the
basic-auth password of --agent-auth; over plain http the port must be held by
root. An agent it cannot trust (down, an impostor on its port, wrong
certificate or password, an answer that is not heatsink's) is an unhealthy
node: a node heatsink drained stays drained, and one in service is drained
("heatsink: agent not trusted: ...") after --untrusted-checks checks in a row.
It prints what it did; it exits non-zero only when scontrol, its state file or
its own flags fail, and then changes nothing.`

// stateDir is where heatsink keeps small state files: beside the spool.
func stateDir() string { return filepath.Dir(influx.DefaultSpoolDir()) }
