package tank_test

import (
	"strings"
	"testing"

	"github.com/heatsink-hpc/heatsink/configs"
)

func TestConfigFileErrorsNameLineAndKey(t *testing.T) {
	tests := []struct{ yaml, want string }{
		{"sources:\n  tanks:\n    - name: pod1\n      url: http://10.0.0.30\n      water_flow_unit: gpm\n", "c.yaml:5: sources.tanks.0.water_flow_unit"},
		{"sources:\n  tanks:\n    - name: cdu\n      kind: http-json\n      url: http://h\n      fields:\n        - {path: a.b, field: coolant_in_c}\n        - {path: a.c, field: flow_lpm, unit: kW}\n",
			"c.yaml:8: sources.tanks.0.fields.1.unit"},
		{"sources:\n  tanks:\n    - name: pod1\n      url: http://h\n      timeout: fast\n", "c.yaml:5"},
		{"sources:\n  tanks:\n    - name: pod1\n      url: http://h\n    - name: pod1\n      url: http://h2\n", "c.yaml:5: sources.tanks.1.name: a second tank"},
	}
	for _, tt := range tests {
		_, err := configs.Parse("c.yaml", []byte(tt.yaml))
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Parse:\n%s\nerr = %v\nwant %q", tt.yaml, err, tt.want)
		}
	}
}

// run.json records the configuration; the tank's credentials stay out of it.
func TestConfigJSONRedactsCredentials(t *testing.T) {
	doc := "sources:\n  tanks:\n    - name: cdu\n      kind: http-json\n      url: https://h\n      headers: {Authorization: Bearer-abc123}\n" +
		"      basic_auth: {username: u, password: pw-xyz789}\n      fields:\n        - {path: a, field: coolant_in_c}\n"
	cfg, err := configs.Parse("c.yaml", []byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	b, err := configs.JSON(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if s := string(b); strings.Contains(s, "abc123") || strings.Contains(s, "xyz789") || !strings.Contains(s, `\u003csecret\u003e`) {
		t.Errorf("config JSON: %s", s)
	}
}
