// Package collectors is heatsink's sampling engine and its sinks: it ticks at
// a fixed interval aligned to the wall clock, samples every source
// concurrently under a deadline, and hands each tick's points to the sinks
// (the local run store, stdout, InfluxDB).
//
// A slow, hung or failing source loses only its own sample for that tick; it
// is retried with backoff and re-discovered, never disabled for the rest of a
// run.
package collectors
