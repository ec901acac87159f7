package node

import (
	"time"

	"github.com/heatsink-hpc/heatsink/agent"
)

// alertDeliveries adapts the alert engine's per-action counters for the
// agent's /metrics and /healthz: a receiver that is down or too slow for
// a burst loses alerts, and an operator must see which and how many
// without reading the log.
func (a *Agent) alertDeliveries() []agent.Delivery {
	eng := a.currentEngine()
	if eng == nil {
		return nil
	}
	ds := eng.Deliveries()
	out := make([]agent.Delivery, 0, len(ds))
	for _, d := range ds {
		kind, name := agent.SplitAction(d.Action)
		out = append(out, agent.Delivery{Action: kind, Name: name, Queued: d.Queued, InFlight: d.InFlight,
			Sent: d.Sent, Coalesced: d.Coalesced, Failed: d.Failed, Dropped: d.Dropped,
			LastDropped: timeOrNil(d.LastDropped), LastFailed: timeOrNil(d.LastFailed)})
	}
	return out
}

func timeOrNil(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	return &t
}
