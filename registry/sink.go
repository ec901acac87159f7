package registry

import (
	"cmp"
	"fmt"
	"slices"
	"time"

	"github.com/heatsink-hpc/heatsink/point"
)

// Sink is what a sink kind builds. It has the method set of
// collectors.Sink, so a registered sink is a collector's sink (and keeps
// any other method the collector looks for, such as SelfMetrics); it is
// declared again here for the reason Source is.
type Sink interface {
	Write(points []point.Point) error
	// Flush makes everything written so far durable (synced, or sent).
	Flush() error
	Close() error
}

// SinkKind is one kind of sink: a section under `sinks:` of the
// configuration and the constructor of its sink. The node builds every
// kind whose section is on, replaces one whose section a reload changed,
// and reports each in /healthz, so a sink's package needs nothing else.
type SinkKind struct {
	// Name is the key of the section under sinks: ("influx", "stdout").
	Name string
	// New returns a fresh section holding the defaults, as SourceKind's;
	// a pointer to a scalar type is fine (sinks.stdout: lp).
	New func() any
	// Validate checks a decoded section against the sampling interval.
	// Optional.
	Validate func(section any, interval time.Duration) error
	// Enabled reports whether the section asks for a sink at all (the
	// InfluxDB sink is on when its URL is set). It is asked without
	// building, so a command can refuse to collect to nowhere before
	// anything starts.
	Enabled func(section any) bool
	// Build opens the sink of an enabled section. An error stops a start;
	// on a reload the running sink stays instead.
	Build func(env Env, section any) (Sink, error)
	// Exclusive says that two sinks of this kind cannot be open at once
	// (the InfluxDB spool's lock): a reload then closes the old sink
	// before it opens the new one, points waiting in memory meanwhile,
	// and reopens the old one when the new one fails. Other sinks are
	// opened first and swapped between two ticks.
	Exclusive bool
	// Health describes a sink this kind built for /healthz's sinks map,
	// under Name. Optional: a sink without one is not listed (its write
	// errors show in the collector's own health).
	Health func(Sink) SinkHealth
}

// SinkHealth is a sink in /healthz: whether it delivers and, for a sink
// that spools what it cannot deliver yet, how much waits. A sink's package
// describes itself with it; the agent serves it as it is (agent.SinkHealth).
type SinkHealth struct {
	OK      bool   `json:"ok"`
	Problem string `json:"problem,omitempty"`
	// SpoolDir and the counts below are a spooling sink's; OldestUnsentAgeS
	// is how long the oldest point waiting in the spool has waited, absent
	// when none waits.
	SpoolDir         string   `json:"spool_dir,omitempty"`
	UnsentPoints     int64    `json:"unsent_points"`
	UnsentBytes      int64    `json:"unsent_bytes"`
	OldestUnsentAgeS *float64 `json:"oldest_unsent_age_s,omitempty"`
	SentPointsTotal  int64    `json:"sent_points_total"`
	RetriesTotal     int64    `json:"retries_total"`
	// DirectPointsTotal counts points the spool refused that went to the
	// destination directly; DroppedPointsTotal those that went nowhere.
	DirectPointsTotal   int64 `json:"direct_points_total"`
	DroppedPointsTotal  int64 `json:"dropped_points_total"`
	RejectedPointsTotal int64 `json:"rejected_points_total"`
}

var sinkKinds = map[string]SinkKind{}

// RegisterSink adds a kind of sink, and its section as sinks.NAME (the
// loader finds it among Sections). It panics on a second kind of the same
// name or a kind without New, Enabled or Build, as RegisterSource does.
func RegisterSink(k SinkKind) {
	if k.Name == "" || k.New == nil || k.Enabled == nil || k.Build == nil {
		panic(fmt.Sprintf("registry: sink kind %q needs a name, New, Enabled and Build", k.Name))
	}
	RegisterSection(Section{Key: "sinks." + k.Name, New: k.New, Validate: k.Validate})
	mu.Lock()
	defer mu.Unlock()
	if _, dup := sinkKinds[k.Name]; dup {
		panic("registry: a second sink kind named " + k.Name)
	}
	sinkKinds[k.Name] = k
}

// SinkKinds returns every registered kind of sink, by name: the order in
// which they are built and listed.
func SinkKinds() []SinkKind {
	mu.RLock()
	defer mu.RUnlock()
	out := make([]SinkKind, 0, len(sinkKinds))
	for _, k := range sinkKinds {
		out = append(out, k)
	}
	slices.SortFunc(out, func(a, b SinkKind) int { return cmp.Compare(a.Name, b.Name) })
	return out
}
