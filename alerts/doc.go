// Package alerts evaluates heatsink's alert rules on every tick's points and
// carries out their actions: it records each firing and clearing, notifies
// webhooks and commands, and guards a running job by pausing or stopping it
// when a hotspot approaches its limit.
//
// The Engine is a collectors.Sink, so it sees exactly what the store sees, as
// it is sampled; alert points go back into the store through Options.Emit.
//
// # Rules
//
// Rules live in the alerts: section of the configuration (configs/alerts.yaml
// holds the defaults and the same description as YAML comments):
//
//	alerts:
//	  webhooks:
//	    ops: {url: {env: HEATSINK_SLACK_URL}, format: slack}
//	  commands:
//	    page: {argv: [/usr/local/bin/page-oncall], timeout: 10s}
//	  rules:
//	    - name: gpu_core_near_slowdown
//	      summary: GPU core within 5 °C of its slowdown temperature
//	      severity: critical              # info | warning (default) | critical
//	      measurement: gpu                # selector: measurement, field, tags
//	      field: temp_c
//	      tags: {gpu: "0"}                # exact; tags_regexp: {model: "H100.*"} matches whole values
//	      threshold: {op: ">=", value: slowdown_c - 5, margin: 2}
//	      for: 5s
//	      actions: [log, point, "webhook:ops", pause]
//
// A rule selects series (a measurement, one of its fields, tag filters; a
// series is a measurement with one set of tags, as in InfluxDB) and has
// exactly one condition:
//
//   - threshold: {op, value, margin | clear}: op is > >= < <= == !=. value is
//     a number or an expression (numbers, field names, + - * and parentheses)
//     on the device-reported limits of the same series: "slowdown_c - 5",
//     "mem_max_c - 5", "warn_c", "setpoint_c + 3". A limit is taken from the
//     point being judged or, when absent there (NVML thresholds are read once),
//     from the series' latest point that had it; a series that never reported
//     it is not judged (logged once). margin or clear is the hysteresis: a
//     firing alert clears only once the field is back past threshold ∓ margin,
//     or past the clear expression.
//   - rate: {op, per_min, window, margin}: the slope of a least-squares line
//     over the last window (default 1m), in field units per minute.
//   - forecast: {op, value, within, window, clear_within}: fires when the line
//     fitted over window reaches value within the horizon `within` (already
//     past it counts as 0 s). Its alert value is the forecast in seconds.
//   - is: true|false for boolean fields; equals / not_equals for strings;
//     any_bits: MASK for integer bitmasks (NVML clock event reasons).
//   - silent: D: a series produced no point (with field: no point carrying
//     it) for longer than D. With no measurement it watches every sensor
//     measurement. Only series seen at least once can fall silent.
//   - blind_spot: {reference, window, rising_per_min, still_per_min,
//     difference}: the component the rule selects (a GPU, a CPU package)
//     rises faster than rising_per_min while the reference series (the tank's
//     coolant_temp_c) moves by less than still_per_min either way, or the
//     component runs difference or more above the reference. This is the
//     immersion blind spot: the tank's controller sees only the coolant.
//
// Rates, forecasts and blind spots are judged once their samples span half
// the window, so the first readings of a series do not fire them. `for`
// (default 0) is how long the condition must hold before the rule fires.
//
// Names are checked at load against docs/data-model.md: a measurement, field,
// tag or limit no source writes is an error, as are thresholds no reading
// can cross (temperatures outside -50..200 °C, with a limit tried at 90 °C;
// percentages outside 0..100), a negative for or margin, and windows holding
// fewer than 2 samples at the sampling interval. Errors are *Error values
// carrying the path of the key, which the configuration loader turns into
// FILE:LINE.
//
// # Actions
//
// Every firing and clearing is recorded whatever the actions: an `alert`
// point (tags rule, severity, measurement and the series' own; fields state,
// value, threshold, message), an event for run.json (Options.OnEvent: kinds
// alert_fired and alert_cleared) and a log line (level by severity). log and
// point may be listed for clarity. Further actions:
//
//   - webhook:NAME posts JSON (generic; slack: {"text": ...}; alertmanager:
//     the /api/v2/alerts array, with endsAt on clearing and resent every
//     repeat, 1m by default, while firing) with a per-attempt timeout,
//     retrying network errors, 5xx and 429 with a doubling backoff.
//   - command:NAME runs argv in its own process group with the alert in
//     HEATSINK_ALERT_* variables (RULE, STATE, SEVERITY, MEASUREMENT, FIELD,
//     SERIES, VALUE, THRESHOLD, MESSAGE, TIME, STARTS_AT, TAG_<KEY>), killed
//     at its timeout.
//   - pause calls Job.Pause when the rule fires and Job.Resume when it clears
//     and no other pause rule still fires; stop calls Job.Stop. Guard actions
//     are recorded as guard_pause, guard_resume and guard_stop events; with no
//     job attached they are logged as not applicable.
//   - hold:COMPONENT<=SET_C (hold:gpu_core<=65) switches heatsink run's
//     hold on when the rule fires (Holder.Hold), for the rest of the load:
//     the job is paced so the component settles at the set point, as with
//     --hold (docs/hold.md). Recorded as a guard_hold event.
//
// Webhooks, commands and Stop run in the background, so a tick never waits
// on the network. Each webhook and command has its own queue, drained by
// Options.MaxInFlight workers (default 4): a burst of alerts in one tick is
// delivered in full, and a slow receiver holds a fixed number of goroutines
// and delays no other destination. Alertmanager's worker posts what is
// queued as one list (up to 256 alerts); generic and Slack bodies carry one
// alert each. A queue holds at most Options.QueueSize alerts (default 1024);
// past it, while a receiver is down for long, the oldest alert is dropped,
// logged and counted: Engine.Deliveries reports, per action, what is queued,
// in flight, sent, failed and dropped. Close lets the queues drain for up to
// Options.CloseTimeout, then cancels and logs what was not sent.
package alerts
