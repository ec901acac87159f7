package tank

import (
	"os"
	"strings"
	"testing"

	"github.com/heatsink-hpc/heatsink/point"
)

func decodeFixture(t *testing.T, unit string, body []byte) (point.Point, error) {
	t.Helper()
	var p point.Point
	err := submerDecoder(unit)(body, &p)
	return p, err
}

// The real pod's answer: every numeric field with its unit, the controller
// state, null states left out, and no error.
func TestSubmerRealResponse(t *testing.T) {
	body, err := os.ReadFile("testdata/submer_realtime.json")
	if err != nil {
		t.Fatal(err)
	}
	p, err := decodeFixture(t, "", body)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"coolant_temp_c": "20.5", "setpoint_c": "45", "consumption_w": "50", "dissipation_kw": "0",
		"dissipation_c": "0", "dissipation_w": "0", "mpue": "1", "pump1_on": "false", "pump1_rpm": "0",
		"pump2_on": "false", "pump2_rpm": "0", "coolant_in_c": "18.1", "coolant_out_c": "16",
		"coolant_flow_lpm": "0", "water_in_c": "9.4", "water_out_c": "9.2", "water_flow_lpm": "4.7",
		"alarm_c": "55", "controller_cpu0_c": "59", "controller_cpu1_c": "59", "mode": `"normal"`,
		"demo": "false", "factory": "false", "errors": "0i", "warnings": "0i",
	}
	got := map[string]string{}
	for _, f := range p.Fields {
		got[f.Key] = f.Value.String()
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %q, want %q", k, got[k], v)
		}
	}
	for k := range got {
		if _, ok := want[k]; !ok {
			t.Errorf("unexpected field %s=%s (test and maintenance are null on this pod)", k, got[k])
		}
	}
}

func TestSubmerWaterFlowInCubicMetresPerHour(t *testing.T) {
	body, _ := os.ReadFile("testdata/submer_realtime.json")
	p, err := decodeFixture(t, "m3/h", body)
	if err != nil {
		t.Fatal(err)
	}
	if v, _ := p.Float("water_flow_lpm"); v < 78.33 || v > 78.34 {
		t.Errorf("4.7 m³/h = %v L/min, want 78.33", v)
	}
}

func TestSubmerControllerStateAndLists(t *testing.T) {
	body, _ := os.ReadFile("testdata/submer_realtime.json")
	s := strings.Replace(string(body), `"demo":false`, `"demo":true`, 1)
	s = strings.Replace(s, `"mode":"normal"`, `"mode":"maintenance"`, 1)
	s = strings.Replace(s, `"test":null`, `"test":false`, 1)
	s = strings.Replace(s, `"errors":[]`, `"errors":["E12 pump 1 fault", {"code": 7}]`, 1)
	s = strings.Replace(s, `"pump1status":0`, `"pump1status":1`, 1)
	p, err := decodeFixture(t, "", []byte(s))
	if err != nil {
		t.Fatal(err)
	}
	for k, want := range map[string]string{"demo": "true", "mode": `"maintenance"`, "test": "false", "errors": "2i",
		"errors_text": `"E12 pump 1 fault; {\"code\": 7}"`, "pump1_on": "true"} {
		if v, ok := p.Field(k); !ok || v.String() != want {
			t.Errorf("%s = %v, want %s", k, v, want)
		}
	}
	if _, ok := p.Field("warnings_text"); ok {
		t.Error("warnings_text written for an empty list")
	}
}

// Whatever is wrong with an answer, the tick gets an error naming it and no
// reading at all.
func TestSubmerBadAnswers(t *testing.T) {
	good, _ := os.ReadFile("testdata/submer_realtime.json")
	g := string(good)
	tests := []struct {
		name, body, want string
	}{
		{"garbage", "<html>502 Bad Gateway</html>", "not JSON"},
		{"empty", "", "not JSON"},
		{"truncated", g[:len(g)/2], "not JSON"},
		{"array", "[1,2]", "not JSON of the expected shape"},
		{"no data", `{"meta":[]}`, `no "data" object`},
		{"data not object", `{"data":[]}`, "not JSON of the expected shape"},
		{"partial", `{"data":{"temperature":20.5}}`, "partial answer: data lacks setpoint, consumption"},
		{"quoted number", strings.Replace(g, `"temperature":20.5`, `"temperature":"20.5"`, 1), `data.temperature: "20.5" is not a number`},
		{"null mode ok but bool temp", strings.Replace(g, `"setpoint":45`, `"setpoint":true`, 1), "data.setpoint: true is not a number"},
		{"pump status 2", strings.Replace(g, `"pump1status":0`, `"pump1status":2`, 1), "data.pump1status: 2 is not a boolean"},
		{"demo as string", strings.Replace(g, `"demo":false`, `"demo":"no"`, 1), `data.demo: "no" is not a boolean`},
		{"errors not a list", strings.Replace(g, `"errors":[]`, `"errors":"none"`, 1), "data.errors"},
		{"mode number", strings.Replace(g, `"mode":"normal"`, `"mode":3`, 1), "data.mode: 3 is not a string"},
		{"overflow", strings.Replace(g, `"mpue":1`, `"mpue":1e999`, 1), "data.mpue: 1e999 is not a representable number"},
		{"trailing", g + `{"data":{}}`, "trailing data"},
		{"coolant 1e300 °C", strings.Replace(g, `"temperature":20.5`, `"temperature":1e300`, 1), "data.temperature: coolant_temp_c: 1e+300 is outside the physical range"},
		{"mpue beyond any magnitude", strings.Replace(g, `"mpue":1`, `"mpue":1e13`, 1), "data.mpue: mpue: 1e+13 is outside the physical range"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := decodeFixture(t, "", []byte(tt.body))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want it to contain %q", err, tt.want)
			}
			if len(p.Fields) != 0 {
				t.Errorf("fields written from a bad answer: %v", p.Fields)
			}
		})
	}
}

func FuzzSubmerDecode(f *testing.F) {
	good, _ := os.ReadFile("testdata/submer_realtime.json")
	f.Add(good)
	f.Add([]byte(`{"data":{"temperature":1}}`))
	f.Add([]byte(`{"data":null}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		var p point.Point
		err := submerDecoder("m3/h")(b, &p)
		if err != nil && len(p.Fields) > 0 {
			t.Fatalf("error %v with fields %v", err, p.Fields)
		}
		if err == nil {
			// An accepted answer is a storable point (null values may leave
			// it with few fields, never with a bad one).
			p.Measurement = "tank"
			if err := (&point.Encoder{}).Encode(&p); err != nil && len(p.Fields) > 0 {
				t.Fatalf("accepted answer gives an unstorable point: %v", err)
			}
		}
	})
}
