package slurm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/heatsink-hpc/heatsink/agent"
)

// ReasonPrefix starts every drain reason heatsink sets. The health check
// resumes only nodes whose reason has it: a node an administrator drained
// stays drained whatever the temperatures.
const ReasonPrefix = "heatsink:"

// HealthCheck is one run of the thermal health check, Slurm's
// HealthCheckProgram: it asks the node's agent which alert rules fire and
// drains or resumes the node through scontrol.
//
// Hysteresis comes from two places. The rules' own margins (threshold
// margin or clear) decide when a hot series counts as cooled, so the check
// does not flap around a threshold. And a node heatsink drained is resumed
// only once no rule has fired for CoolFor, measured across runs of the
// check in StateFile.
//
// An agent the check cannot trust (unreachable, the wrong certificate or
// socket owner, a port held by another user, an answer that is not
// heatsink's) counts as an unhealthy node, never a healthy one: a node
// heatsink drained stays drained, and a node in service is drained once
// UntrustedChecks checks in a row found the agent untrusted.
type HealthCheck struct {
	Client Client
	// Node is the Slurm name of this node.
	Node string
	// Agent asks the node agent for its alert rules (an *agent.Client);
	// any error it returns means the answer could not be trusted.
	Agent AlertSource
	// Rules selects the rules that drain: a regular expression on the rule
	// name (empty: every rule), further limited to Severities (empty:
	// critical only).
	Rules      *regexp.Regexp
	Severities []string
	// CoolFor is how long no selected rule may fire before a node heatsink
	// drained is resumed; 0 resumes at the first check that finds it cool.
	CoolFor time.Duration
	// UntrustedChecks is how many checks in a row must find the agent
	// untrusted before a node in service is drained; 0 or 1 drains at the
	// first. More than one rides out an agent's restart (systemd restarts
	// it within seconds, Slurm checks every minute or so) without draining.
	UntrustedChecks int
	// StateFile remembers since when the node has been cool and how many
	// checks in a row found the agent untrusted; required when CoolFor > 0
	// or UntrustedChecks > 1.
	StateFile string
	// Now is the clock; default time.Now.
	Now func() time.Time
}

// AlertSource is where the check reads the agent's alert rules.
type AlertSource interface {
	Alerts(ctx context.Context) ([]agent.Rule, error)
}

// Action is what a check did.
type Action string

// Actions of a health check.
const (
	Drained    Action = "drained"         // a rule fires, or the agent is untrusted: the node was drained
	StillHot   Action = "still_hot"       // already drained by heatsink, still firing
	Cooling    Action = "cooling"         // drained by heatsink, cool for less than CoolFor
	Resumed    Action = "resumed"         // cool for CoolFor: the node was resumed
	Healthy    Action = "healthy"         // nothing fires, nothing to undo
	NotOurs    Action = "not_ours"        // drained by someone else: left alone
	NodeIsDown Action = "node_down"       // down or not responding: left to Slurm
	Untrusted  Action = "agent_untrusted" // the agent is not trusted: a drained node stays so, one in service waits for UntrustedChecks
	Unknown    Action = "check_error"     // scontrol or the state file failed: nothing done
)

// Outcome reports a check.
type Outcome struct {
	Action Action
	// Reason is the drain reason set, or the firing alerts found, or why
	// the agent is not trusted.
	Reason string
	// Node is the node's state before the check.
	Node NodeInfo
}

// Run performs one check.
func (h *HealthCheck) Run(ctx context.Context) (Outcome, error) {
	if h.Node == "" || h.Agent == nil {
		return Outcome{}, errors.New("health check: the node name and the agent are required")
	}
	if (h.CoolFor > 0 || h.UntrustedChecks > 1) && h.StateFile == "" {
		return Outcome{}, errors.New("health check: a cool-for time or more than one untrusted check needs a state file")
	}
	now := time.Now
	if h.Now != nil {
		now = h.Now
	}
	rules, agentErr := h.Agent.Alerts(ctx)
	node, err := h.Client.Node(ctx, h.Node)
	if err != nil {
		return Outcome{Action: Unknown}, err
	}
	st, err := h.loadState()
	if err != nil {
		return Outcome{Action: Unknown}, err
	}
	out := Outcome{Node: node}
	if strings.Contains(node.State, "DOWN") || strings.HasSuffix(node.State, "*") {
		out.Action = NodeIsDown
		return out, nil
	}
	if agentErr != nil {
		out, err = h.untrusted(ctx, out, &st, agentErr)
	} else {
		st.UntrustedChecks = 0
		out, err = h.judge(ctx, out, &st, h.selectFiring(rules), now())
	}
	if serr := h.saveState(st); err == nil {
		err = serr
	}
	return out, err
}

// untrusted handles an agent whose answer cannot be believed. The node
// is never resumed on it, and the cool time starts over: nothing proved
// the node cool.
func (h *HealthCheck) untrusted(ctx context.Context, out Outcome, st *checkState, why error) (Outcome, error) {
	st.CoolSince = time.Time{}
	st.UntrustedChecks++
	out.Reason = ReasonPrefix + " agent not trusted: " + scontrolSafe(why.Error())
	ours := out.Node.Drained() && strings.HasPrefix(out.Node.Reason, ReasonPrefix)
	switch {
	case ours:
		out.Action = Untrusted // stays drained, its reason kept
	case out.Node.Drained():
		out.Action = NotOurs
	case st.UntrustedChecks < h.UntrustedChecks:
		out.Action = Untrusted
		out.Reason += fmt.Sprintf(" (check %d of %d before draining)", st.UntrustedChecks, h.UntrustedChecks)
	default:
		if err := h.Client.Drain(ctx, h.Node, out.Reason); err != nil {
			return out, err
		}
		out.Action = Drained
	}
	return out, nil
}

// judge drains, keeps or resumes the node on the agent's trusted answer.
func (h *HealthCheck) judge(ctx context.Context, out Outcome, st *checkState, firing []string, now time.Time) (Outcome, error) {
	node := out.Node
	ours := node.Drained() && strings.HasPrefix(node.Reason, ReasonPrefix)
	if len(firing) > 0 {
		st.CoolSince = time.Time{}
		out.Reason = reason(firing)
		switch {
		case ours:
			out.Action = StillHot
		case node.Drained():
			out.Action = NotOurs // an admin's reason is kept
		default:
			if err := h.Client.Drain(ctx, h.Node, out.Reason); err != nil {
				return out, err
			}
			out.Action = Drained
		}
		return out, nil
	}
	switch {
	case !node.Drained():
		st.CoolSince = time.Time{}
		out.Action = Healthy
		return out, nil
	case !ours:
		out.Action = NotOurs
		return out, nil
	}
	if st.CoolSince.IsZero() {
		st.CoolSince = now
	}
	if now.Sub(st.CoolSince) < h.CoolFor {
		out.Action = Cooling
		out.Reason = fmt.Sprintf("no rule fires since %s; resuming after %v", st.CoolSince.Format(time.RFC3339), h.CoolFor)
		return out, nil
	}
	if err := h.Client.Resume(ctx, h.Node); err != nil {
		return out, err
	}
	st.CoolSince = time.Time{}
	out.Action = Resumed
	return out, nil
}

// selectFiring keeps the firing alerts of the rules that drain.
func (h *HealthCheck) selectFiring(rules []agent.Rule) []string {
	sev := h.Severities
	if len(sev) == 0 {
		sev = []string{"critical"}
	}
	var out []string
	for _, r := range rules {
		if !slices.Contains(sev, r.Severity) || (h.Rules != nil && !h.Rules.MatchString(r.Name)) {
			continue
		}
		for _, a := range r.Alerts {
			if a.Firing {
				out = append(out, describe(r, a))
			}
		}
	}
	return out
}

// scontrolSafe makes text fit a drain reason: one line, no "=" that
// scontrol's output would read as a field, short enough for sinfo.
func scontrolSafe(s string) string {
	s = strings.Join(strings.Fields(strings.ReplaceAll(s, "=", ":")), " ")
	if r := []rune(s); len(r) > 200 {
		s = string(r[:200]) + "..."
	}
	return s
}

// describe renders a firing alert for a drain reason: rule, device, value.
// No Key=value with a capital key, which scontrol's output would split.
func describe(r agent.Rule, a agent.Alert) string {
	var dev []string
	for _, k := range []string{"gpu", "chip", "sensor", "device", "tank", "pdu", "outlet"} {
		if v, ok := a.Tags[k]; ok {
			dev = append(dev, k+" "+v)
		}
	}
	s := r.Name + " on " + a.Measurement
	if len(dev) > 0 {
		s += " " + strings.Join(dev, " ")
	}
	if a.Value != nil && a.Threshold != nil {
		s += fmt.Sprintf(" (%.4g vs %.4g)", *a.Value, *a.Threshold)
	}
	return s
}

// reason joins firing alerts into one drain reason, short enough for sinfo.
func reason(firing []string) string {
	r := ReasonPrefix + " " + firing[0]
	if n := len(firing) - 1; n > 0 {
		r += fmt.Sprintf(" and %d more", n)
	}
	return r
}

// checkState is what the check remembers between runs, in StateFile.
type checkState struct {
	// CoolSince is when the node heatsink drained was first found cool;
	// zero while it is not.
	CoolSince time.Time `json:"cool_since,omitzero"`
	// UntrustedChecks counts the checks in a row that could not trust the agent.
	UntrustedChecks int `json:"untrusted_checks,omitempty"`
}

// loadState reads the state file; a missing one is a fresh state. A file
// of the earlier format (one RFC 3339 time: cool since) is read as such.
func (h *HealthCheck) loadState() (checkState, error) {
	var st checkState
	if h.StateFile == "" {
		return st, nil
	}
	b, err := os.ReadFile(h.StateFile)
	if errors.Is(err, fs.ErrNotExist) {
		return st, nil
	}
	if err != nil {
		return st, fmt.Errorf("health check state: %w", err)
	}
	if t, err := time.Parse(time.RFC3339Nano, strings.TrimSpace(string(b))); err == nil {
		st.CoolSince = t
		return st, nil
	}
	if err := json.Unmarshal(b, &st); err != nil {
		return checkState{}, fmt.Errorf("health check state %s: %w (remove it to start afresh)", h.StateFile, err)
	}
	return st, nil
}

// saveState writes the state file whole (a new file renamed over the
// old), or removes it when there is nothing to remember.
func (h *HealthCheck) saveState(st checkState) error {
	if h.StateFile == "" {
		return nil
	}
	if st == (checkState{}) {
		if err := os.Remove(h.StateFile); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("health check state: %w", err)
		}
		return nil
	}
	b, err := json.Marshal(st)
	if err != nil {
		return fmt.Errorf("health check state: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(h.StateFile), 0o755); err != nil {
		return fmt.Errorf("health check state: %w", err)
	}
	tmp := h.StateFile + ".new"
	if err := os.WriteFile(tmp, append(b, '\n'), 0o644); err != nil {
		return fmt.Errorf("health check state: %w", err)
	}
	if err := os.Rename(tmp, h.StateFile); err != nil {
		return fmt.Errorf("health check state: %w", err)
	}
	return nil
}
