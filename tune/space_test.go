package tune

import (
	"os"
	"strings"
	"testing"
)

func TestLoadSpaceReadsEveryKind(t *testing.T) {
	s, err := LoadSpace("testdata/kinds.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if got := len(s.Params); got != 4 {
		t.Fatalf("%d params, want 4", got)
	}
	batch := s.Params[0]
	if strings.Join(batch.Levels, ",") != "16,32,48,64" || batch.Default != 1 {
		t.Errorf("batch levels %v default %d, want 16,32,48,64 default 1", batch.Levels, batch.Default)
	}
	if s.Params[2].Kind != Categorical || s.Params[2].Default != 1 {
		t.Errorf("layout %+v, want categorical with default cols (1)", s.Params[2])
	}
	if s.Size() != 4*3*3*2 {
		t.Errorf("size %g, want 72", s.Size())
	}
	n := 0
	s.Enumerate(Task{"tokens": 1}, func(c Config) bool { n++; return true })
	// batch*tile <= 128 keeps 4+4+2 of 12 (batch, tile) pairs; the layout
	// rule removes blocked without packing: 10 * (2 + 2 + 1).
	if n != 50 {
		t.Errorf("%d feasible configurations, want 50", n)
	}
}

func TestFeasibleSaysWhichConstraint(t *testing.T) {
	s, err := LoadSpace("testdata/kinds.yaml")
	if err != nil {
		t.Fatal(err)
	}
	c, err := s.Parse(map[string]string{"batch": "64", "tile": "4", "layout": "rows", "packed": "true"})
	if err != nil {
		t.Fatal(err)
	}
	err = s.Feasible(c, nil)
	if err == nil || !strings.Contains(err.Error(), "batch * tile <= 128") {
		t.Errorf("Feasible = %v, want the batch*tile constraint named", err)
	}
	c[1] = 0
	if err := s.Feasible(c, nil); err != nil {
		t.Errorf("batch 64 tile 1: %v", err)
	}
}

func TestParseSpaceErrorsNameFileAndLine(t *testing.T) {
	for _, tc := range []struct {
		name, yaml, want string
	}{
		{"unknown top key", "name: x\nparms: []\n", "s.yaml:2: unknown key \"parms\""},
		{"no params", "name: x\n", "s.yaml:1: no params"},
		{"no type", "params:\n  - name: a\n", "s.yaml:2: parameter a has no type"},
		{"bad type", "params:\n  - name: a\n    type: float\n", "s.yaml:2: parameter a: unknown type \"float\""},
		{"int without range", "params:\n  - name: a\n    type: int\n    min: 3\n", "s.yaml:2: int parameter a needs integer min <= max"},
		{"ordinal not increasing", "params:\n  - name: a\n    type: ordinal\n    values: [4, 2]\n", "s.yaml:4: ordinal parameter a: values must increase"},
		{"ordinal not a number", "params:\n  - name: a\n    type: ordinal\n    values: [4, big]\n", "s.yaml:4: ordinal value of a: \"big\" is not a number"},
		{"repeated value", "params:\n  - name: a\n    type: categorical\n    values: [x, x]\n", "s.yaml:4: parameter a: value \"x\" listed twice"},
		{"default not a value", "params:\n  - name: a\n    type: bool\n    default: yes please\n", "s.yaml:4: parameter a: default \"yes please\""},
		{"unknown param key", "params:\n  - name: a\n    type: bool\n    dflt: true\n", "s.yaml:4: unknown parameter key \"dflt\""},
		{"duplicate name", "task:\n  - name: a\nparams:\n  - name: a\n    type: bool\n", "name \"a\" used twice"},
		{"constraint syntax", "params:\n  - name: a\n    type: bool\nconstraints:\n  - \"a &&\"\n", "s.yaml:5: constraint \"a &&\": expression ends"},
		{"constraint unknown name", "params:\n  - name: a\n    type: bool\nconstraints:\n  - \"b > 1\"\n", "s.yaml:5: constraint \"b > 1\": unknown name \"b\""},
		{"task min above max", "task:\n  - name: n\n    min: 9\n    max: 1\nparams:\n  - name: a\n    type: bool\n", "s.yaml:2: task feature n: min 9 is not below max 1"},
		{"task key twice", "task:\n  - name: n\n    name: m\nparams: []\n", "s.yaml:3: task feature: name given twice"},
		{"int beyond exact floats", "params:\n  - {name: a, type: int, min: 1e17, max: 100000000000000100}\n", "s.yaml:2: int parameter a: bounds beyond"},
		{"yaml syntax", "params: [\n", "s.yaml: yaml:"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseSpace("s.yaml", []byte(tc.yaml))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want it to contain %q", err, tc.want)
			}
		})
	}
}

func TestConstraintExpressions(t *testing.T) {
	env := map[string]value{"a": {num: 3}, "b": {num: 4}, "s": {str: "rows", isStr: true}}
	for _, tc := range []struct {
		expr string
		want float64
		err  string
	}{
		{"a + b * 2", 11, ""},
		{"(a + b) * 2", 14, ""},
		{"a < b && b <= 4", 1, ""},
		{"!(a == 3) || s == \"cols\"", 0, ""},
		{"s != 'cols'", 1, ""},
		{"-a + 1e1", 7, ""},
		{"b % a", 1, ""},
		{"a / (b - 4)", 0, "division by zero"},
		{"s < 3", 0, "strings only compare"},
		{"false || a > 2", 1, ""},
		{"a > 5 && nothing", 0, ""}, // short-circuit: the unknown name is never read
		{"nothing", 0, "unknown name"},
	} {
		e, err := parseExpr(tc.expr)
		if err != nil {
			t.Fatalf("%s: %v", tc.expr, err)
		}
		v, err := e.eval(env)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s: error %v, want %q", tc.expr, err, tc.err)
			}
			continue
		}
		if err != nil || v.num != tc.want {
			t.Errorf("%s = %v, %v; want %g", tc.expr, v, err, tc.want)
		}
	}
}

func FuzzParseSpace(f *testing.F) {
	for _, p := range []string{"testdata/kinds.yaml", "testdata/syr2k.yaml"} {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte("params:\n  - name: a\n    type: int\n    min: 1\n    max: 3\nconstraints: ['a > 1 && (a*2) != 4']\n"))
	f.Add([]byte("task: [{name: n, min: 1, max: 2}]\nparams: [{name: b, type: bool}]\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		s, err := ParseSpace("f.yaml", b)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "f.yaml") {
				t.Errorf("error %q does not name the file", err)
			}
			return
		}
		if s.Size() < 1 {
			t.Errorf("a parsed space has %g configurations", s.Size())
		}
		s.Feasible(s.Default(), Task{})
	})
}
