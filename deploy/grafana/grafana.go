// Package grafana holds heatsink's Grafana dashboard (heatsink.json: an
// InfluxDB data source, InfluxQL queries) so that its queries can be checked
// against the data model heatsink writes.
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
