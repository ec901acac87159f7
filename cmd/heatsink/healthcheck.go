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

func newHealthCheckCmd() *cobra.Command {
	var (
		node, rules, state string
		severities         []string
		coolFor            time.Duration
		untrusted          int
		ao                 agent.ClientOptions
	)
	cmd := &cobra.Command{
		Use:   "healthcheck",
		Short: "Drain this Slurm node while a hotspot rule fires, resume it once cooled (HealthCheckProgram)",
		Long: `healthcheck is a Slurm HealthCheckProgram: it asks the node agent (heatsink
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
its own flags fail, and then changes nothing.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if node == "" {
				node = os.Getenv("SLURMD_NODENAME")
			}
			if node == "" {
				h, _ := os.Hostname()
				node, _, _ = strings.Cut(h, ".")
			}
			if state == "" {
				state = filepath.Join(stateDir(), "healthcheck-"+node+".cool")
			}
			client, err := agent.NewClient(ao)
			if err != nil {
				return err
			}
			hc := &slurm.HealthCheck{Node: node, Agent: client, Severities: severities, CoolFor: coolFor,
				UntrustedChecks: untrusted, StateFile: state}
			if rules != "" {
				re, err := regexp.Compile(rules)
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
		},
	}
	f := cmd.Flags()
	f.StringVar(&ao.URL, "agent", "http://127.0.0.1:9109", "the node agent's address (collect --listen); https:// with --web.config.file")
	f.StringVar(&ao.Socket, "agent-socket", agent.DefaultSocket, "the node agent's Unix socket (collect --socket), used instead of --agent whenever it exists; \"\" never")
	f.StringVar(&ao.WebConfig, "web.config.file", "", "the agent's own web configuration: its TLS certificate is the one trusted, its basic auth asks for --agent-auth")
	f.StringVar(&ao.AuthFile, "agent-auth", "", "file (mode 0600) holding \"user:password\" for the agent's basic auth")
	f.IntVar(&untrusted, "untrusted-checks", 2, "drain a node in service after this many checks in a row that could not trust the agent (1: at the first)")
	f.StringVar(&node, "node", "", "Slurm node name (default $SLURMD_NODENAME, else the short host name)")
	f.StringVar(&rules, "rules", "", "regular expression on the names of the rules that drain (default all)")
	f.StringSliceVar(&severities, "severity", []string{"critical"}, "severities of the rules that drain")
	f.DurationVar(&coolFor, "cool-for", 2*time.Minute, "how long no rule may fire before a node heatsink drained is resumed")
	f.StringVar(&state, "state", "", "file remembering since when the node is cool (default under /var/lib/heatsink)")
	return cmd
}

// stateDir is where heatsink keeps small state files: beside the spool.
func stateDir() string { return filepath.Dir(influx.DefaultSpoolDir()) }
