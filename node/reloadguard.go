package node

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/heatsink-hpc/heatsink/alerts"
	"github.com/heatsink-hpc/heatsink/configs"
	"github.com/heatsink-hpc/heatsink/registry"
)

// A reload applies only a complete, deliberate file: a deploy that writes
// the configuration in place, or an editor caught mid-save, must never
// turn off the InfluxDB sink or the alert rules of a node that is running.
const (
	// settleGap is how far apart two reads of the file must agree.
	settleGap = 250 * time.Millisecond
	// settleLimit is how long a file may go on changing before the reload
	// gives up and keeps the running configuration.
	settleLimit = 5 * time.Second
)

// readSettled returns the file at path once two reads gap apart agree in
// content, size and modification time: a writer still at work changes at
// least one of them. It gives up after limit.
func readSettled(ctx context.Context, path string, gap, limit time.Duration) ([]byte, error) {
	read := func() ([]byte, os.FileInfo, error) {
		st, err := os.Stat(path)
		if err != nil {
			return nil, nil, fmt.Errorf("read config: %w", err)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return nil, nil, fmt.Errorf("read config: %w", err)
		}
		return b, st, nil
	}
	b, st, err := read()
	if err != nil {
		return nil, err
	}
	t := time.NewTimer(gap)
	defer t.Stop()
	for end := time.Now().Add(limit); ; {
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-t.C:
		}
		b2, st2, err := read()
		if err != nil {
			return nil, err
		}
		if bytes.Equal(b, b2) && st.Size() == st2.Size() && st.ModTime().Equal(st2.ModTime()) {
			return b2, nil
		}
		if time.Now().After(end) {
			return nil, fmt.Errorf("%s was still being written %v after the reload began (it changed between two reads %v apart): not applied", path, limit, gap)
		}
		b, st = b2, st2
		t.Reset(gap)
	}
}

// refuseRemovals returns an error naming what cfg would drop from the
// running configuration (old, whose sources are running) merely by not
// mentioning it: an enabled sink, an alert rule, a source. A file cut short
// says exactly that, so only what cfg.Removes names may go, and all rules
// when the file writes `rules: []`.
func refuseRemovals(old, cfg *configs.Config, running, fresh []built) error {
	var gone []string
	for _, k := range registry.SinkKinds() {
		if k.Enabled(sinkSection(old, k)) && !k.Enabled(sinkSection(cfg, k)) {
			gone = append(gone, "sinks."+k.Name)
		}
	}
	if !cfg.WroteEmptyList("alerts", "rules") {
		var now []string
		for _, r := range alerts.ConfigOf(cfg).Rules {
			now = append(now, r.Name)
		}
		for _, r := range alerts.ConfigOf(old).Rules {
			if !slices.Contains(now, r.Name) {
				gone = append(gone, "alerts.rules."+r.Name)
			}
		}
	}
	var now []string
	for _, b := range fresh {
		now = append(now, b.src.Name())
	}
	for _, b := range running {
		if !slices.Contains(now, b.src.Name()) {
			gone = append(gone, "sources."+b.src.Name())
		}
	}
	var refused []string
	for _, g := range gone {
		if !slices.Contains(cfg.Removes, g) {
			refused = append(refused, g)
		}
	}
	if len(refused) == 0 {
		return nil
	}
	return fmt.Errorf("the file no longer mentions %s, as a file cut short by a write in progress would not: not applied; "+
		"to remove them on purpose, list them under removes: (or write rules: [] for every alert rule)", strings.Join(refused, ", "))
}
