package node

import (
	"context"

	"github.com/heatsink-hpc/heatsink/collectors"
	"github.com/heatsink-hpc/heatsink/configs"
)

// Collect is `heatsink collect`: it records what cfg configures until ctx
// ends (status "interrupted" in run.json, still a clean close) or
// o.Ticks ticks have passed ("complete"), as a node agent (o.Agent), then
// closes the run and returns the collector's counters.
// CollectStats are the collector's counts and the points the run
// directory holds (Written: 0 without one).
type CollectStats struct {
	collectors.Stats
	Written int
}

func Collect(ctx context.Context, cfg *configs.Config, o Options, ao AgentOptions) (CollectStats, error) {
	ag := NewAgent(cfg, ao)
	o.Sinks = append(o.Sinks, ag.Sinks()...)
	o.Handoff = true
	c, err := Start(cfg, o)
	if err != nil {
		return CollectStats{}, err
	}
	agentCtx, stopAgent := context.WithCancel(ctx)
	defer stopAgent()
	if err := ag.Start(agentCtx, c); err != nil {
		c.Finish("failed")
		return CollectStats{}, err
	}
	runErr := c.collector.Run(ctx)
	stopAgent()
	ag.Stop()
	status := "complete"
	if ctx.Err() != nil {
		status = "interrupted"
	}
	if err := c.Finish(status); err != nil {
		return CollectStats{}, err
	}
	return CollectStats{Stats: c.collector.Stats(), Written: c.Written()}, runErr
}
