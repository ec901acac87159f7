package agent

import (
	"fmt"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// DeliveryLossWindow is how long after an alert action last dropped or
// failed an alert /healthz stays degraded: long enough for a health check
// polling every few minutes to see it, short enough that one burst does
// not mark the node for good (the counters on /metrics keep the history).
const DeliveryLossWindow = 10 * time.Minute

// Delivery is what one alert action (a webhook or a command) has done
// with the alerts given to it, as /healthz shows it and /metrics exports
// it. The node adapts the alert engine's counters; they start again at 0
// when a reload builds a new engine, as a Prometheus counter may.
type Delivery struct {
	// Action is "webhook" or "command"; Name is the action's name.
	Action string `json:"action"`
	Name   string `json:"name"`
	// Queued wait for a worker; InFlight are being delivered now.
	Queued   int `json:"queued"`
	InFlight int `json:"in_flight"`
	// Sent were delivered; Coalesced were reminders not queued beside an
	// alert of the same series still waiting; Failed were given up on
	// after retries; Dropped gave way to newer alerts in a full queue.
	Sent      uint64 `json:"sent_total"`
	Coalesced uint64 `json:"coalesced_total"`
	Failed    uint64 `json:"failed_total"`
	Dropped   uint64 `json:"dropped_total"`
	// LastDropped and LastFailed are when the last loss of each kind
	// happened; absent if none did.
	LastDropped *time.Time `json:"last_dropped,omitempty"`
	LastFailed  *time.Time `json:"last_failed,omitempty"`
}

// SplitAction splits an alert engine's action ("webhook ops") into its
// kind and name.
func SplitAction(action string) (kind, name string) {
	kind, name, _ = strings.Cut(action, " ")
	return kind, name
}

// deliveryProblems says, for /healthz, which actions lost alerts within
// DeliveryLossWindow of now.
func deliveryProblems(ds []Delivery, now time.Time) []string {
	var out []string
	recent := func(t *time.Time) bool { return t != nil && now.Sub(*t) <= DeliveryLossWindow }
	for _, d := range ds {
		if recent(d.LastDropped) {
			out = append(out, fmt.Sprintf("alert %s %s: %d alerts dropped in all (its queue was full), the last %v ago",
				d.Action, d.Name, d.Dropped, now.Sub(*d.LastDropped).Round(time.Second)))
		}
		if recent(d.LastFailed) {
			out = append(out, fmt.Sprintf("alert %s %s: %d alerts failed in all (given up on after retries), the last %v ago",
				d.Action, d.Name, d.Failed, now.Sub(*d.LastFailed).Round(time.Second)))
		}
	}
	return out
}

// The alert actions' metrics, named as Prometheus names counts of things:
// the thing, its state, _total for a counter.
var (
	deliveryLabels = []string{"action", "name"}
	deliveryDescs  = struct{ sent, coalesced, failed, dropped, queued, inFlight *prometheus.Desc }{
		sent: prometheus.NewDesc("heatsink_alert_action_sent_total",
			"Alerts an alert action (webhook or command) delivered", deliveryLabels, nil),
		coalesced: prometheus.NewDesc("heatsink_alert_action_coalesced_total",
			"Still-firing reminders not queued because an alert of the same series still waited", deliveryLabels, nil),
		failed: prometheus.NewDesc("heatsink_alert_action_failed_total",
			"Alerts an alert action gave up on after its retries", deliveryLabels, nil),
		dropped: prometheus.NewDesc("heatsink_alert_action_dropped_total",
			"Alerts dropped, oldest first, from an alert action's full queue", deliveryLabels, nil),
		queued: prometheus.NewDesc("heatsink_alert_action_queued",
			"Alerts waiting in an alert action's queue", deliveryLabels, nil),
		inFlight: prometheus.NewDesc("heatsink_alert_action_in_flight",
			"Alerts an alert action is delivering now", deliveryLabels, nil),
	}
)

// deliveryCollector exports Options.Deliveries at scrape time.
type deliveryCollector func() []Delivery

func (f deliveryCollector) Describe(ch chan<- *prometheus.Desc) {
	d := deliveryDescs
	for _, x := range []*prometheus.Desc{d.sent, d.coalesced, d.failed, d.dropped, d.queued, d.inFlight} {
		ch <- x
	}
}

func (f deliveryCollector) Collect(ch chan<- prometheus.Metric) {
	d := deliveryDescs
	for _, x := range f() {
		ch <- prometheus.MustNewConstMetric(d.sent, prometheus.CounterValue, float64(x.Sent), x.Action, x.Name)
		ch <- prometheus.MustNewConstMetric(d.coalesced, prometheus.CounterValue, float64(x.Coalesced), x.Action, x.Name)
		ch <- prometheus.MustNewConstMetric(d.failed, prometheus.CounterValue, float64(x.Failed), x.Action, x.Name)
		ch <- prometheus.MustNewConstMetric(d.dropped, prometheus.CounterValue, float64(x.Dropped), x.Action, x.Name)
		ch <- prometheus.MustNewConstMetric(d.queued, prometheus.GaugeValue, float64(x.Queued), x.Action, x.Name)
		ch <- prometheus.MustNewConstMetric(d.inFlight, prometheus.GaugeValue, float64(x.InFlight), x.Action, x.Name)
	}
}
