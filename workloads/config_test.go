package workloads_test

import (
	"strings"
	"testing"
	"time"

	"github.com/heatsink-hpc/heatsink/configs"
	"github.com/heatsink-hpc/heatsink/workloads"
)

func TestRunnerDefaults(t *testing.T) {
	r := workloads.RunnerConfigOf(configs.Default())
	if r.ToleranceC != 2 || r.Hold != time.Minute || r.CooldownMax != time.Hour || r.NominalMax != 30*time.Minute ||
		r.Grace != 10*time.Second || len(r.Watch) != len(workloads.DefaultWatch()) || len(r.Nominal) != 0 {
		t.Errorf("defaults %+v", r)
	}
}

func TestRunnerSectionParses(t *testing.T) {
	doc := `runner:
  watch:
    - measurement: gpu
      field: temp_c
      tags: {gpu: "0|1"}
  tolerance_c: 1.5
  hold: 30s
  cooldown_max: 2h
  grace: 3s
  nominal:
    - {measurement: gpu, field: temp_c, max_c: 40}
`
	c, err := configs.Parse("r.yaml", []byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	r := workloads.RunnerConfigOf(c)
	if len(r.Watch) != 1 || r.Watch[0].Tags["gpu"] != "0|1" || r.ToleranceC != 1.5 || r.Hold != 30*time.Second ||
		r.CooldownMax != 2*time.Hour || r.Grace != 3*time.Second || len(r.Nominal) != 1 || r.Nominal[0].MaxC != 40 ||
		r.Nominal[0].Measurement != "gpu" {
		t.Errorf("parsed %+v", r)
	}
}

func TestRunnerSectionErrorsNameFileLineAndKey(t *testing.T) {
	tests := []struct {
		name, doc string
		want      []string
	}{
		{"negative tolerance", "runner:\n  tolerance_c: -1\n", []string{"r.yaml:2:", "runner.tolerance_c"}},
		{"hold beyond max", "runner:\n  hold: 2h\n  cooldown_max: 1h\n", []string{"r.yaml:2:", "runner.hold", "never settle"}},
		{"negative grace", "runner:\n  grace: -1s\n", []string{"r.yaml:2:", "runner.grace"}},
		{"watch without field", "runner:\n  watch:\n    - measurement: gpu\n", []string{"r.yaml:3:", "runner.watch.0.field"}},
		{"bad tag regexp", "runner:\n  watch:\n    - measurement: gpu\n      field: temp_c\n    - measurement: hwmon\n      field: temp_c\n      tags:\n        class: \"cpu(\"\n",
			[]string{"r.yaml:8:", "runner.watch.1.tags.class", "regular expression"}},
		{"impossible limit", "runner:\n  nominal:\n    - measurement: gpu\n      field: temp_c\n      max_c: 4000\n", []string{"r.yaml:5:", "runner.nominal.0.max_c"}},
		{"unknown key", "runner:\n  tolerence_c: 2\n", []string{"r.yaml:2", "tolerence_c"}},
		{"wrong type", "runner:\n  hold: soon\n", []string{"r.yaml:2", "soon"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := configs.Parse("r.yaml", []byte(tt.doc))
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
