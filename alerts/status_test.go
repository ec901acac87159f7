package alerts_test

import (
	"testing"
	"time"

	"github.com/heatsink-hpc/heatsink/alerts"
	"github.com/heatsink-hpc/heatsink/point"
)

// Status shows, per rule, the series pending and firing at this moment: what
// a metrics endpoint and a node health check read.
func TestStatusListsPendingAndFiringSeries(t *testing.T) {
	var now time.Time
	e, err := alerts.NewEngine(parseRules(t, `
alerts:
  rules:
    - {name: hot, severity: critical, measurement: gpu, field: temp_c, for: 2s, threshold: {op: ">", value: 85, margin: 2}}
    - {name: pump_off, measurement: tank, field: pump1_on, is: false}`), alerts.Options{Logger: quietLogger(), Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	step := func(sec int, t0c, t1c float64) []alerts.RuleStatus {
		t.Helper()
		now = t0.Add(time.Duration(sec) * time.Second)
		pts := []point.Point{gpu(0, f{"temp_c", t0c}), gpu(1, f{"temp_c", t1c}), tank(f{"pump1_on", true})}
		for i := range pts {
			pts[i].Time = now
		}
		if err := e.Write(pts); err != nil {
			t.Fatal(err)
		}
		return e.Status()
	}
	st := step(0, 90, 70)
	if len(st) != 2 || st[0].Name != "hot" || st[0].Severity != "critical" || st[0].Field != "temp_c" || st[1].Name != "pump_off" || st[1].Severity != "warning" {
		t.Fatalf("rules %+v", st)
	}
	if a := st[0].Alerts; len(a) != 1 || a[0].Firing || a[0].Measurement != "gpu" || tagOf(a[0], "gpu") != "0" || !a[0].Since.Equal(t0) {
		t.Fatalf("at 0 s GPU 0 should be pending since t0: %+v", a)
	}
	st = step(2, 91, 70)
	if a := st[0].Alerts; len(a) != 1 || !a[0].Firing || !a[0].HasValue || a[0].Value != 91 || a[0].Threshold != 85 || !a[0].Since.Equal(now) {
		t.Fatalf("at 2 s GPU 0 should fire at 91 > 85: %+v", a)
	}
	if len(st[1].Alerts) != 0 {
		t.Errorf("pump rule lists %+v while the pump runs", st[1].Alerts)
	}
	st = step(3, 84, 70) // within the 2 °C margin: still firing
	if a := st[0].Alerts; len(a) != 1 || !a[0].Firing {
		t.Fatalf("at 84 °C (margin 2) GPU 0 should still fire: %+v", a)
	}
	st = step(4, 82, 70)
	if a := st[0].Alerts; len(a) != 0 {
		t.Fatalf("cleared at 82 °C, yet listed: %+v", a)
	}
}

func tagOf(a alerts.AlertStatus, key string) string {
	for _, t := range a.Tags {
		if t.Key == key {
			return t.Value
		}
	}
	return ""
}
