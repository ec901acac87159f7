package schema

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/heatsink-hpc/heatsink/docs"
)

var update = flag.Bool("update", false, "rewrite docs/data-model.md's field table from point/schema")

func TestEveryTableFieldIsDeclaredOnce(t *testing.T) {
	inTable := map[string]bool{}
	for _, m := range table() {
		for _, f := range m.Fields {
			inTable[f] = true
			if _, ok := Describe(f); !ok {
				t.Errorf("%s.%s is in the table but not declared in vocab.go", m.Name, f)
			}
		}
	}
	seen := map[string]bool{}
	for _, f := range fields() {
		if seen[f.Name] {
			t.Errorf("%s is declared twice", f.Name)
		}
		seen[f.Name] = true
		if !inTable[f.Name] {
			t.Errorf("%s is declared but no measurement has it", f.Name)
		}
	}
}

// TestDeclarationsAgreeWithNames holds the data model's rule that a name
// carries its unit: a declaration whose unit, counter flag or kind the name
// contradicts is a mistake in one or the other.
func TestDeclarationsAgreeWithNames(t *testing.T) {
	for _, f := range fields() {
		if got := UnitOf(f.Name); got != f.Unit {
			t.Errorf("%s is declared in %s, its suffix says %s", f.Name, f.Unit, got)
		}
		total := strings.HasSuffix(f.Name, "_total")
		if total && !f.Counter {
			t.Errorf("%s ends in _total but is not declared a counter", f.Name)
		}
		if f.Counter && !total && f.Unit != Joules {
			t.Errorf("%s is a counter but neither a _total nor energy", f.Name)
		}
		if f.Counter && !f.Kind.Numeric() {
			t.Errorf("%s is a counter of kind %s", f.Name, f.Kind)
		}
		if f.Text && f.Kind != String {
			t.Errorf("%s is free text of kind %s", f.Name, f.Kind)
		}
		if f.Kind == 0 || f.Kind > String {
			t.Errorf("%s has no kind", f.Name)
		}
		if f.Unit != None && !f.Kind.Numeric() {
			t.Errorf("%s has unit %s but kind %s", f.Name, f.Unit, f.Kind)
		}
	}
}

func TestUnitOf(t *testing.T) {
	for _, tc := range []struct {
		name string
		want Unit
	}{
		{"temp_c", Celsius},
		{"energy_j", Joules},
		{"triad_bytes_per_s", BytesPerSecond},
		{"bytes_per_s", BytesPerSecond},
		{"mem_used_bytes", Bytes},
		{"lag_s", Seconds},
		{"heat_interval_s_per_c", SecondsPerCelsius},
		{"errors_total", None},
		{"missed_ticks_total", None},
		{"flow_m3h", CubicMetresPerHour},
		{"voltage_v", Volts},
		{"load1", None},
		{"n", None},
		{"pstate", None},
		{"throttle_power", None},
		{"w", None},
		{"j", None},
		{"s", None},
	} {
		if got := UnitOf(tc.name); got != tc.want {
			t.Errorf("UnitOf(%q) = %s, want %s", tc.name, got, tc.want)
		}
	}
}

func TestInfer(t *testing.T) {
	for _, tc := range []struct {
		name string
		kind Kind
		want Field
	}{
		{"voltage_v", Float, Field{Name: "voltage_v", Kind: Float, Unit: Volts}},
		{"resets_total", Uint, Field{Name: "resets_total", Kind: Uint, Counter: true}},
		{"outlet_energy_j", Float, Field{Name: "outlet_energy_j", Kind: Float, Unit: Joules, Counter: true}},
		// A declared field is what the schema says, whatever the wire holds.
		{"temp_c", Int, Field{Name: "temp_c", Kind: Float, Unit: Celsius}},
		{"errors_text", String, Field{Name: "errors_text", Kind: String, Text: true}},
		{"alarm_text", String, Field{Name: "alarm_text", Kind: String, Text: true}},
		{"firmware", String, Field{Name: "firmware", Kind: String}},
	} {
		if got := Infer(tc.name, tc.kind); got != tc.want {
			t.Errorf("Infer(%q, %s) = %+v, want %+v", tc.name, tc.kind, got, tc.want)
		}
	}
}

func TestFieldsKeepsUnknownNamesVisible(t *testing.T) {
	got := Fields(FieldTempC, "no_such_field")
	if len(got) != 2 || got[0].Unit != Celsius || got[1] != (Field{Name: "no_such_field"}) {
		t.Errorf("Fields = %+v", got)
	}
	gpu, _ := Lookup(GPU)
	if f, ok := gpu.Field(FieldSlowdownC); !ok || f.Unit != Celsius {
		t.Errorf("gpu.Field(slowdown_c) = %+v, %v", f, ok)
	}
	if _, ok := gpu.Field(FieldCoolantTempC); ok {
		t.Error("gpu.Field(coolant_temp_c) found a tank field")
	}
}

const (
	fieldTableStart = "<!-- field table: generated from point/schema/vocab.go by `go test ./point/schema -update`; do not edit -->"
	fieldTableEnd   = "<!-- end of field table -->"
)

// fieldTable is the document's table of every field's kind, unit and
// counter flag, as vocab.go declares them.
func fieldTable() string {
	var b strings.Builder
	b.WriteString(fieldTableStart + "\n\n| field | kind | unit | counter | measurements |\n| --- | --- | --- | --- | --- |\n")
	all := fields()
	slices.SortFunc(all, func(a, b Field) int { return strings.Compare(a.Name, b.Name) })
	for _, f := range all {
		var ms []string
		for _, m := range table() {
			if m.HasField(f.Name) {
				ms = append(ms, "`"+m.Name+"`")
			}
		}
		unit := ""
		if f.Unit != None {
			unit = f.Unit.String()
		}
		kind := f.Kind.String()
		if f.Text {
			kind += " (free text)"
		}
		counter := ""
		if f.Counter {
			counter = "yes"
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s | %s | %s |\n", f.Name, kind, unit, counter, strings.Join(ms, ", "))
	}
	b.WriteString("\n" + fieldTableEnd)
	return b.String()
}

// TestDocumentFieldTableIsGenerated keeps the kinds and units people read
// those the code declares; -update rewrites the document's table.
func TestDocumentFieldTableIsGenerated(t *testing.T) {
	md := docs.DataModel
	i, j := strings.Index(md, fieldTableStart), strings.Index(md, fieldTableEnd)
	if i < 0 || j < i {
		t.Fatalf("docs/data-model.md has no field table between %q and %q", fieldTableStart, fieldTableEnd)
	}
	want := fieldTable()
	if got := md[i : j+len(fieldTableEnd)]; got != want {
		if *update {
			path := filepath.Join("..", "..", "docs", "data-model.md")
			if err := os.WriteFile(path, []byte(md[:i]+want+md[j+len(fieldTableEnd):]), 0o644); err != nil {
				t.Fatalf("update %s: %v", path, err)
			}
			return
		}
		t.Errorf("docs/data-model.md's field table differs from point/schema/vocab.go; run go test ./point/schema -update, or fix vocab.go")
	}
}

func TestIterationRefusesMetricsThatShadowFixedKeys(t *testing.T) {
	at := time.Date(2026, 11, 27, 16, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		metrics map[string]float64
		want    string // in the error; empty for none
	}{
		{map[string]float64{FieldFlopPerS: 1e12, FieldMatrixOrder: 4096}, ""},
		{nil, ""},
		{map[string]float64{"work_flop": 1e12}, ""},
		{map[string]float64{FieldN: 4096}, `metric "n" shadows`},
		{map[string]float64{FieldRuntimeS: 1}, `metric "runtime_s" shadows`},
		{map[string]float64{FieldExitStatus: 0}, `metric "exit_status" shadows`},
		{map[string]float64{TagRun: 1}, `metric "run" shadows`},
		{map[string]float64{TagWorkload: 1}, `metric "workload" shadows`},
		{map[string]float64{TagHost: 1}, `metric "host" shadows`},
		{map[string]float64{FieldPState: 2}, `declares pstate as int`},
		{map[string]float64{"": 2}, "empty name"},
	} {
		it := IterationPoint{Time: at, Run: "r", Workload: "dgemm", N: 3, Metrics: tc.metrics}
		_, err := it.Encode()
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%v: %v", tc.metrics, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%v: error %v, want one saying %q", tc.metrics, err, tc.want)
		}
		// Point never writes a key twice, whatever Validate says.
		p := it.Point()
		seen := map[string]bool{}
		for _, f := range p.Fields {
			if seen[f.Key] {
				t.Errorf("%v: %s written twice: %s", tc.metrics, f.Key, p.String())
			}
			seen[f.Key] = true
		}
		if got, err := DecodeIteration(&p); err != nil || got.N != 3 {
			t.Errorf("%v: decoded n %d, %v", tc.metrics, got.N, err)
		}
	}
}
