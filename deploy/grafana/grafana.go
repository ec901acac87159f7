// Package grafana holds heatsink's Grafana dashboards so that their queries
// can be checked against the data model heatsink writes: heatsink.json for
// an InfluxDB data source (InfluxQL), heatsink-prometheus.json for a
// Prometheus that scrapes heatsink's agents, the DCGM exporter or
// node_exporter (PromQL).
//
// Import heatsink.json in Grafana (Dashboards, New, Import) and choose the
// InfluxDB data source heatsink's agents write to; with InfluxDB 2.x, map the
// bucket to a database and retention policy (DBRP) so InfluxQL can read it.
package grafana

import _ "embed"

// Dashboard is heatsink.json.
//
//go:embed heatsink.json
var Dashboard []byte

// PrometheusDashboard is heatsink-prometheus.json.
//
//go:embed heatsink-prometheus.json
var PrometheusDashboard []byte
