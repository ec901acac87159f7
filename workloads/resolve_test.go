package workloads

import (
	"reflect"
	"strings"
	"testing"
)

// One duplicate policy: within a layer a key is given once (ParseSet
// refuses a second); across layers the later wins, with a note naming both.
func TestResolvePrecedenceAndNotes(t *testing.T) {
	tuned := Layer{Source: "--tuned t/best.yaml", Values: map[string]string{"n": "8", "size": "2MiB", "device": "gpu"}}
	for _, tc := range []struct {
		name      string
		layers    []Layer
		want      map[string]string // of Map(), the keys to check
		wantNotes []string
		wantErr   string
	}{
		{name: "defaults", want: map[string]string{"n": "4", "size": "1048576"}},
		{name: "--set alone", layers: []Layer{{Source: "--set", Values: map[string]string{"n": "9"}}}, want: map[string]string{"n": "9"}},
		{name: "--tuned alone", layers: []Layer{tuned}, want: map[string]string{"n": "8", "size": "2097152", "device": "gpu"}},
		{name: "--set overrides --tuned, noted", layers: []Layer{tuned, {Source: "--set", Values: map[string]string{"n": "1", "device": "cpu", "verify": "false"}}},
			want:      map[string]string{"n": "1", "size": "2097152", "device": "cpu", "verify": "false"},
			wantNotes: []string{"--set device=cpu overrides device=gpu from --tuned t/best.yaml", "--set n=1 overrides n=8 from --tuned t/best.yaml"}},
		{name: "the same value twice is no override", layers: []Layer{tuned, {Source: "--set", Values: map[string]string{"n": "8"}}},
			want: map[string]string{"n": "8"}},
		{name: "an unknown key names the workload", layers: []Layer{{Source: "--set", Values: map[string]string{"m": "1"}}},
			wantErr: `workload test: unknown parameter "m" (known: alpha, corpus, device, for, n, seed, size, threads, verify)`},
		{name: "a bad value from any layer names the layers", layers: []Layer{tuned, {Source: "--set", Values: map[string]string{"n": "100"}}},
			wantErr:   `workload test: parameter n="100": above the maximum 64 (allowed [1, 64]) (values from --tuned t/best.yaml, --set)`,
			wantNotes: []string{"--set n=100 overrides n=8 from --tuned t/best.yaml"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v, notes, err := Resolve(testWorkload{}, tc.layers...)
			if !reflect.DeepEqual(notes, tc.wantNotes) {
				t.Errorf("notes %q, want %q", notes, tc.wantNotes)
			}
			if tc.wantErr != "" {
				if err == nil || err.Error() != tc.wantErr {
					t.Fatalf("err %v, want %s", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			m := v.Map()
			for k, want := range tc.want {
				if m[k] != want {
					t.Errorf("%s = %q, want %q", k, m[k], want)
				}
			}
		})
	}
}

// The duplicate policy within a layer is ParseSet's, whatever the layer
// is resolved with.
func TestResolveTakesParseSetsLayers(t *testing.T) {
	if _, err := ParseSet([]string{"n=1", "n=2"}); err == nil || !strings.Contains(err.Error(), "n given twice") {
		t.Errorf("ParseSet with n twice: %v", err)
	}
}
