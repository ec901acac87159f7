package alerts

import (
	"strings"
	"testing"
)

func TestExpressionsEvaluateOnDeviceLimits(t *testing.T) {
	vals := map[string]float64{"slowdown_c": 89, "mem_max_c": 95, "setpoint_c": 35, "warn_c": 70}
	tests := []struct {
		src  string
		want float64
	}{
		{"85", 85},
		{"-5.5", -5.5},
		{"slowdown_c - 5", 84},
		{"mem_max_c-5", 90},
		{"setpoint_c + 3", 38},
		{"warn_c", 70},
		{"2 * setpoint_c - 10", 60},
		{"setpoint_c + 2 * 3", 41},
		{"(setpoint_c + 2) * 3", 111},
		{"- -slowdown_c", 89},
		{"slowdown_c - warn_c - 1", 18},
	}
	for _, tt := range tests {
		e, err := parseExpr(tt.src)
		if err != nil {
			t.Errorf("%q: %v", tt.src, err)
			continue
		}
		got, ok := e.eval(func(i int) (float64, bool) { v, ok := vals[e.vars[i]]; return v, ok })
		if !ok || got != tt.want {
			t.Errorf("%q = %v (%v), want %v", tt.src, got, ok, tt.want)
		}
	}
}

func TestExpressionWithAnUnknownLimitIsUnknown(t *testing.T) {
	e, err := parseExpr("mem_max_c - 5")
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := e.eval(func(int) (float64, bool) { return 0, false }); ok {
		t.Error("a missing limit gave a threshold")
	}
}

func TestBadExpressionsNameTheColumn(t *testing.T) {
	tests := []struct{ src, want string }{
		{"", "empty"},
		{"slowdown_c -", "column 13: expected a number or a field name, found end of expression"},
		{"slowdown_c 5", "column 12: unexpected \"5\""},
		{"slowdown_c / 2", "column 12: unexpected character \"/\""},
		{"(slowdown_c - 5", "expected \")\""},
		{"1.2.3", "bad number"},
		{"slowdown_c °", "character \"°\""},
		{strings.Repeat("(", 40) + "1" + strings.Repeat(")", 40), "nested deeper"},
		{strings.Repeat("1+", 200) + "1", "longer than"},
	}
	for _, tt := range tests {
		_, err := parseExpr(tt.src)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%q: error %v, want %q", tt.src, err, tt.want)
		}
	}
}

func FuzzParseExpr(f *testing.F) {
	for _, s := range []string{"slowdown_c - 5", "(a+b)*-3", "1.5e3", "x--", "((((", "a*b*c+d-e"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		e, err := parseExpr(src)
		if err != nil {
			return
		}
		// A parsed expression evaluates with every variable known, and
		// reports unknown when any is missing.
		if _, ok := e.eval(func(int) (float64, bool) { return 1, true }); !ok {
			t.Fatalf("%q: unknown with every variable set", src)
		}
		if len(e.vars) > 0 {
			if _, ok := e.eval(func(int) (float64, bool) { return 0, false }); ok {
				t.Fatalf("%q: known with its variables missing", src)
			}
		}
	})
}
