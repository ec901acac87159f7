package influx

import (
	"context"
	"fmt"
	"log/slog"
	"os"

	"github.com/heatsink-hpc/heatsink/collectors/spool"
)

// SendReport is what SendSpool did.
type SendReport struct {
	Dir string
	// Recorded is the destination the spool records; empty for a spool of
	// an older heatsink.
	Recorded string
	// To is where the points went.
	To Destination
	// SentPoints were acknowledged by the server; LeftPoints still wait.
	SentPoints int64
	LeftPoints int64
}

// SendSpool sends what waits in the spool dir to the destination c names,
// whatever destination the spool records. It is the one way points cross
// from one destination to another, so only an operator's command calls
// it: for a spool an older heatsink left for no stated destination, or
// one whose server is gone. It stops at the first write that fails; what
// was not sent stays in the spool. A sink that has the spool open makes it
// fail (the spool's lock), so the points are never sent twice at once.
func SendSpool(ctx context.Context, dir string, c Config, log *slog.Logger) (SendReport, error) {
	rep := SendReport{Dir: dir}
	cfg := c.withDefaults()
	if err := cfg.Validate(); err != nil {
		return rep, fmt.Errorf("influx: %w", err)
	}
	dest, err := DestinationOf(cfg)
	if err != nil {
		return rep, err
	}
	rep.To = dest
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		return rep, fmt.Errorf("send spool %s: not a directory (list the spools with `heatsink spool list`)", dir)
	}
	info, err := spool.Inspect(dir)
	if err != nil {
		return rep, err
	}
	rep.Recorded = info.Destination
	if info.UnsentPoints == 0 {
		return rep, nil
	}
	if err := cfg.Token.Resolve(); err != nil {
		return rep, fmt.Errorf("influx token: %w", err)
	}
	client, err := newClient(cfg)
	if err != nil {
		return rep, err
	}
	defer client.Close()
	sp, err := spool.Open(dir, spool.Options{Logger: log})
	if err != nil {
		return rep, fmt.Errorf("send spool %s: %w", dir, err)
	}
	defer sp.Close()
	writer := client.WriteAPIBlocking(cfg.Org, cfg.Bucket)
	batchSize := cfg.BatchSize
	var buf []byte
	for {
		b, err := sp.Next(batchSize, 0, buf)
		if err != nil {
			return rep, fmt.Errorf("send spool %s: %w", dir, err)
		}
		if b.Points == 0 {
			break
		}
		buf = b.Lines[:0]
		if err := writer.WriteRecord(ctx, string(b.Lines)); err != nil {
			if statusOf(err) == 413 && batchSize > 1 {
				batchSize = max(1, b.Points/2)
				continue
			}
			rep.LeftPoints = sp.Unsent()
			return rep, fmt.Errorf("send spool %s to %s: %d points sent, then a write of the points at %s offset %d failed (%s); %d points stay in the spool",
				dir, dest, rep.SentPoints, b.Segment, b.Offset, describe(err, statusOf(err)), rep.LeftPoints)
		}
		rep.SentPoints += int64(b.Points)
		if err := sp.Commit(b); err != nil {
			return rep, fmt.Errorf("send spool %s: %d points sent, but the spool could not record it (they may be sent again): %w", dir, rep.SentPoints, err)
		}
	}
	rep.LeftPoints = sp.Unsent()
	if err := sp.Close(); err != nil {
		return rep, fmt.Errorf("send spool %s: %w", dir, err)
	}
	return rep, nil
}
