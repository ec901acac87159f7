package units

import (
	"math"
	"strconv"
	"strings"
	"testing"
)

func TestConverter(t *testing.T) {
	tests := []struct {
		from, field string
		scale, in   float64
		want        float64
	}{
		{"A", "current_a", 0.1, 123, 12.3},             // APC tenths of A
		{"kW", "power_w", 0.01, 45, 450},               // APC hundredths of kW
		{"kWh", "energy_j", 0.1, 10, 3.6e6},            // APC tenths of kWh
		{"mA", "current_a", 0, 1500, 1.5},              // scale 0 means 1
		{"F", "coolant_temp_c", 1, 212, 100},           // offset units
		{"K", "water_in_c", 1, 283.15, 10},             //
		{"m3/h", "water_flow_lpm", 1, 0.282, 4.7},      // Submer firmware variant
		{"L/min", "water_flow_m3h", 1, 4.7, 0.282},     //
		{"", "mpue", 0.01, 105, 1.05},                  // dimensionless, scaled
		{"ratio", "util_pct", 1, 0.5, 50},              //
		{"lpm", "coolant_flow_lpm", 2, 10, 20},         // alias
		{"kW", "dissipation_kw", 1, 1.5, 1.5},          //
		{"W", "dissipation_kw", 1, 1500, 1.5},          //
		{"C", "setpoint_c", 1, 45, 45},                 //
		{"Wh", "energy_j", 1, 1, 3600},                 //
		{"bar", "pressure_kpa", 1, 1.5, 150},           //
		{"gpm", "coolant_flow_lpm", 1, 1, 3.785411784}, //
	}
	for _, tt := range tests {
		f, err := Converter(tt.from, tt.field, tt.scale)
		if err != nil {
			t.Errorf("%s -> %s: %v", tt.from, tt.field, err)
			continue
		}
		if got := f(tt.in); math.Abs(got-tt.want) > 1e-9*math.Max(1, math.Abs(tt.want)) {
			t.Errorf("%g %s (scale %g) -> %s = %g, want %g", tt.in, tt.from, tt.scale, tt.field, got, tt.want)
		}
	}
}

// Decimal scales give the decimal a person would write, not a binary
// neighbour of it (stored values are compared and printed as they are).
func TestConverterDecimalScalesAreExact(t *testing.T) {
	for _, c := range []struct {
		from, field string
		scale, in   float64
		want        string
	}{
		{"A", "current_a", 0.1, 87, "8.7"},
		{"A", "current_a", 0.1, 82, "8.2"},
		{"kW", "power_w", 0.01, 172, "1720"},
		{"kWh", "energy_j", 0.1, 45671, "16441560000"},
		{"mA", "current_a", 1, 2315, "2.315"},
	} {
		f, err := Converter(c.from, c.field, c.scale)
		if err != nil {
			t.Fatal(err)
		}
		if got := strconv.FormatFloat(f(c.in), 'f', -1, 64); got != c.want {
			t.Errorf("%g %s x %g -> %s = %s, want %s", c.in, c.from, c.scale, c.field, got, c.want)
		}
	}
}

func TestConverterRefusesMismatch(t *testing.T) {
	tests := []struct{ from, field, want string }{
		{"A", "power_w", "current"},
		{"furlong", "power_w", "unknown unit"},
		{"kW", "power", "no unit suffix"},
		{"C", "_c", "no unit suffix"},
	}
	for _, tt := range tests {
		_, err := Converter(tt.from, tt.field, 1)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s -> %s: err %v, want it to mention %q", tt.from, tt.field, err, tt.want)
		}
	}
}

func TestFieldUnitPrefersLongestSuffix(t *testing.T) {
	for field, want := range map[string]string{"power_kw": "kW", "power_w": "W", "flow_m3h": "m3/h", "freq_mhz": "MHz", "mpue": ""} {
		got, _ := FieldUnit(field)
		if got != want {
			t.Errorf("FieldUnit(%s) = %q, want %q", field, got, want)
		}
	}
}
