// Package prom exposes the latest reading of every sensor to Prometheus: a
// collectors.Sink that keeps the last value of each series and a
// prometheus.Collector that turns them into metrics at scrape time, named in
// Prometheus style with units (heatsink_gpu_temperature_celsius{gpu,uuid,
// host,model}, energy as heatsink_gpu_energy_joules_total), together with
// the states of the alert rules.
//
// Names follow docs/data-model.md mechanically (see name): the measurement,
// then the field with its abbreviations spelt out and its unit suffix
// turned into the Prometheus unit. Tags become labels, except that the job
// tag (a Slurm job id) is exported as slurm_job, since Prometheus claims
// job for itself. A series that stops reporting (a hot-unplugged device, a
// PDU that went away) is dropped once it has been silent for
// Options.Staleness, so a scrape never shows a stale reading as current.
package prom

import (
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/heatsink-hpc/heatsink/point"
	"github.com/influxdata/line-protocol/v2/lineprotocol"
	"github.com/prometheus/client_golang/prometheus"
)

// DefaultStaleness is how long a series may be silent before it is dropped.
// It is longer than a facility source's backoff at its first failures and
// shorter than anyone would trust a temperature for.
const DefaultStaleness = time.Minute

// Options configure a Sink. All are optional.
type Options struct {
	// Staleness drops a series silent for longer; default DefaultStaleness.
	Staleness time.Duration
	// Alerts returns the alert rules' states at scrape time (the CLI adapts
	// alerts.Engine.Status); nil exports no alert metrics.
	Alerts func() []AlertRule
	// Now is the clock; default time.Now.
	Now func() time.Time
}

// AlertRule is one alert rule and its series whose condition holds.
type AlertRule struct {
	Name, Severity string
	Alerts         []Alert
}

// Alert is one series of a rule, firing or pending.
type Alert struct {
	Measurement string
	Tags        []point.Tag
	Firing      bool
}

// Sink keeps the latest reading of every series written to it and exposes
// them as a prometheus.Collector. It is safe for concurrent use: the
// collector writes while Prometheus scrapes.
type Sink struct {
	opts Options

	mu     sync.Mutex
	series map[string]*series
	// current maps a series' key without its job tag to its key with it:
	// when the job on the node changes, the series of the old job is
	// dropped at once rather than exported, frozen, until it is stale.
	current  map[string]string
	families map[familyKey]*family // nil: not exported
	descs    map[string]*prometheus.Desc
	key      strings.Builder
	tags     []point.Tag
}

type familyKey struct {
	measurement, field string
	str                bool
}

// series is one measurement with one set of tags.
type series struct {
	labels, values []string
	readings       map[string]*reading // by field
}

type reading struct {
	fam     *family
	desc    *prometheus.Desc
	value   float64
	info    string // the value of a string field
	updated time.Time
}

// New returns an empty Sink.
func New(o Options) *Sink {
	if o.Staleness <= 0 {
		o.Staleness = DefaultStaleness
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return &Sink{opts: o, series: map[string]*series{}, current: map[string]string{}, families: map[familyKey]*family{}, descs: map[string]*prometheus.Desc{}}
}

// Write records the points as the latest readings of their series.
func (s *Sink) Write(points []point.Point) error {
	now := s.opts.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	for i := range points {
		p := &points[i]
		if skippedMeasurements[p.Measurement] || len(p.Fields) == 0 {
			continue
		}
		ser := s.seriesOf(p)
		for _, f := range p.Fields {
			var v float64
			var str string
			kind := f.Value.Kind()
			switch kind {
			case lineprotocol.String:
				str = f.Value.StringV()
				v = 1
			default:
				var ok bool
				if v, ok = point.Float(f.Value); !ok {
					continue
				}
			}
			fam := s.family(p.Measurement, f.Key, kind == lineprotocol.String)
			if fam == nil {
				continue
			}
			r := ser.readings[f.Key]
			if r == nil || r.fam != fam {
				r = &reading{fam: fam, desc: s.desc(fam, ser.labels)}
				ser.readings[f.Key] = r
			}
			r.value, r.info, r.updated = v*fam.scale, str, now
		}
	}
	return nil
}

// seriesOf finds or makes the series of p; the tags are copied, as a sink
// must not keep what Write is given.
func (s *Sink) seriesOf(p *point.Point) *series {
	s.tags = append(s.tags[:0], p.Tags...)
	slices.SortFunc(s.tags, func(a, b point.Tag) int { return strings.Compare(a.Key, b.Key) })
	s.key.Reset()
	s.key.WriteString(p.Measurement)
	for _, t := range s.tags {
		s.key.WriteByte(0)
		s.key.WriteString(t.Key)
		s.key.WriteByte(0)
		s.key.WriteString(t.Value)
	}
	if ser, ok := s.series[s.key.String()]; ok {
		return ser
	}
	base := s.baseKey(p.Measurement)
	if old, ok := s.current[base]; ok && old != s.key.String() {
		delete(s.series, old)
	}
	s.current[base] = s.key.String()
	ser := &series{readings: map[string]*reading{}}
	seen := map[string]bool{}
	for _, t := range s.tags {
		l := labelName(t.Key)
		if t.Value == "" || seen[l] {
			continue
		}
		seen[l] = true
		ser.labels = append(ser.labels, l)
		ser.values = append(ser.values, t.Value)
	}
	s.series[s.key.String()] = ser
	return ser
}

// baseKey is the series key of the sorted tags in s.tags without the job
// and jobs tags.
func (s *Sink) baseKey(measurement string) string {
	var b strings.Builder
	b.WriteString(measurement)
	for _, t := range s.tags {
		if t.Key == "job" || t.Key == "jobs" {
			continue
		}
		b.WriteByte(0)
		b.WriteString(t.Key)
		b.WriteByte(0)
		b.WriteString(t.Value)
	}
	return b.String()
}

func (s *Sink) family(measurement, field string, str bool) *family {
	k := familyKey{measurement, field, str}
	if f, ok := s.families[k]; ok {
		return f
	}
	var fp *family
	if f, ok := name(measurement, field, str); ok {
		fp = &f
	}
	s.families[k] = fp
	return fp
}

// desc returns the descriptor of a family with a series' label names. A
// string field's info metric carries the value as one more label.
func (s *Sink) desc(f *family, labels []string) *prometheus.Desc {
	if f.info {
		labels = append(slices.Clip(labels), f.field)
	}
	k := f.name + "\x00" + strings.Join(labels, "\x00")
	if d, ok := s.descs[k]; ok {
		return d
	}
	d := prometheus.NewDesc(f.name, f.help, labels, nil)
	s.descs[k] = d
	return d
}

// Flush has nothing to make durable.
func (s *Sink) Flush() error { return nil }

// Close forgets every reading.
func (s *Sink) Close() error {
	s.mu.Lock()
	s.series = map[string]*series{}
	s.current = map[string]string{}
	s.mu.Unlock()
	return nil
}

// Describe sends nothing: the series are known only as they arrive, so the
// Sink is an unchecked collector.
func (s *Sink) Describe(chan<- *prometheus.Desc) {}

const alertHelp = "1 for every series of an alert rule whose condition holds: alertstate pending (for not yet elapsed) or firing, as Prometheus' ALERTS"

var (
	alertDesc      = prometheus.NewDesc(Namespace+"_alert", alertHelp, nil, nil)
	ruleFiringDesc = prometheus.NewDesc(Namespace+"_alert_rule_firing_series",
		"Series of the alert rule firing now (0 when none)", []string{"rule", "severity"}, nil)
)

// Collect sends every reading updated within the staleness window, and the
// alert states; older readings are dropped for good.
func (s *Sink) Collect(ch chan<- prometheus.Metric) {
	now := s.opts.Now()
	s.mu.Lock()
	for key, ser := range s.series {
		for field, r := range ser.readings {
			if now.Sub(r.updated) > s.opts.Staleness {
				delete(ser.readings, field)
				continue
			}
			values := ser.values
			if r.fam.info {
				values = append(slices.Clip(values), r.info)
			}
			if m, err := prometheus.NewConstMetric(r.desc, r.fam.typ, r.value, values...); err == nil {
				ch <- m
			} else {
				ch <- prometheus.NewInvalidMetric(r.desc, err)
			}
		}
		if len(ser.readings) == 0 {
			delete(s.series, key)
		}
	}
	s.mu.Unlock()
	if s.opts.Alerts != nil {
		s.collectAlerts(ch)
	}
}

func (s *Sink) collectAlerts(ch chan<- prometheus.Metric) {
	for _, r := range s.opts.Alerts() {
		firing := 0
		for _, a := range r.Alerts {
			state := "pending"
			if a.Firing {
				state = "firing"
				firing++
			}
			labels := []string{"rule", "severity", "alertstate", "measurement"}
			values := []string{r.Name, r.Severity, state, a.Measurement}
			seen := map[string]bool{"rule": true, "severity": true, "alertstate": true, "measurement": true}
			for _, t := range a.Tags {
				l := labelName(t.Key)
				if t.Value == "" || seen[l] {
					continue
				}
				seen[l] = true
				labels, values = append(labels, l), append(values, t.Value)
			}
			// The label set varies with the series, so each has its own desc.
			d := prometheus.NewDesc(Namespace+"_alert", alertHelp, labels, nil)
			if m, err := prometheus.NewConstMetric(d, prometheus.GaugeValue, 1, values...); err == nil {
				ch <- m
			} else {
				ch <- prometheus.NewInvalidMetric(alertDesc, err)
			}
		}
		ch <- prometheus.MustNewConstMetric(ruleFiringDesc, prometheus.GaugeValue, float64(firing), r.Name, r.Severity)
	}
}
