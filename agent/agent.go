// Package agent serves what a node agent (`heatsink collect` run as a
// service) shows the outside world over HTTP: /healthz with the state of
// the collector and each source, /metrics for Prometheus, and /alerts with
// the alert rules' states, which the Slurm health check reads.
//
// Everything it serves is read from the running collector and sinks at
// request time; nothing here samples or stores.
package agent

import (
	"encoding/json"
	"maps"
	"net/http"
	"runtime"
	"slices"
	"time"

	"github.com/heatsink-hpc/heatsink/collectors"
	"github.com/heatsink-hpc/heatsink/registry"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	pcollectors "github.com/prometheus/client_golang/prometheus/collectors"
)

// Options say what the handler serves. Collector is required.
type Options struct {
	Collector *collectors.Collector
	// Metrics is exported at /metrics (the prom.Sink); nil serves only the
	// agent's own process metrics there.
	Metrics prometheus.Collector
	// Alerts returns the alert rules' states for /alerts; nil serves an
	// empty list.
	Alerts func() []Rule
	// Sinks describes the sinks for /healthz, by name; one not OK makes
	// the agent degraded.
	Sinks func() map[string]SinkHealth
	// Jobs returns the Slurm jobs the agent is tagging points with.
	Jobs func() []string
	// Deliveries returns the alert actions' counters, for /metrics and
	// /healthz (see deliveries.go); nil exports none.
	Deliveries func() []Delivery
	// Config describes the configuration's reloads for /healthz; one
	// refused makes the agent degraded until a later one applies.
	Config func() *ConfigHealth
	// StalledAfter is how long without a tick makes /healthz answer 503;
	// default three intervals.
	StalledAfter time.Duration
	// Build is the binary's version for heatsink_build_info: the one
	// heatsink version prints, which the Prometheus version package (set
	// only by its own link-time flags) does not know.
	Build Build
	// Now is the clock; default time.Now.
	Now func() time.Time
}

// Build says which heatsink serves /metrics. Empty fields are unknown.
type Build struct {
	Version, Revision, GoVersion string
}

// Rule is one alert rule with the series whose condition holds, as /alerts
// serves it.
type Rule struct {
	Name     string  `json:"name"`
	Severity string  `json:"severity"`
	Field    string  `json:"field,omitempty"`
	Alerts   []Alert `json:"alerts"`
}

// Alert is one firing or pending series of a rule.
type Alert struct {
	Measurement string            `json:"measurement"`
	Tags        map[string]string `json:"tags"`
	Firing      bool              `json:"firing"`
	Since       time.Time         `json:"since"`
	Value       *float64          `json:"value,omitempty"`
	Threshold   *float64          `json:"threshold,omitempty"`
}

// Health is the body of /healthz.
type Health struct {
	// Status is ok, degraded (a source is failing; the agent still
	// records the others), starting (no tick yet: 503) or stalled (no
	// tick for StalledAfter: 503).
	Status      string                `json:"status"`
	LastTick    *time.Time            `json:"last_tick,omitempty"`
	IntervalS   float64               `json:"interval_s"`
	Ticks       int                   `json:"ticks"`
	MissedTicks int                   `json:"missed_ticks"`
	Points      int                   `json:"points"`
	SinkErrors  int                   `json:"sink_errors"`
	Sources     []SourceHealth        `json:"sources"`
	Sinks       map[string]SinkHealth `json:"sinks,omitempty"`
	Jobs        []string              `json:"jobs,omitempty"`
	// AlertDeliveries are the alert actions' counters; an action that lost
	// alerts within DeliveryLossWindow makes the status degraded.
	AlertDeliveries []Delivery    `json:"alert_deliveries,omitempty"`
	Config          *ConfigHealth `json:"config,omitempty"`
	// Problems say why the status is degraded.
	Problems []string `json:"problems,omitempty"`
}

// ConfigHealth is the configuration file's reloads (SIGHUP) in /healthz.
type ConfigHealth struct {
	Path         string     `json:"path,omitempty"`
	ReloadsTotal int        `json:"reloads_total"`
	RefusedTotal int        `json:"refused_total"`
	LastReload   *time.Time `json:"last_reload,omitempty"`
	// Refused says why the latest reload kept the running configuration
	// (a file caught mid-write, one that does not parse, one that drops a
	// sink by not mentioning it); empty once a later reload applied.
	Refused string `json:"refused,omitempty"`
}

// SinkHealth is one sink in /healthz, as the sink's own package reports it
// through the registry: one type, so what a sink says and what /healthz
// (and slurm's health check) reads cannot drift apart.
type SinkHealth = registry.SinkHealth

// SourceHealth is one source in /healthz.
type SourceHealth struct {
	Name        string     `json:"name"`
	OK          bool       `json:"ok"`
	Unavailable bool       `json:"unavailable,omitempty"`
	LastError   string     `json:"last_error,omitempty"`
	LastOK      *time.Time `json:"last_ok,omitempty"`
	Errors      uint64     `json:"errors_total"`
	Timeouts    uint64     `json:"timeouts_total"`
}

// Handler returns the agent's HTTP handler: /healthz, /metrics, /alerts.
func Handler(o Options) http.Handler {
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.StalledAfter <= 0 {
		o.StalledAfter = 3 * o.Collector.Interval()
	}
	reg := prometheus.NewRegistry()
	// The agent's own cost (CPU, memory, goroutines) beside what it measures.
	reg.MustRegister(pcollectors.NewProcessCollector(pcollectors.ProcessCollectorOpts{Namespace: "heatsink_agent"}),
		pcollectors.NewGoCollector(), buildInfo(o.Build))
	reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "heatsink_collector_last_tick_timestamp_seconds",
		Help: "When the collector last wrote a tick (Unix time); 0 before the first",
	}, func() float64 {
		if t := o.Collector.LastTick(); !t.IsZero() {
			return float64(t.UnixNano()) / 1e9
		}
		return 0
	}))
	if o.Metrics != nil {
		reg.MustRegister(o.Metrics)
	}
	if o.Deliveries != nil {
		reg.MustRegister(deliveryCollector(o.Deliveries))
	}
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError}))
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		h := health(o)
		code := http.StatusOK
		if h.Status == "stalled" || h.Status == "starting" {
			code = http.StatusServiceUnavailable
		}
		writeJSON(w, code, h)
	})
	mux.HandleFunc("GET /alerts", func(w http.ResponseWriter, r *http.Request) {
		var rules []Rule
		if o.Alerts != nil {
			rules = o.Alerts()
		}
		if rules == nil {
			rules = []Rule{} // a list, also without rules
		}
		writeJSON(w, http.StatusOK, rules)
	})
	return mux
}

// buildInfo is heatsink_build_info, labelled as the Prometheus version
// package labels it (version, revision, goversion, goos, goarch), so
// dashboards written for other exporters' build_info read it too.
func buildInfo(b Build) prometheus.Collector {
	goVersion := b.GoVersion
	if goVersion == "" {
		goVersion = runtime.Version()
	}
	return prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "heatsink_build_info",
		Help: "A metric with a constant '1' value labeled by version, revision, goversion, goos and goarch from which heatsink was built (heatsink version)",
		ConstLabels: prometheus.Labels{"version": b.Version, "revision": b.Revision,
			"goversion": goVersion, "goos": runtime.GOOS, "goarch": runtime.GOARCH},
	}, func() float64 { return 1 })
}

func health(o Options) Health {
	c := o.Collector
	st := c.Stats()
	h := Health{Status: "ok", IntervalS: c.Interval().Seconds(), Ticks: st.Ticks, MissedTicks: st.MissedTicks,
		Points: st.Points, SinkErrors: st.SinkErrors, Sources: []SourceHealth{}}
	last := c.LastTick()
	if !last.IsZero() {
		h.LastTick = &last
	}
	for _, s := range c.SourceStatus() {
		sh := SourceHealth{Name: s.Name, OK: s.OK, Unavailable: s.Unavailable, LastError: s.LastError, Errors: s.Errors, Timeouts: s.Timeouts}
		if !s.LastOK.IsZero() {
			t := s.LastOK
			sh.LastOK = &t
		}
		if !s.OK && !s.Unavailable && h.Ticks > 0 {
			h.Status = "degraded"
			h.Problems = append(h.Problems, "source "+s.Name+": "+s.LastError)
		}
		h.Sources = append(h.Sources, sh)
	}
	if o.Sinks != nil {
		h.Sinks = o.Sinks()
		for _, name := range slices.Sorted(maps.Keys(h.Sinks)) {
			if sk := h.Sinks[name]; !sk.OK {
				h.Status = "degraded"
				h.Problems = append(h.Problems, "sink "+name+": "+sk.Problem)
			}
		}
	}
	// A sink that failed within the last few ticks (a run directory on a
	// full disk) is a fault even if the next write may succeed.
	if !st.LastSinkError.IsZero() && o.Now().Sub(st.LastSinkError) <= o.StalledAfter {
		h.Status = "degraded"
		h.Problems = append(h.Problems, "sink write failed: "+st.LastSinkErrorMsg)
	}
	if o.Jobs != nil {
		h.Jobs = o.Jobs()
	}
	if o.Deliveries != nil {
		h.AlertDeliveries = o.Deliveries()
		if p := deliveryProblems(h.AlertDeliveries, o.Now()); len(p) > 0 {
			h.Status = "degraded"
			h.Problems = append(h.Problems, p...)
		}
	}
	if o.Config != nil {
		if h.Config = o.Config(); h.Config != nil && h.Config.Refused != "" {
			h.Status = "degraded"
			h.Problems = append(h.Problems, "configuration not reloaded: "+h.Config.Refused)
		}
	}
	switch {
	case last.IsZero():
		h.Status = "starting"
	case o.Now().Sub(last) > o.StalledAfter:
		h.Status = "stalled"
	}
	return h
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.Encode(v)
}
