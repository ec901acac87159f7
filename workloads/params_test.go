package workloads

import (
	"strings"
	"testing"
	"time"
)

var testSpecs = []ParamSpec{
	{Name: "n", Type: Int, Default: "4", Min: Bound(1), Max: Bound(64)},
	{Name: "alpha", Type: Float, Default: "0.025"},
	{Name: "size", Type: Bytes, Default: "1MiB", Max: Bound(1 << 30)},
	{Name: "for", Type: Duration, Default: "1s"},
	{Name: "verify", Type: Bool, Default: "true"},
	{Name: "device", Type: String, Default: "cpu", Choices: []string{"cpu", "gpu"}},
	{Name: "corpus", Type: Int},
}

func TestParseValues(t *testing.T) {
	v, err := ParseValues(testSpecs, map[string]string{"corpus": "7", "size": "64MiB", "device": "gpu", "for": "2m"})
	if err != nil {
		t.Fatal(err)
	}
	if v.Int("n") != 4 || v.Float("alpha") != 0.025 || v.Bytes("size") != 64<<20 || v.Duration("for") != 2*time.Minute ||
		!v.Bool("verify") || v.String("device") != "gpu" || v.Int("corpus") != 7 {
		t.Errorf("values %v", v.Map())
	}
	if m := v.Map(); m["size"] != "67108864" || m["device"] != "gpu" {
		t.Errorf("Map %v", m)
	}
}

func TestParseValuesErrorsNameTheParameter(t *testing.T) {
	tests := []struct {
		set  map[string]string
		want string
	}{
		{map[string]string{"corpus": "1", "nn": "2"}, `unknown parameter "nn" (known: alpha, corpus, device, for, n, size, verify)`},
		{map[string]string{}, "parameter corpus is required"},
		{map[string]string{"corpus": "x"}, `corpus="x": not an integer`},
		{map[string]string{"corpus": "1", "n": "0"}, `n="0": below the minimum 1`},
		{map[string]string{"corpus": "1", "n": "65"}, `n="65": above the maximum 64`},
		{map[string]string{"corpus": "1", "alpha": "fast"}, `alpha="fast": not a number`},
		{map[string]string{"corpus": "1", "size": "2GiB"}, `size="2GiB": above the maximum`},
		{map[string]string{"corpus": "1", "size": "12XB"}, `unknown size unit "XB"`},
		{map[string]string{"corpus": "1", "for": "10"}, `for="10": not a duration`},
		{map[string]string{"corpus": "1", "verify": "maybe"}, `verify="maybe": not true or false`},
		{map[string]string{"corpus": "1", "device": "tpu"}, `device="tpu": not one of cpu, gpu`},
	}
	for _, tt := range tests {
		_, err := ParseValues(testSpecs, tt.set)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("ParseValues(%v) = %v, want %q", tt.set, err, tt.want)
		}
	}
}

func TestParseSet(t *testing.T) {
	got, err := ParseSet([]string{"size=64MiB", "name=a=b", "empty="})
	if err != nil || got["size"] != "64MiB" || got["name"] != "a=b" || got["empty"] != "" || len(got) != 3 {
		t.Errorf("ParseSet = %v, %v", got, err)
	}
	for _, bad := range [][]string{{"size"}, {"=1"}, {"a=1", "a=2"}} {
		if _, err := ParseSet(bad); err == nil || !strings.Contains(err.Error(), bad[len(bad)-1]) {
			t.Errorf("ParseSet(%q) = %v", bad, err)
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

func FuzzParseValues(f *testing.F) {
	f.Add("n", "4", "size", "64MiB")
	f.Add("corpus", "0x10", "for", "-5s")
	f.Fuzz(func(t *testing.T, k1, v1, k2, v2 string) {
		v, err := ParseValues(testSpecs, map[string]string{k1: v1, k2: v2, "corpus": "1"})
		if err != nil {
			return
		}
		// Whatever passed is within its bounds.
		if n := v.Int("n"); n < 1 || n > 64 {
			t.Errorf("n = %d accepted", n)
		}
		if s := v.Bytes("size"); s < 0 || s > 1<<30 {
			t.Errorf("size = %d accepted", s)
		}
	})
}
