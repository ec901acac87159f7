package tank

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/heatsink-hpc/heatsink/point"
	"github.com/heatsink-hpc/heatsink/point/schema"
)

// submerField maps one key of the SmartPod's realTime "data" object (see
// testdata/submer_realtime.json and the fixture README for meanings).
type submerField struct {
	key, field string
	kind       valueKind
}

type valueKind int

const (
	kindNumber valueKind = iota
	kindPump             // 0/1 (or false/true): a pump's run status
	kindFlag             // true/false (or 0/1): a controller state
	kindString
	kindList // errors and warnings: a list, recorded as a count and text
)

// submerFields is the v3 realTime schema. Every key must be present: an
// answer lacking one is partial and rejected as a whole. JSON null means the
// pod has no value for it (test and maintenance are null on production
// pods), and the field is left out.
var submerFields = []submerField{
	{"temperature", schema.FieldCoolantTempC, kindNumber},
	{"setpoint", schema.FieldSetpointC, kindNumber},
	{"consumption", schema.FieldConsumptionW, kindNumber},
	{"dissipation", schema.FieldDissipationKW, kindNumber},
	{"dissipationC", schema.FieldDissipationC, kindNumber},
	{"dissipationW", schema.FieldDissipationW, kindNumber},
	{"mpue", "mpue", kindNumber},
	{"pump1status", schema.FieldPump1On, kindPump},
	{"pump1rpm", schema.FieldPump1RPM, kindNumber},
	{"pump2status", schema.FieldPump2On, kindPump},
	{"pump2rpm", schema.FieldPump2RPM, kindNumber},
	{"cti", schema.FieldCoolantInC, kindNumber},
	{"cto", schema.FieldCoolantOutC, kindNumber},
	{"cf", schema.FieldCoolantFlowLPM, kindNumber},
	{"wti", schema.FieldWaterInC, kindNumber},
	{"wto", schema.FieldWaterOutC, kindNumber},
	{"wf", schema.FieldWaterFlowLPM, kindNumber}, // converted from water_flow_unit
	{"alarm", schema.FieldAlarmC, kindNumber},
	{"cpu0temp", schema.FieldControllerCPU0C, kindNumber},
	{"cpu1temp", schema.FieldControllerCPU1C, kindNumber},
	{"mode", "mode", kindString},
	{"demo", "demo", kindFlag},
	{"factory", "factory", kindFlag},
	{"test", "test", kindFlag},
	{"maintenance", "maintenance", kindFlag},
	{"errors", "errors", kindList},
	{"warnings", "warnings", kindList},
}

// maxListText bounds errors_text and warnings_text.
const maxListText = 500

func submerDecoder(waterFlowUnit string) decoder {
	wfScale := 1.0
	if waterFlowUnit == "m3/h" || waterFlowUnit == "m3h" {
		wfScale = 1000.0 / 60 // m³/h -> L/min
	}
	return func(body []byte, p *point.Point) error {
		var doc struct {
			Data map[string]json.RawMessage `json:"data"`
		}
		if err := strictUnmarshal(body, &doc, false); err != nil {
			return err
		}
		if doc.Data == nil {
			return errors.New(`no "data" object`)
		}
		var missing []string
		for _, f := range submerFields {
			if _, ok := doc.Data[f.key]; !ok {
				missing = append(missing, f.key)
			}
		}
		if len(missing) > 0 {
			return fmt.Errorf("partial answer: data lacks %s", strings.Join(missing, ", "))
		}
		// Decode everything before adding anything, so a bad value leaves no
		// half-filled point behind.
		var tmp point.Point
		for _, f := range submerFields {
			raw := doc.Data[f.key]
			if isNull(raw) {
				continue
			}
			var err error
			switch f.kind {
			case kindNumber:
				var v float64
				if v, err = number(raw); err == nil {
					if f.key == "wf" {
						v *= wfScale
					}
					if err = checkPhysical(f.field, v); err == nil {
						tmp.AddFloat(f.field, v)
					}
				}
			case kindPump, kindFlag:
				var v bool
				if v, err = flag(raw); err == nil {
					tmp.AddBool(f.field, v)
				}
			case kindString:
				var v string
				if err = json.Unmarshal(raw, &v); err != nil {
					err = fmt.Errorf("%s is not a string", clip(raw))
				} else {
					tmp.AddString(f.field, v)
				}
			case kindList:
				var n int
				var text string
				if n, text, err = list(raw); err == nil {
					tmp.AddInt(f.field, int64(n))
					if text != "" {
						tmp.AddString(f.field+"_text", text)
					}
				}
			}
			if err != nil {
				return fmt.Errorf("data.%s: %w", f.key, err)
			}
		}
		p.Fields = append(p.Fields, tmp.Fields...)
		return nil
	}
}

// strictUnmarshal decodes one JSON value and refuses trailing data, so a
// concatenation or a truncated-then-retried body is not half accepted;
// useNumber keeps numbers as json.Number for walking decoded documents.
func strictUnmarshal(body []byte, v any, useNumber bool) error {
	dec := json.NewDecoder(bytes.NewReader(body))
	if useNumber {
		dec.UseNumber()
	}
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("not JSON of the expected shape: %w", err)
	}
	if dec.More() {
		return errors.New("trailing data after the JSON value")
	}
	var extra json.RawMessage
	if err := dec.Decode(&extra); err == nil {
		return errors.New("trailing data after the JSON value")
	}
	return nil
}

func isNull(raw json.RawMessage) bool {
	return string(bytes.TrimSpace(raw)) == "null"
}

// number accepts a JSON number only: a quoted "20.5" is a wrongly typed
// answer, not a reading.
func number(raw json.RawMessage) (float64, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || !(raw[0] == '-' || (raw[0] >= '0' && raw[0] <= '9')) {
		return 0, fmt.Errorf("%s is not a number", clip(raw))
	}
	v, err := strconv.ParseFloat(string(raw), 64)
	if err != nil || math.IsInf(v, 0) || math.IsNaN(v) {
		return 0, fmt.Errorf("%s is not a representable number", clip(raw))
	}
	return v, nil
}

// flag accepts true/false and the 0/1 the pod uses for pump status.
func flag(raw json.RawMessage) (bool, error) {
	switch string(bytes.TrimSpace(raw)) {
	case "true", "1":
		return true, nil
	case "false", "0":
		return false, nil
	}
	return false, fmt.Errorf("%s is not a boolean (true/false or 0/1)", clip(raw))
}

// list counts the entries of a JSON array and joins them as text (strings
// as they are, anything else as its JSON).
func list(raw json.RawMessage) (int, string, error) {
	var items []json.RawMessage
	if err := json.Unmarshal(raw, &items); err != nil {
		return 0, "", fmt.Errorf("%s is not a list", clip(raw))
	}
	parts := make([]string, 0, len(items))
	for _, it := range items {
		var s string
		if json.Unmarshal(it, &s) == nil {
			parts = append(parts, s)
		} else {
			parts = append(parts, string(bytes.TrimSpace(it)))
		}
	}
	text := strings.Join(parts, "; ")
	if len(text) > maxListText {
		text = strings.ToValidUTF8(text[:maxListText], "") + "..."
	}
	return len(items), text, nil
}

// clip shows a bad value in an error without flooding the log.
func clip(raw []byte) string {
	s := string(bytes.TrimSpace(raw))
	if len(s) > 40 {
		s = strings.ToValidUTF8(s[:40], "") + "..."
	}
	if s == "" {
		return "empty value"
	}
	return s
}
