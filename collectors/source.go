package collectors

import (
	"context"
	"time"

	"github.com/heatsink-hpc/heatsink/point"
)

// Source is one kind of hardware the collector samples (hwmon, NVML, a PDU...).
type Source interface {
	// Name identifies the source in self-metrics and errors ("hwmon", "pdu:rack1").
	Name() string
	// Discover finds the source's devices. The collector calls it before the
	// first sample and again after a sample fails, so hot-plugged or reloaded
	// devices come back. An error wrapping errors.ErrUnsupported means the
	// hardware or its library is absent here; the collector still retries, at
	// the longest backoff.
	Discover(ctx context.Context) error
	// Sample appends one reading of every device, stamped t, to buf. It may
	// return points together with an error for the readings it could not take
	// (joined per-sensor errors); with no points and an error the source is
	// treated as failed and re-discovered after a backoff.
	Sample(ctx context.Context, t time.Time, buf []point.Point) ([]point.Point, error)
}

// Closer is implemented by sources holding resources (library handles, sockets).
type Closer interface {
	Close() error
}

// Sink receives each tick's points. The collector calls Write from one
// goroutine; points and their slices must not be kept after Write returns
// unless copied.
type Sink interface {
	Write(points []point.Point) error
	// Flush makes everything written so far durable (synced, or sent).
	Flush() error
	Close() error
}

// SelfReporter is implemented by sinks with a health of their own to
// record (the InfluxDB sink's spool depth, retries, losses). The collector
// asks every such sink on each tick, beside its own collector_tick and
// collector_source points, and writes what it appends to buf to every
// sink; a sink reports only when it has something new.
type SelfReporter interface {
	SelfMetrics(now time.Time, buf []point.Point) []point.Point
}

// StallReporter is implemented by sources that read on goroutines a
// blocking read can leave stuck in the kernel (hwmon, whose drivers wait
// on I2C): Stalled is how many reads are stuck now, each costing one
// reading a tick until it returns. The collector reports it in
// collector_source's stalled_reads.
type StallReporter interface {
	Stalled() int
}

// Describer is implemented by sources that can list what they discovered
// (chips, devices, endpoints), shown by `heatsink sensors`.
type Describer interface {
	Describe() []string
}
