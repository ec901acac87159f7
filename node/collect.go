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
func Collect(ctx context.Context, cfg *configs.Config, o Options, ao AgentOptions) (collectors.Stats, error) {
	ag := NewAgent(cfg, ao)
	o.Sinks = append(o.Sinks, ag.Sinks()...)
	o.Handoff = true
	c, err := Start(cfg, o)
	if err != nil {
		return collectors.Stats{}, err
	}
	agentCtx, stopAgent := context.WithCancel(ctx)
	defer stopAgent()
	if err := ag.Start(agentCtx, c); err != nil {
		c.Finish("failed")
		return collectors.Stats{}, err
	}
	runErr := c.collector.Run(ctx)
	stopAgent()
	ag.Stop()
	status := "complete"
	if ctx.Err() != nil {
		status = "interrupted"
	}
	if err := c.Finish(status); err != nil {
		return collectors.Stats{}, err
	}
	return c.collector.Stats(), runErr
}
