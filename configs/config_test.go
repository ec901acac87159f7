package configs_test

import (
	"io/fs"
	"strings"
	"testing"
	"time"

	"github.com/heatsink-hpc/heatsink/configs"
	_ "github.com/heatsink-hpc/heatsink/node" // registers every source and section
	"gopkg.in/yaml.v3"
)

func TestParseErrorsNameFileLineAndKey(t *testing.T) {
	tests := []struct {
		name, yaml string
		want       []string
	}{
		{"unknown key", "interval: 1s\nintervall: 2s\n", []string{"c.yaml:2:", "intervall"}},
		{"wrong type", "sources:\n  hwmon:\n    disabled: maybe\n", []string{"c.yaml:3:", "maybe"}},
		{"bad duration", "interval: soon\n", []string{"c.yaml:1:", "soon"}},
		{"bad regexp", "sources:\n  hwmon:\n    sensor_exclude: \"(\"\n", []string{"c.yaml:3:", "sources.hwmon.sensor_exclude"}},
		{"deadline above interval", "interval: 1s\ndeadline: 2s\n", []string{"c.yaml:2:", "deadline"}},
		{"not yaml", "interval: [1s\n", []string{"c.yaml"}},
		{"unclosed bracket names its line", "interval: 1s\nlabels:\n  a: [x\nhost: y\n", []string{"c.yaml:3:", "expected"}},
		{"scanner error line", "a: 1\nb: 2\n  c: 3\n", []string{"c.yaml:3:"}},
		{"unknown nested key by its path", "sources:\n  hwmon:\n    device_exlude: x\n", []string{"c.yaml:3: unknown key sources.hwmon.device_exlude"}},
		{"unknown key in a list", "runner:\n  watch:\n    - {measurement: gpu, fild: temp_c}\n", []string{"c.yaml:3: unknown key runner.watch.0.fild"}},
		{"wrong type by its key, in words", "sources:\n  hwmon: {disabled: maybe}\n", []string{`c.yaml:2: sources.hwmon.disabled: "maybe" is not true or false`}},
		{"bad duration by its key", "deadline: 100ms\ninterval: soon\n", []string{`c.yaml:2: interval: "soon" is not a duration`}},
		{"every bad key of a file", "interval: soon\nintervall: 2s\n", []string{`c.yaml:1: interval: "soon"`, "c.yaml:2: unknown key intervall"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := configs.Parse("c.yaml", []byte(tt.yaml))
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
		})
	}
}

func TestDefaultsNeedNoFile(t *testing.T) {
	c := configs.Default()
	if c.Interval != time.Second || c.Deadline != 500*time.Millisecond || c.SysfsRoot != "/sys" {
		t.Errorf("defaults: %+v", c)
	}
}

func TestExamplesParse(t *testing.T) {
	names, _ := fs.Glob(configs.Examples, "*.yaml")
	if len(names) == 0 {
		t.Fatal("no example configurations embedded")
	}
	for _, n := range names {
		b, _ := fs.ReadFile(configs.Examples, n)
		if _, err := configs.Parse(n, b); err != nil {
			t.Errorf("example %s: %v", n, err)
		}
	}
}

type sectionErr struct{}

func (sectionErr) Error() string         { return "rules.1.threshold: impossible" }
func (sectionErr) ConfigPath() []string  { return []string{"rules", "1", "threshold"} }
func (sectionErr) ConfigMessage() string { return "impossible" }

func TestSectionErrorsMapToLines(t *testing.T) {
	doc := "alerts:\n  rules:\n    - name: a\n      threshold: 1\n    - name: b\n      threshold: 99999\n"
	var root yaml.Node
	if err := yaml.Unmarshal([]byte(doc), &root); err != nil {
		t.Fatal(err)
	}
	pe := configs.InSection(sectionErr{}, "alerts").(configs.PathError)
	if got := configs.LineOf(&root, pe.ConfigPath()...); got != 6 {
		t.Errorf("line %d, want 6 (path %v)", got, pe.ConfigPath())
	}
}

func TestOfTwoBadFiltersTheSameIsNamedEveryTime(t *testing.T) {
	doc := "sources:\n  host:\n    device_include: \"(\"\n  hwmon:\n    sensor_exclude: \"[\"\n  rapl:\n    sensor_include: x\n  cpufreq:\n    sensor_include: x\n"
	for range 20 {
		_, err := configs.Parse("node.yaml", []byte(doc))
		if err == nil || !strings.HasPrefix(err.Error(), "node.yaml:3: sources.host.device_include: bad regular expression") {
			t.Fatalf("err = %v, want the host's device_include at line 3", err)
		}
	}
	doc = "sources:\n  rapl:\n    sensor_include: x\n  cpufreq:\n    sensor_exclude: x\n"
	for range 20 {
		_, err := configs.Parse("node.yaml", []byte(doc))
		if err == nil || !strings.HasPrefix(err.Error(), "node.yaml:5: sources.cpufreq.sensor_exclude: cpufreq has no sensors to filter") {
			t.Fatalf("err = %v, want cpufreq's sensor_exclude at line 5", err)
		}
	}
}

func TestSecretEnvNamesTheConfigsEnvironmentSecrets(t *testing.T) {
	c, err := configs.Parse("cfg.yaml", []byte("sinks:\n  influx:\n    url: http://x:8086\n    bucket: b\n    token: {env: HS_TEST_INFLUX}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if got := c.SecretEnv(); len(got) != 1 || got[0] != "HS_TEST_INFLUX" {
		t.Errorf("SecretEnv = %v", got)
	}
}

// An empty file (a deploy caught mid-write, a truncation) is refused, not
// read as "all defaults": on SIGHUP that would drop InfluxDB and every rule.
func TestEmptyConfigIsRefused(t *testing.T) {
	for _, body := range []string{"", "\n\n", "# only a comment\n", "---\n", "null\n", "{}\n", "~\n"} {
		if _, err := configs.Parse("cfg.yaml", []byte(body)); err == nil || !strings.Contains(err.Error(), "cfg.yaml: holds no settings") {
			t.Errorf("%q: error %v, want it refused as empty", body, err)
		}
	}
	if _, err := configs.Parse("cfg.yaml", []byte("interval: 2s\n")); err != nil {
		t.Errorf("a one-line config: %v", err)
	}
}

// Every duration and float is range-checked at load, whatever section it
// is in, and a host that could not be written as a tag is refused.
func TestOutOfRangeValuesAreRefusedAtLoad(t *testing.T) {
	for _, tc := range []struct{ yaml, want string }{
		{"runner:\n  tolerance_c: .nan\n", "cfg.yaml:2: runner.tolerance_c: NaN is not a finite number"},
		{"runner:\n  tolerance_c: .inf\n", "cfg.yaml:2: runner.tolerance_c: +Inf is not a finite number"},
		{"interval: 2000000h\n", "cfg.yaml:1: interval: 2000000h0m0s is above the 1h0m0s maximum"},
		{"runner:\n  cooldown_max: 2000000h\n", "cfg.yaml:2: runner.cooldown_max: 2000000h0m0s is outside"},
		{"runner:\n  nominal:\n    - {measurement: gpu, field: temp_c, max_c: 1e300}\n", "cfg.yaml:3: runner.nominal.0.max_c: 1e+300 °C"},
		{"host: \"node\\n1\"\n", `cfg.yaml:1: host: "node\n1" holds a control character`},
	} {
		_, err := configs.Parse("cfg.yaml", []byte(tc.yaml))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: error %v, want %q", tc.yaml, err, tc.want)
		}
	}
}
