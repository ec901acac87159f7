package workloads

import (
	"context"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/heatsink-hpc/heatsink/point/schema"
)

// testParams has a parameter of every type, bounded, with choices, without
// a default, and one whose default comes from SetDefaults.
type testParams struct {
	N       int           `param:"n" default:"4" min:"1" max:"64" help:"a count"`
	Alpha   float64       `param:"alpha" default:"0.025" min:"-1" max:"1"`
	Size    ByteSize      `param:"size" default:"1MiB" min:"1KiB" max:"1GiB"`
	For     time.Duration `param:"for" default:"1s" min:"1ms" max:"1h"`
	Verify  bool          `param:"verify" default:"true"`
	Device  string        `param:"device" default:"cpu" choices:"cpu,gpu"`
	Corpus  string        `param:"corpus"`
	Seed    uint64        `param:"seed" default:"7"`
	Threads int           `param:"threads" min:"1"`
	hidden  int           // unexported fields are not parameters
}

func (p *testParams) SetDefaults() { p.Threads = 3 }

type testWorkload struct{ Typed[testParams] }

func (testWorkload) Name() string            { return "test" }
func (testWorkload) Summary() string         { return "decoder tests" }
func (testWorkload) Metrics() []schema.Field { return nil }
func (w testWorkload) Start(ctx context.Context, v Values) (Job, error) {
	_, err := w.Of(v)
	return nil, err
}

func TestDecodeFillsEveryType(t *testing.T) {
	for _, tc := range []struct {
		name string
		set  map[string]string
		want testParams
	}{
		{"defaults", nil, testParams{N: 4, Alpha: 0.025, Size: 1 << 20, For: time.Second, Verify: true, Device: "cpu", Seed: 7, Threads: 3}},
		{"every type given", map[string]string{"n": "0x10", "alpha": "-0.5", "size": "64MiB", "for": "2m", "verify": "false",
			"device": "gpu", "corpus": "a=b,c", "seed": "18446744073709551615", "threads": "9"},
			testParams{N: 16, Alpha: -0.5, Size: 64 << 20, For: 2 * time.Minute, Device: "gpu", Corpus: "a=b,c", Seed: 1<<64 - 1, Threads: 9}},
		{"bounds are inclusive", map[string]string{"n": "64", "alpha": "1", "size": "1GiB", "for": "1ms"},
			testParams{N: 64, Alpha: 1, Size: 1 << 30, For: time.Millisecond, Verify: true, Device: "cpu", Seed: 7, Threads: 3}},
		{"an empty string is a value", map[string]string{"corpus": ""},
			testParams{N: 4, Alpha: 0.025, Size: 1 << 20, For: time.Second, Verify: true, Device: "cpu", Seed: 7, Threads: 3}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Decode[testParams](tc.set)
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Errorf("got %+v\nwant %+v", got, tc.want)
			}
		})
	}
}

func TestDecodeErrorsNameTheKeyTheValueAndWhatIsAllowed(t *testing.T) {
	for _, tc := range []struct {
		set  map[string]string
		want string
	}{
		{map[string]string{"nn": "2"}, `unknown parameter "nn" (known: alpha, corpus, device, for, n, seed, size, threads, verify)`},
		{map[string]string{"hidden": "2"}, `unknown parameter "hidden" (known: alpha, corpus, device, for, n, seed, size, threads, verify)`},
		{map[string]string{"n": "x"}, `parameter n="x": not an integer`},
		{map[string]string{"n": "1.5"}, `parameter n="1.5": not an integer`},
		{map[string]string{"n": "99999999999999999999"}, `parameter n="99999999999999999999": not an integer`},
		{map[string]string{"n": "0"}, `parameter n="0": below the minimum 1 (allowed [1, 64])`},
		{map[string]string{"n": "65"}, `parameter n="65": above the maximum 64 (allowed [1, 64])`},
		{map[string]string{"seed": "-1"}, `parameter seed="-1": not a non-negative integer`},
		{map[string]string{"alpha": "fast"}, `parameter alpha="fast": not a number`},
		{map[string]string{"alpha": "NaN"}, `parameter alpha="NaN": not a number`},
		{map[string]string{"alpha": "-Inf"}, `parameter alpha="-Inf": not a number`},
		{map[string]string{"alpha": "1.01"}, `parameter alpha="1.01": above the maximum 1 (allowed [-1, 1])`},
		{map[string]string{"size": "2GiB"}, `parameter size="2GiB": above the maximum 1GiB (allowed [1KiB, 1GiB])`},
		{map[string]string{"size": "1000"}, `parameter size="1000": below the minimum 1KiB (allowed [1KiB, 1GiB])`},
		{map[string]string{"size": "12XB"}, `parameter size="12XB": unknown size unit "XB"`},
		{map[string]string{"size": "-1"}, `parameter size="-1": not a size (e.g. 64MiB)`},
		{map[string]string{"for": "10"}, `parameter for="10": not a duration (e.g. 30s)`},
		{map[string]string{"for": "2h"}, `parameter for="2h": above the maximum 1h0m0s (allowed [1ms, 1h0m0s])`},
		{map[string]string{"verify": "maybe"}, `parameter verify="maybe": not true or false`},
		{map[string]string{"device": "tpu"}, `parameter device="tpu": not one of cpu, gpu`},
		{map[string]string{"device": "CPU"}, `parameter device="CPU": not one of cpu, gpu`},
		{map[string]string{"threads": "0"}, `parameter threads="0": below the minimum 1 (allowed >= 1)`},
	} {
		_, err := Decode[testParams](tc.set)
		if err == nil || err.Error() != tc.want {
			t.Errorf("Decode(%v) = %v\nwant %s", tc.set, err, tc.want)
		}
	}
}

// Malformed tags are the programmer's mistakes: Register refuses them at
// init, naming the field.
func TestMalformedTagsAreFoundAtRegistration(t *testing.T) {
	type noTag struct {
		N int
	}
	type twice struct {
		A int `param:"a"`
		B int `param:"a"`
	}
	type badType struct {
		S []string `param:"s"`
	}
	type badBound struct {
		N int `param:"n" max:"1e10"`
	}
	type boolBound struct {
		B bool `param:"b" min:"false"`
	}
	type badChoices struct {
		N int `param:"n" choices:"1,2"`
	}
	type badDefault struct {
		N int `param:"n" default:"four"`
	}
	type defaultOutOfRange struct {
		N int `param:"n" min:"1"`
	}
	type defaultNotAChoice struct {
		S string `param:"s" choices:"a,b"`
	}
	for _, tc := range []struct {
		w    Workload
		want string
	}{
		{bare[noTag]{}, "field N has no param tag"},
		{bare[twice]{}, `fields A and B are both "a"`},
		{bare[badType]{}, "field S: type []string is not a parameter type"},
		{bare[badBound]{}, `field N: max "1e10" is not a bound of a int`},
		{bare[boolBound]{}, `field B: min "false" is not a bound of a bool`},
		{bare[badChoices]{}, "field N: choices apply to strings"},
		{bare[badDefault]{}, `parameter n: default "four": not an integer`},
		{bare[defaultOutOfRange]{}, `parameter n="0": below the minimum 1`},
		{bare[defaultNotAChoice]{}, `parameter s="": not one of a, b`},
		{bare[int]{}, "parameters int: want a struct"},
		{bare[struct{}]{}, "workload bare declares no metrics"},
		{declares{schema.Field{Name: "flops", Kind: schema.Float}}, `declared metric "flops" is no field of point/schema's iteration measurement`},
		{declares{schema.Field{Name: schema.FieldN, Kind: schema.Int}}, `declared metric "n" is`},
	} {
		err := Check(tc.w)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Check(%T) = %v, want %q", tc.w, err, tc.want)
		}
	}
	if err := Check(testWorkload{}); err != nil {
		t.Errorf("Check(testWorkload) = %v", err)
	}
}

// declares is a workload that declares the metrics it holds.
type declares []schema.Field

func (declares) Name() string                                     { return "declares" }
func (declares) Summary() string                                  { return "" }
func (declares) Params() []ParamSpec                              { return nil }
func (declares) Decode(map[string]string) (Values, error)         { return Values{}, nil }
func (declares) Start(ctx context.Context, v Values) (Job, error) { return nil, nil }
func (d declares) Metrics() []schema.Field                        { return d }

// bare is a workload with parameters P and nothing else.
type bare[P any] struct{ Typed[P] }

func (bare[P]) Name() string                                     { return "bare" }
func (bare[P]) Summary() string                                  { return "" }
func (bare[P]) Start(ctx context.Context, v Values) (Job, error) { return nil, nil }

func TestParamsDescribeTheStruct(t *testing.T) {
	specs := testWorkload{}.Params()
	want := []ParamSpec{
		{Name: "n", Type: Int, Default: "4", Help: "a count", Min: ptr(1), Max: ptr(64)},
		{Name: "alpha", Type: Float, Default: "0.025", Min: ptr(-1), Max: ptr(1)},
		{Name: "size", Type: Bytes, Default: "1MiB", Min: ptr(1 << 10), Max: ptr(1 << 30)},
		{Name: "for", Type: Duration, Default: "1s", Min: ptr(0.001), Max: ptr(3600)},
		{Name: "verify", Type: Bool, Default: "true"},
		{Name: "device", Type: String, Default: "cpu", Choices: []string{"cpu", "gpu"}},
		{Name: "corpus", Type: String, Default: ""},
		{Name: "seed", Type: Int, Default: "7"},
		{Name: "threads", Type: Int, Default: "3", Min: ptr(1)},
	}
	if !reflect.DeepEqual(specs, want) {
		t.Errorf("Params() =\n%+v\nwant\n%+v", specs, want)
	}
	ranges := map[string]string{"n": "[1, 64]", "size": "[1KiB, 1GiB]", "for": "[1ms, 1h0m0s]", "threads": ">= 1", "verify": ""}
	for _, s := range specs {
		if r, ok := ranges[s.Name]; ok && s.Range() != r {
			t.Errorf("%s: Range() = %q, want %q", s.Name, s.Range(), r)
		}
	}
	if r := (ParamSpec{Type: Float, Max: ptr(0.5)}).Range(); r != "<= 0.5" {
		t.Errorf("Range() = %q", r)
	}
}

func ptr(v float64) *float64 { return &v }

// Values keep the struct for the workload's Of and the strings run.json
// records; values for another workload are an error, never a zero struct.
func TestValuesCarryTheStruct(t *testing.T) {
	w := testWorkload{}
	v, err := w.Decode(map[string]string{"size": "64MiB", "for": "2m"})
	if err != nil {
		t.Fatal(err)
	}
	p, err := w.Of(v)
	if err != nil || p.Size != 64<<20 {
		t.Errorf("Of = %+v, %v", p, err)
	}
	m := v.Map()
	if m["size"] != "67108864" || m["for"] != "2m0s" || m["device"] != "cpu" || m["alpha"] != "0.025" || len(m) != 9 {
		t.Errorf("Map = %v", m)
	}
	m["size"] = "changed"
	if v.Map()["size"] != "67108864" {
		t.Error("Map shares its map")
	}
	if _, err := w.Of(Values{}); err == nil || !strings.Contains(err.Error(), "want workloads.testParams") {
		t.Errorf("Of(zero Values) = %v", err)
	}
	other, _ := CPUStream{}.Decode(nil)
	if _, err := w.Of(other); err == nil || !strings.Contains(err.Error(), "parameters are workloads.CPUStreamParams") {
		t.Errorf("Of(cpu-stream's values) = %v", err)
	}
	p.N = 99
	if _, err := w.With(p); err == nil || !strings.Contains(err.Error(), `n="99": above the maximum 64`) {
		t.Errorf("With(n=99) = %v", err)
	}
	p.N = 5
	if v, err := w.With(p); err != nil || v.Map()["n"] != "5" {
		t.Errorf("With(n=5) = %v, %v", v.Map(), err)
	}
}

func TestParseSet(t *testing.T) {
	got, err := ParseSet([]string{"size=64MiB", "name=a=b", "empty=", " key =v"})
	if err != nil || got["size"] != "64MiB" || got["name"] != "a=b" || got["empty"] != "" || got["key"] != "v" || len(got) != 4 {
		t.Errorf("ParseSet = %v, %v", got, err)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"size"}, `--set "size": want key=value`},
		{[]string{"=1"}, `--set "=1": empty key`},
		{[]string{"a=1", "a=2"}, `--set "a=2": a given twice`},
		{[]string{"a=1", " a=1"}, `--set " a=1": a given twice`},
	} {
		if _, err := ParseSet(tc.args); err == nil || err.Error() != tc.want {
			t.Errorf("ParseSet(%q) = %v, want %s", tc.args, err, tc.want)
		}
	}
}

func TestParseBytes(t *testing.T) {
	tests := []struct {
		in   string
		want int64
		bad  bool
	}{
		{"1048576", 1 << 20, false}, {"64MiB", 64 << 20, false}, {"1.5 GB", 1_500_000_000, false},
		{"2KiB", 2048, false}, {"0", 0, false}, {"", 0, true}, {"-1", 0, true}, {"MiB", 0, true},
		{"1e9", 0, true}, {"9999999TiB", 0, true}, {"1.2.3MB", 0, true},
	}
	for _, tt := range tests {
		got, err := ParseBytes(tt.in)
		if (err != nil) != tt.bad || got != tt.want {
			t.Errorf("ParseBytes(%q) = %d, %v", tt.in, got, err)
		}
	}
}

func FuzzParseBytes(f *testing.F) {
	for _, s := range []string{"64MiB", "1.5 GB", "0", "-1", "1e400", "9999999999999999999TiB", ".", "1..2"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, err := ParseBytes(s)
		if err == nil && n < 0 {
			t.Errorf("ParseBytes(%q) = %d", s, n)
		}
	})
}

// Whatever the decoder accepts is within its bounds and choices, and
// comes back the same from the strings run.json records: what an
// evaluation recorded is what --tuned runs.
func FuzzDecode(f *testing.F) {
	f.Add("n", "4", "size", "64MiB")
	f.Add("n", "0x10", "for", "-5s")
	f.Add("alpha", "1e-300", "seed", "0")
	f.Add("size", "1.5 GiB", "device", "gpu")
	f.Add("for", "1h0m0.000000001s", "verify", "T")
	f.Add("threads", "+9", "alpha", "-0")
	f.Fuzz(func(t *testing.T, k1, v1, k2, v2 string) {
		w := testWorkload{}
		v, err := w.Decode(map[string]string{k1: v1, k2: v2})
		if err != nil {
			if !strings.Contains(err.Error(), "parameter") {
				t.Errorf("error %q names no parameter", err)
			}
			return
		}
		p, err := w.Of(v)
		if err != nil {
			t.Fatal(err)
		}
		if p.N < 1 || p.N > 64 || p.Alpha < -1 || p.Alpha > 1 || p.Size < 1<<10 || p.Size > 1<<30 ||
			p.For < time.Millisecond || p.For > time.Hour || (p.Device != "cpu" && p.Device != "gpu") || p.Threads < 1 {
			t.Errorf("%s=%q %s=%q accepted as %+v", k1, v1, k2, v2, p)
		}
		again, err := w.Decode(v.Map())
		if err != nil {
			t.Fatalf("Map() %v does not decode: %v", v.Map(), err)
		}
		if q, _ := w.Of(again); q != p {
			t.Errorf("round trip %+v -> %v -> %+v", p, v.Map(), q)
		}
	})
}
