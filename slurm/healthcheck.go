package slurm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
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
type HealthCheck struct {
	Client Client
	// Node is the Slurm name of this node.
	Node string
	// Agent is the node agent's base URL (its --listen address).
	Agent string
	// Rules selects the rules that drain: a regular expression on the rule
	// name (empty: every rule), further limited to Severities (empty:
	// critical only).
	Rules      *regexp.Regexp
	Severities []string
	// CoolFor is how long no selected rule may fire before a node heatsink
	// drained is resumed; 0 resumes at the first check that finds it cool.
	CoolFor time.Duration
	// StateFile remembers since when the node has been cool; required when
	// CoolFor > 0.
	StateFile string
	// HTTPClient asks the agent; default a client with a 10 s timeout.
	HTTPClient *http.Client
	// Now is the clock; default time.Now.
	Now func() time.Time
}

// Action is what a check did.
type Action string

// Actions of a health check.
const (
	Drained    Action = "drained"     // a rule fires: the node was drained
	StillHot   Action = "still_hot"   // already drained by heatsink, still firing
	Cooling    Action = "cooling"     // drained by heatsink, cool for less than CoolFor
	Resumed    Action = "resumed"     // cool for CoolFor: the node was resumed
	Healthy    Action = "healthy"     // nothing fires, nothing to undo
	NotOurs    Action = "not_ours"    // drained by someone else: left alone
	NodeIsDown Action = "node_down"   // down or not responding: left to Slurm
	Unknown    Action = "agent_error" // the agent could not be asked: nothing done
)

// Outcome reports a check.
type Outcome struct {
	Action Action
	// Reason is the drain reason set, or the firing alerts found.
	Reason string
	// Node is the node's state before the check.
	Node NodeInfo
}

// Run performs one check.
func (h *HealthCheck) Run(ctx context.Context) (Outcome, error) {
	if h.Node == "" || h.Agent == "" {
		return Outcome{}, errors.New("health check: the node name and the agent URL are required")
	}
	if h.CoolFor > 0 && h.StateFile == "" {
		return Outcome{}, errors.New("health check: a cool-for time needs a state file")
	}
	now := time.Now
	if h.Now != nil {
		now = h.Now
	}
	firing, err := h.firing(ctx)
	if err != nil {
		return Outcome{Action: Unknown}, err
	}
	node, err := h.Client.Node(ctx, h.Node)
	if err != nil {
		return Outcome{Action: Unknown}, err
	}
	out := Outcome{Node: node}
	ours := node.Drained() && strings.HasPrefix(node.Reason, ReasonPrefix)
	if strings.Contains(node.State, "DOWN") || strings.HasSuffix(node.State, "*") {
		out.Action = NodeIsDown
		return out, nil
	}
	if len(firing) > 0 {
		if err := h.forgetCool(); err != nil {
			return out, err
		}
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
		out.Action = Healthy
		return out, h.forgetCool()
	case !ours:
		out.Action = NotOurs
		return out, nil
	}
	cool, err := h.coolSince(now())
	if err != nil {
		return out, err
	}
	if now().Sub(cool) < h.CoolFor {
		out.Action = Cooling
		out.Reason = fmt.Sprintf("no rule fires since %s; resuming after %v", cool.Format(time.RFC3339), h.CoolFor)
		return out, nil
	}
	if err := h.Client.Resume(ctx, h.Node); err != nil {
		return out, err
	}
	out.Action = Resumed
	return out, h.forgetCool()
}

// firing asks the agent for the alerts that fire and selects the rules that drain.
func (h *HealthCheck) firing(ctx context.Context) ([]string, error) {
	client := h.HTTPClient
	if client == nil {
		client = &http.Client{Timeout: 10 * time.Second}
	}
	url := strings.TrimRight(h.Agent, "/") + "/alerts"
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, fmt.Errorf("health check: agent URL: %w", err)
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("health check: ask the agent: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("health check: %s answered %s", url, resp.Status)
	}
	var rules []agent.Rule
	if err := json.NewDecoder(resp.Body).Decode(&rules); err != nil {
		return nil, fmt.Errorf("health check: %s: %w", url, err)
	}
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
	return out, nil
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

// coolSince returns since when the node has been found cool, recording now
// when this is the first such check.
func (h *HealthCheck) coolSince(now time.Time) (time.Time, error) {
	if h.StateFile == "" {
		return now, nil
	}
	b, err := os.ReadFile(h.StateFile)
	if err == nil {
		if t, err := time.Parse(time.RFC3339Nano, strings.TrimSpace(string(b))); err == nil {
			return t, nil
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return now, fmt.Errorf("health check state: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(h.StateFile), 0o755); err != nil {
		return now, fmt.Errorf("health check state: %w", err)
	}
	if err := os.WriteFile(h.StateFile, []byte(now.Format(time.RFC3339Nano)+"\n"), 0o644); err != nil {
		return now, fmt.Errorf("health check state: %w", err)
	}
	return now, nil
}

func (h *HealthCheck) forgetCool() error {
	if h.StateFile == "" {
		return nil
	}
	if err := os.Remove(h.StateFile); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("health check state: %w", err)
	}
	return nil
}
