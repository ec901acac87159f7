package main

import (
	"context"
	"log/slog"
	"time"

	"github.com/heatsink-hpc/heatsink/residency"
)

// trimResidency unmaps the executable's pages that start-up touched and a
// long-running agent never reads again (see package residency): now, which
// keeps start-up's own pages out of the peak, and again after settle, once
// the first ticks have run discovery.
func trimResidency(ctx context.Context, settle time.Duration) {
	trim := func() {
		if kib, err := residency.Trim(); err != nil {
			slog.Debug("trimming resident pages", "err", err)
		} else {
			slog.Debug("trimmed resident pages", "kib", kib)
		}
	}
	trim()
	t := time.AfterFunc(settle, trim)
	context.AfterFunc(ctx, func() { t.Stop() })
}
