package analysis

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/heatsink-hpc/heatsink/rundir"
)

// FuzzLoadAnalyze feeds arbitrary points.lp content through Load and
// Analyze: whatever the input, there must be no panic, and the report must
// encode as JSON with every number finite (NaN or ±Inf would be an invented
// number, and cannot be JSON).
func FuzzLoadAnalyze(f *testing.F) {
	t0 := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC).UnixNano()
	seeds := []string{
		"",
		"gpu,gpu=0 temp_c=40 1735689600000000000\ngpu,gpu=0 temp_c=80 1735689660000000000\n",
		"gpu,gpu=0 temp_c=40,mem_temp_c=50 1735689600000000000\ngpu,gpu=0 temp_c=NaN 1735689601000000000\n",
		"tank,tank=t coolant_temp_c=30,pump1_rpm=0,dissipation_kw=0,consumption_w=50 1735689600000000000\n" +
			"tank,tank=t coolant_temp_c=31,pump1_rpm=900,dissipation_kw=2,consumption_w=300 1735689700000000000\n" +
			"tank,tank=t coolant_temp_c=30,pump1_rpm=0,dissipation_kw=0,consumption_w=50 1735689800000000000\n",
		"hwmon,chip=c,class=cpu_core,sensor=t1 temp_c=50 1735689900000000000\nhwmon,chip=c,class=cpu_core,sensor=t1 temp_c=45 1735689600000000000\n",
		"pdu,pdu=p power_w=500 1735689600000000000\ngpu,gpu=0 power_w=100,temp_c=30 1735689600000000000\n",
		"event,kind=phase_start,phase=load,run=r message=\"x\" 1735689600000000000\n",
	}
	for _, s := range seeds {
		f.Add([]byte(s))
	}
	// run.json is written once: WriteMeta fsyncs, too slow per input.
	dir := f.TempDir()
	b := func(s int64) time.Time { return time.Unix(0, t0+s*int64(time.Second)) }
	e1, e2, e3 := b(30), b(90), b(3600)
	m := &rundir.Meta{ID: "fuzz", Start: b(0), IntervalS: 1, Labels: map[string]string{"cooling": "air"},
		Phases: []rundir.Phase{{Name: "baseline", Start: b(0), End: &e1}, {Name: "load", Start: e1, End: &e2}, {Name: "cooldown", Start: e2, End: &e3}},
		Workload: &rundir.Workload{Name: "w", Iterations: []rundir.Iteration{
			{N: 0, Start: b(30), End: b(50), RuntimeS: 20}, {N: 1, Start: b(50), End: b(70), RuntimeS: 21}, {N: 2, Start: b(70), End: b(90), RuntimeS: 23}}}}
	if err := rundir.WriteMeta(dir, m); err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if err := os.WriteFile(filepath.Join(dir, rundir.PointsFile), data, 0o644); err != nil {
			t.Fatal(err)
		}
		for _, workers := range []int{1, 3} {
			r, err := load(dir, workers, 0)
			if err != nil {
				t.Fatalf("load: %v", err)
			}
			rep := Analyze(r, DefaultOptions())
			if _, err := json.Marshal(rep); err != nil {
				t.Fatalf("report does not encode: %v", err)
			}
			checkFinite(t, reflect.ValueOf(rep), "report")
		}
	})
}

// checkFinite walks v and fails on any NaN or infinite float.
func checkFinite(t *testing.T, v reflect.Value, path string) {
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			checkFinite(t, v.Elem(), path)
		}
	case reflect.Struct:
		for i := 0; i < v.NumField(); i++ {
			f := v.Type().Field(i)
			if f.IsExported() && f.Tag.Get("json") != "-" {
				checkFinite(t, v.Field(i), path+"."+f.Name)
			}
		}
	case reflect.Slice, reflect.Array:
		for i := 0; i < v.Len(); i++ {
			checkFinite(t, v.Index(i), path)
		}
	case reflect.Float64:
		if x := v.Float(); math.IsNaN(x) || math.IsInf(x, 0) {
			t.Errorf("%s = %v", path, x)
		}
	}
}
