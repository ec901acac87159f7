package alerts_test

import (
	"io/fs"
	"strings"
	"testing"
	"time"

	"github.com/heatsink-hpc/heatsink/alerts"
	"github.com/heatsink-hpc/heatsink/configs"
)

// A good rule sits first in every case, so the bad one's line is not the
// section's line by accident.
const goodRule = `alerts:
  rules:
    - name: ok
      measurement: gpu
      field: temp_c
      threshold: {op: ">", value: slowdown_c - 5}
`

func TestBadRulesAreRejectedWithFileAndLine(t *testing.T) {
	tests := []struct {
		name, rule string
		line       string // "c.yaml:N:"
		want       string
	}{
		// yaml.v3 reports parser errors (an unclosed "[") one line early, at the
		// 0-based line of their context; scanner errors have the right line.
		{"bad YAML syntax", "    - name: x\n      measurement: gpu: 3\n", "c.yaml:8:", "mapping values are not allowed"},
		{"unknown key", "    - name: x\n      measurment: gpu\n", "c.yaml:8:", "measurment"},
		{"wrong type", "    - {name: x, measurement: gpu, field: temp_c, for: soon, threshold: {op: \">\", value: 1}}\n", "c.yaml:7:", "soon"},
		{"unknown measurement", "    - name: x\n      measurement: gpus\n      field: temp_c\n      threshold: {op: \">\", value: 80}\n", "c.yaml:8:",
			`alerts.rules.1.measurement: no source writes measurement "gpus"`},
		{"unknown field", "    - name: x\n      measurement: gpu\n      field: temperature_c\n      threshold: {op: \">\", value: 80}\n", "c.yaml:9:",
			`no source writes field "temperature_c" in gpu points (docs/data-model.md; its fields: clock_event_reasons, energy_j,`},
		{"field of another measurement", "    - name: x\n      measurement: nvme\n      field: slowdown_c\n      threshold: {op: \">\", value: 80}\n", "c.yaml:9:",
			`no source writes field "slowdown_c" in nvme points (docs/data-model.md; its fields: crit_c, temp_c, warn_c)`},
		{"threshold on a string", "    - name: x\n      measurement: tune_evaluation\n      field: record\n      threshold: {op: \">\", value: 1}\n", "c.yaml:9:",
			`threshold needs a number field; tune_evaluation.record is`},
		{"unknown tag", "    - name: x\n      measurement: gpu\n      field: temp_c\n      tags: {chip: x}\n      threshold: {op: \">\", value: 80}\n", "c.yaml:10:",
			`gpu points have no tag "chip"`},
		{"unknown limit in the expression", "    - name: x\n      measurement: nvme\n      field: temp_c\n      threshold: {op: \">\", value: slowdown_c - 5}\n", "c.yaml:10:",
			`"slowdown_c" is not a field of nvme points`},
		{"bad expression", "    - name: x\n      measurement: gpu\n      field: temp_c\n      threshold:\n        op: \">\"\n        value: slowdown_c -\n", "c.yaml:12:",
			"alerts.rules.1.threshold.value: in \"slowdown_c -\" at column 13"},
		{"bad op", "    - name: x\n      measurement: gpu\n      field: temp_c\n      threshold: {op: \"=>\", value: 80}\n", "c.yaml:10:", `op "=>" is not one of`},
		{"temperature above 200 °C", "    - name: x\n      measurement: gpu\n      field: temp_c\n      threshold: {op: \">\", value: 250}\n", "c.yaml:10:",
			"threshold 250 °C is impossible for a temperature"},
		{"temperature below -50 °C", "    - name: x\n      measurement: tank\n      field: coolant_temp_c\n      threshold: {op: \"<\", value: -60}\n", "c.yaml:10:",
			"impossible for a temperature"},
		{"impossible limit expression", "    - name: x\n      measurement: gpu\n      field: temp_c\n      threshold: {op: \">\", value: slowdown_c + 150}\n", "c.yaml:10:",
			"240 °C (slowdown_c + 150 with a limit of 90 °C) is impossible"},
		{"percentage above 100", "    - name: x\n      measurement: gpu\n      field: util_pct\n      threshold: {op: \">\", value: 120}\n", "c.yaml:10:", "impossible for a percentage"},
		{"negative for", "    - name: x\n      measurement: gpu\n      field: temp_c\n      for: -5s\n      threshold: {op: \">\", value: 80}\n", "c.yaml:10:", "-5s is negative"},
		{"forecast window under 2 samples", "    - name: x\n      measurement: gpu\n      field: temp_c\n      forecast: {op: \">=\", value: slowdown_c, within: 1m, window: 1s}\n", "c.yaml:10:",
			"window 1s holds fewer than 2 samples at the 1s interval"},
		{"forecast without a horizon", "    - name: x\n      measurement: gpu\n      field: temp_c\n      forecast: {op: \">=\", value: slowdown_c}\n", "c.yaml:10:", "within must be a positive horizon"},
		{"rate window under 2 samples", "    - name: x\n      measurement: gpu\n      field: temp_c\n      rate: {op: \">\", per_min: 5, window: 500ms}\n", "c.yaml:10:", "fewer than 2 samples"},
		{"silent within one interval", "    - name: x\n      silent: 1s\n", "c.yaml:8:", "not longer than the sampling interval"},
		{"clear beyond the threshold", "    - name: x\n      measurement: gpu\n      field: temp_c\n      threshold: {op: \">\", value: slowdown_c - 5, clear: slowdown_c}\n", "c.yaml:10:",
			"the alert could never clear"},
		{"negative margin", "    - name: x\n      measurement: gpu\n      field: temp_c\n      threshold: {op: \">\", value: 80, margin: -1}\n", "c.yaml:10:", "margin -1 is negative"},
		{"two conditions", "    - name: x\n      measurement: gpu\n      field: throttle_thermal\n      is: true\n      equals: x\n", "c.yaml:10:", "has equals, is"},
		{"no condition", "    - name: x\n      measurement: gpu\n      field: temp_c\n", "c.yaml:7:", "a rule needs one condition"},
		{"is on a number", "    - name: x\n      measurement: gpu\n      field: temp_c\n      is: true\n", "c.yaml:9:", "is needs a boolean field; gpu.temp_c is a number"},
		{"threshold on a string", "    - name: x\n      measurement: tank\n      field: mode\n      threshold: {op: \">\", value: 1}\n", "c.yaml:9:", "tank.mode is a string"},
		{"bad severity", "    - name: x\n      severity: urgent\n      silent: 5s\n", "c.yaml:8:", `"urgent" is not one of info, warning, critical`},
		{"duplicate name", "    - name: ok\n      silent: 5s\n", "c.yaml:7:", "also the name of rule 0"},
		{"unknown action", "    - name: x\n      silent: 5s\n      actions: [log, email]\n", "c.yaml:9:", `"email" is not an action`},
		{"webhook not defined", "    - name: x\n      silent: 5s\n      actions:\n        - log\n        - webhook:ops\n", "c.yaml:11:", `no webhook named "ops"`},
		{"pause and stop", "    - name: x\n      silent: 5s\n      actions: [pause, stop]\n", "c.yaml:9:", "pause and stop together"},
		{"bad tag regexp", "    - name: x\n      measurement: hwmon\n      field: temp_c\n      tags_regexp: {class: \"cpu(\"}\n      threshold: {op: \">\", value: 80}\n", "c.yaml:10:", "bad regular expression"},
		{"blind spot without a clause", "    - name: x\n      measurement: gpu\n      field: temp_c\n      blind_spot:\n        reference: {measurement: tank, field: coolant_temp_c}\n", "c.yaml:10:",
			"blind_spot needs rising_per_min"},
		{"blind spot reference unknown", "    - name: x\n      measurement: gpu\n      field: temp_c\n      blind_spot:\n        reference: {measurement: tanks, field: coolant_temp_c}\n        difference: 40\n", "c.yaml:11:",
			`no source writes measurement "tanks"`},
		{"blind spot reference not a number", "    - name: x\n      measurement: gpu\n      field: temp_c\n      blind_spot:\n        reference: {measurement: tank, field: mode}\n        difference: 40\n", "c.yaml:11:",
			`tank.mode is a string, not a number`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := configs.Parse("c.yaml", []byte(goodRule+tt.rule))
			if err == nil {
				t.Fatal("accepted")
			}
			if !strings.HasPrefix(err.Error(), tt.line) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %q\nwant %s ... %s", err, tt.line, tt.want)
			}
		})
	}
}

func TestWebhookAndCommandErrorsNameTheirLine(t *testing.T) {
	tests := []struct{ doc, want string }{
		{"alerts:\n  webhooks:\n    ops:\n      url: ftp://example.com/x\n", `c.yaml:4: alerts.webhooks.ops.url: URL scheme "ftp"`},
		{"alerts:\n  webhooks:\n    ops:\n      url: http://example.com/x\n      format: teams\n", `c.yaml:5: alerts.webhooks.ops.format: "teams" is not one of`},
		{"alerts:\n  webhooks:\n    ops:\n      format: slack\n", "c.yaml:3: alerts.webhooks.ops: a webhook needs url"},
		{"alerts:\n  commands:\n    page:\n      timeout: 1s\n", "c.yaml:3: alerts.commands.page.argv: a command needs argv"},
		{"alerts:\n  webhooks:\n    ops:\n      url: http://example.com/x\n      retries: 99\n", "c.yaml:5: alerts.webhooks.ops.retries"},
	}
	for _, tt := range tests {
		_, err := configs.Parse("c.yaml", []byte(tt.doc))
		if err == nil || !strings.HasPrefix(err.Error(), tt.want) {
			t.Errorf("%q: error %v, want %s", tt.doc, err, tt.want)
		}
	}
}

func TestWebhookURLIsNotPrinted(t *testing.T) {
	// Slack webhook URLs are credentials: neither errors nor run.json show them.
	_, err := configs.Parse("c.yaml", []byte("alerts:\n  webhooks:\n    ops:\n      url: \"https://hooks.example.com/T0/%zz-SECRET\"\n"))
	if err == nil || strings.Contains(err.Error(), "SECRET") {
		t.Errorf("error %v", err)
	}
	cfg, err := configs.Parse("c.yaml", []byte("alerts:\n  webhooks:\n    ops:\n      url: https://hooks.example.com/T0/SECRET\n"))
	if err != nil {
		t.Fatal(err)
	}
	b, err := configs.JSON(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), "SECRET") {
		t.Errorf("run.json config shows the webhook URL: %s", b)
	}
}

func TestWindowsAreCheckedAgainstTheConfiguredInterval(t *testing.T) {
	rule := "    - {name: r, measurement: gpu, field: temp_c, rate: {op: \">\", per_min: 5, window: 4s}}\n"
	if _, err := configs.Parse("c.yaml", []byte("interval: 1s\n"+goodRule+rule)); err != nil {
		t.Errorf("4s window at 1s: %v", err)
	}
	_, err := configs.Parse("c.yaml", []byte("interval: 3s\ndeadline: 1s\n"+goodRule+rule))
	if err == nil || !strings.Contains(err.Error(), "at the 3s interval") {
		t.Errorf("4s window at 3s: %v", err)
	}
	// The engine checks again with the interval in force (--interval may change it).
	cfg := parseRules(t, goodRule+rule)
	if _, err := alerts.NewEngine(cfg, alerts.Options{Interval: 5 * time.Second}); err == nil {
		t.Error("engine accepted a 4s window at a 5s interval")
	}
}

func TestShippedRulesLoad(t *testing.T) {
	b, err := fs.ReadFile(configs.Examples, "alerts.yaml")
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := configs.Parse("alerts.yaml", b)
	if err != nil {
		t.Fatal(err)
	}
	if len(alerts.ConfigOf(cfg).Rules) < 10 {
		t.Errorf("%d default rules", len(alerts.ConfigOf(cfg).Rules))
	}
	for _, r := range alerts.ConfigOf(cfg).Rules {
		if s := r.String(); !strings.HasPrefix(s, r.Name+" [") {
			t.Errorf("rule description %q", s)
		}
	}
}

func FuzzRuleConfig(f *testing.F) {
	f.Add(goodRule)
	f.Add("alerts:\n  rules:\n    - {name: b, measurement: gpu, field: temp_c, blind_spot: {reference: {measurement: tank, field: coolant_temp_c}, difference: 40}}\n")
	f.Add("alerts:\n  rules:\n    - {name: s, silent: 5s, actions: [pause]}\n")
	f.Add("alerts:\n  rules:\n    - {name: f, measurement: gpu, field: temp_c, forecast: {op: \">=\", value: slowdown_c*2-(3), within: 1m}}\n")
	f.Fuzz(func(t *testing.T, doc string) {
		cfg, err := configs.Parse("f.yaml", []byte(doc))
		if err != nil {
			if !strings.HasPrefix(err.Error(), "f.yaml") {
				t.Fatalf("error does not name the file: %v", err)
			}
			return
		}
		// What the loader accepts, the engine runs.
		e, err := alerts.NewEngine(*alerts.ConfigOf(cfg), alerts.Options{Logger: quietLogger()})
		if err != nil {
			if strings.Contains(err.Error(), "secret") || strings.Contains(err.Error(), "url") {
				return // a secret from an unset environment variable or missing file
			}
			t.Fatalf("loader accepted what the engine refuses: %v", err)
		}
		e.Write(nil)
		e.Close()
	})
}
