package nvml

import (
	"context"
	"encoding/binary"
	"errors"
	"math"
	"strconv"
	"strings"
	"testing"
	"time"

	gonvml "github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock"

	"github.com/heatsink-hpc/heatsink/point"
	"github.com/heatsink-hpc/heatsink/point/schema"
	"github.com/heatsink-hpc/heatsink/sensors/filter"
)

var t0 = time.Now().Truncate(time.Second)

func discovered(t *testing.T, srv *dgxH100, opts Options) *Source {
	t.Helper()
	opts.Library = srv
	s := New(opts)
	if err := s.Discover(context.Background()); err != nil {
		t.Fatalf("Discover: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func sample(t *testing.T, s *Source, at time.Time) ([]point.Point, error) {
	t.Helper()
	return s.Sample(context.Background(), at, nil)
}

// fields renders a point's fields as key=value with their line-protocol
// types, so a test sees a float where it expects one.
func fields(p point.Point) map[string]string {
	m := map[string]string{}
	for _, f := range p.Fields {
		m[f.Key] = f.Value.Kind().String() + ":" + f.Value.String()
	}
	return m
}

func TestSampleReadsEveryFieldOfEachH100(t *testing.T) {
	srv, _ := newDGXH100(8)
	s := discovered(t, srv, Options{})
	pts, err := sample(t, s, t0)
	if err != nil {
		t.Fatalf("Sample: %v", err)
	}
	if len(pts) != 8 {
		t.Fatalf("got %d points, want one per GPU (8)", len(pts))
	}
	for i, p := range pts {
		if p.Measurement != "gpu" || !p.Time.Equal(t0) {
			t.Errorf("point %d: measurement %q time %v", i, p.Measurement, p.Time)
		}
		wantTags := map[string]string{
			"gpu":   strconv.Itoa(i),
			"uuid":  "GPU-5b1c3f2e-9a4d-4c1e-8f00-00000000000" + strconv.Itoa(i),
			"model": "NVIDIA H100 80GB HBM3",
		}
		if len(p.Tags) != len(wantTags) {
			t.Errorf("gpu %d: tags %v, want %v", i, p.Tags, wantTags)
		}
		for k, v := range wantTags {
			if got := p.Tag(k); got != v {
				t.Errorf("gpu %d: tag %s = %q, want %q", i, k, got, v)
			}
		}
		want := map[string]string{
			"temp_c":              "float:" + strconv.Itoa(70+i),
			"mem_temp_c":          "float:" + strconv.Itoa(78+i),
			"power_w":             "float:699.512",
			"energy_j":            "float:" + strconv.FormatFloat(float64(123456789012+i)/1e3, 'g', -1, 64),
			"power_limit_w":       "float:700",
			"util_pct":            "float:100",
			"mem_util_pct":        "float:45",
			"mem_used_bytes":      "int:10737418240i",
			"mem_total_bytes":     "int:85520809984i",
			"pstate":              "int:0i",
			"sm_clock_mhz":        "float:1755",
			"mem_clock_mhz":       "float:2619",
			"clock_event_reasons": "int:4i",
			"throttle_thermal":    "bool:false",
			"throttle_power":      "bool:true",
			"slowdown_c":          "float:89",
			"shutdown_c":          "float:95",
			"gpu_max_c":           "float:87",
			"mem_max_c":           "float:95",
		}
		got := fields(p)
		for k, v := range want {
			if got[k] != v {
				t.Errorf("gpu %d: %s = %q, want %q", i, k, got[k], v)
			}
		}
		for k := range got {
			if _, ok := want[k]; !ok {
				t.Errorf("gpu %d: unexpected field %s=%s", i, k, got[k])
			}
		}
		// Every point must encode as line protocol.
		if str := p.String(); strings.HasPrefix(str, "<invalid") {
			t.Errorf("gpu %d: %s", i, str)
		}
	}
}

func TestUnsupportedCallsAreOmittedAndLearntOnce(t *testing.T) {
	srv, st := newDGXH100(2)
	// GPU 0: no memory-junction sensor (the field fails, the call succeeds),
	// no energy counter, no clock event reasons, no GPU-max threshold.
	st[0].MemTempFieldReturns = gonvml.ERROR_NOT_SUPPORTED
	delete(st[0].Thresholds, gonvml.TEMPERATURE_THRESHOLD_GPU_MAX)
	d0 := srv.Devices[0]
	d0.GetTotalEnergyConsumptionFunc = func() (uint64, gonvml.Return) { return 0, gonvml.ERROR_NOT_SUPPORTED }
	d0.GetCurrentClocksEventReasonsFunc = func() (uint64, gonvml.Return) { return 0, gonvml.ERROR_NOT_SUPPORTED }
	d0.GetPerformanceStateFunc = func() (gonvml.Pstates, gonvml.Return) { return 0, gonvml.ERROR_FUNCTION_NOT_FOUND }
	s := discovered(t, srv, Options{})

	const ticks = 3
	for k := range ticks {
		pts, err := sample(t, s, t0.Add(time.Duration(k)*time.Second))
		if err != nil {
			t.Fatalf("tick %d: unsupported readings must not be errors: %v", k, err)
		}
		if len(pts) != 2 {
			t.Fatalf("tick %d: %d points, want 2", k, len(pts))
		}
		for _, f := range []string{"mem_temp_c", "energy_j", "clock_event_reasons", "throttle_thermal", "throttle_power", "pstate", "gpu_max_c"} {
			if v, ok := pts[0].Field(f); ok {
				t.Errorf("tick %d: gpu 0 has unsupported field %s=%v; it must be absent, not zero", k, f, v)
			}
			if _, ok := pts[1].Field(f); !ok {
				t.Errorf("tick %d: gpu 1 lacks %s, which it supports", k, f)
			}
		}
		if _, ok := pts[0].Field("temp_c"); !ok {
			t.Errorf("tick %d: gpu 0 lost its supported temp_c", k)
		}
	}
	for name, n := range map[string]int{
		"GetFieldValues":               len(d0.GetFieldValuesCalls()),
		"GetTotalEnergyConsumption":    len(d0.GetTotalEnergyConsumptionCalls()),
		"GetCurrentClocksEventReasons": len(d0.GetCurrentClocksEventReasonsCalls()),
		"GetPerformanceState":          len(d0.GetPerformanceStateCalls()),
	} {
		if n != 1 {
			t.Errorf("gpu 0 %s called %d times over %d ticks; an unsupported call must be made once", name, n, ticks)
		}
	}
	if n := len(srv.Devices[1].GetTotalEnergyConsumptionCalls()); n != ticks {
		t.Errorf("gpu 1 GetTotalEnergyConsumption called %d times, want %d (learning is per GPU)", n, ticks)
	}
	if n := len(d0.GetTemperatureCalls()); n != ticks {
		t.Errorf("gpu 0 GetTemperature called %d times, want %d", n, ticks)
	}
}

func TestReadingErrorsAreJoinedAndTheRestKept(t *testing.T) {
	srv, _ := newDGXH100(2)
	d1 := srv.Devices[1]
	d1.GetPowerUsageFunc = func() (uint32, gonvml.Return) { return 0, gonvml.ERROR_UNKNOWN }
	d1.GetUtilizationRatesFunc = func() (gonvml.Utilization, gonvml.Return) {
		return gonvml.Utilization{}, gonvml.ERROR_TIMEOUT
	}
	s := discovered(t, srv, Options{})
	for k := range 2 {
		pts, err := sample(t, s, t0.Add(time.Duration(k)*time.Second))
		if len(pts) != 2 {
			t.Fatalf("tick %d: %d points, want both GPUs", k, len(pts))
		}
		if !errors.Is(err, gonvml.ERROR_UNKNOWN) || !errors.Is(err, gonvml.ERROR_TIMEOUT) {
			t.Fatalf("tick %d: error %v, want both failures joined", k, err)
		}
		for _, want := range []string{"gpu 1: GetPowerUsage", "gpu 1: GetUtilizationRates"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("tick %d: error %q does not name %q", k, err, want)
			}
		}
		for _, f := range []string{"power_w", "util_pct", "mem_util_pct"} {
			if _, ok := pts[1].Field(f); ok {
				t.Errorf("tick %d: gpu 1 has %s despite its failed read", k, f)
			}
			if _, ok := pts[0].Field(f); !ok {
				t.Errorf("tick %d: gpu 0 lacks %s", k, f)
			}
		}
		if v, _ := pts[1].Float("temp_c"); v != 71 {
			t.Errorf("tick %d: gpu 1 temp_c = %v, want 71 kept", k, v)
		}
	}
	// A transient error is not learnt: the call is retried every tick.
	if n := len(d1.GetPowerUsageCalls()); n != 2 {
		t.Errorf("GetPowerUsage called %d times over 2 ticks after errors, want 2", n)
	}
}

func TestInitFailureMakesTheSourceUnavailable(t *testing.T) {
	for _, tc := range []struct {
		ret    gonvml.Return
		reason string
	}{
		{gonvml.ERROR_LIBRARY_NOT_FOUND, "libnvidia-ml.so.1 not found"},
		{gonvml.ERROR_DRIVER_NOT_LOADED, "kernel driver is not loaded"},
		{gonvml.ERROR_NO_PERMISSION, "no permission"},
		{gonvml.ERROR_LIB_RM_VERSION_MISMATCH, "versions differ"},
		{gonvml.ERROR_UNKNOWN, "ERROR_UNKNOWN"},
	} {
		t.Run(tc.ret.Error(), func(t *testing.T) {
			// Only Init and Shutdown are set: any other NVML call panics
			// in the mock, as it would crash against the real library.
			lib := &mock.Interface{
				InitFunc:     func() gonvml.Return { return tc.ret },
				ShutdownFunc: func() gonvml.Return { return gonvml.SUCCESS },
			}
			s := New(Options{Library: lib})
			err := s.Discover(context.Background())
			if !errors.Is(err, errors.ErrUnsupported) || !errors.Is(err, tc.ret) {
				t.Fatalf("Discover = %v, want ErrUnsupported wrapping %v", err, tc.ret)
			}
			if !strings.Contains(err.Error(), tc.reason) {
				t.Errorf("error %q does not say %q", err, tc.reason)
			}
			pts, err := s.Sample(context.Background(), t0, nil)
			if err == nil || len(pts) != 0 {
				t.Errorf("Sample after failed Init = %d points, %v; want an error and nothing", len(pts), err)
			}
			if d := s.Describe(); len(d) != 0 {
				t.Errorf("Describe after failed Init = %q", d)
			}
			if err := s.Close(); err != nil {
				t.Errorf("Close: %v", err)
			}
			if n := len(lib.ShutdownCalls()); n != 0 {
				t.Errorf("Shutdown called %d times after a failed Init", n)
			}
		})
	}
}

func TestNoGPUIsUnavailable(t *testing.T) {
	srv, _ := newDGXH100(0)
	s := New(Options{Library: srv})
	err := s.Discover(context.Background())
	if !errors.Is(err, errors.ErrUnsupported) || !strings.Contains(err.Error(), "no NVIDIA GPU") {
		t.Fatalf("Discover = %v, want unavailable: no NVIDIA GPU", err)
	}
	if n := len(srv.ShutdownCalls()); n != 1 {
		t.Errorf("Shutdown called %d times, want 1: an Init that found nothing must be released", n)
	}
}

func TestLostGPUGivesNoPointAndAnError(t *testing.T) {
	srv, _ := newDGXH100(2)
	s := discovered(t, srv, Options{})
	// GPU 1 falls off the bus after its temperature was read.
	srv.Devices[1].GetPowerUsageFunc = func() (uint32, gonvml.Return) { return 0, gonvml.ERROR_GPU_IS_LOST }
	pts, err := sample(t, s, t0)
	if len(pts) != 1 || pts[0].Tag("gpu") != "0" {
		t.Fatalf("got %d points (%v), want only gpu 0", len(pts), pts)
	}
	if !errors.Is(err, gonvml.ERROR_GPU_IS_LOST) || !strings.Contains(err.Error(), "gpu 1") {
		t.Fatalf("error %v, want gpu 1 lost", err)
	}
	// Nothing more is asked of a GPU once it is lost within a sample.
	if n := len(srv.Devices[1].GetUtilizationRatesCalls()); n != 0 {
		t.Errorf("GetUtilizationRates called %d times on a lost GPU", n)
	}
}

func TestAllGPUsLostSendsTheSourceBackToDiscovery(t *testing.T) {
	srv, st := newDGXH100(1)
	s := discovered(t, srv, Options{})
	srv.Devices[0].GetTemperatureFunc = func(gonvml.TemperatureSensors) (uint32, gonvml.Return) {
		return 0, gonvml.ERROR_GPU_IS_LOST
	}
	pts, err := sample(t, s, t0)
	if len(pts) != 0 || !errors.Is(err, gonvml.ERROR_GPU_IS_LOST) {
		t.Fatalf("Sample = %d points, %v; want none and GPU_IS_LOST", len(pts), err)
	}
	// The collector re-discovers: the old handles are shut down first, then
	// NVML initialised afresh and the (reset) GPU found again.
	srv.Devices[0] = newH100Device(0, st[0])
	if err := s.Discover(context.Background()); err != nil {
		t.Fatalf("re-Discover: %v", err)
	}
	if i, sh := len(srv.InitCalls()), len(srv.ShutdownCalls()); i != 2 || sh != 1 {
		t.Errorf("Init %d, Shutdown %d times; want 2 and 1 (Shutdown before re-Init)", i, sh)
	}
	pts, err = sample(t, s, t0.Add(time.Second))
	if err != nil || len(pts) != 1 {
		t.Fatalf("after re-discovery: %d points, %v", len(pts), err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	if n := len(srv.ShutdownCalls()); n != 2 {
		t.Errorf("Shutdown called %d times, want one per successful Init (2)", n)
	}
}

func TestDiscoverRetriesInitAfterAFailedShutdown(t *testing.T) {
	srv, _ := newDGXH100(1)
	s := discovered(t, srv, Options{})
	srv.ShutdownFunc = func() gonvml.Return { return gonvml.ERROR_UNINITIALIZED }
	if err := s.Discover(context.Background()); err != nil {
		t.Fatalf("Discover after a failed Shutdown: %v", err)
	}
	if n := len(srv.InitCalls()); n != 2 {
		t.Errorf("Init called %d times, want 2", n)
	}
}

// schema writes the clock event bits out so that readers of recordings need
// no NVML; this holds them to the bindings' constants.
func TestClockEventReasonsDecoding(t *testing.T) {
	for _, tc := range []struct {
		name           string
		reasons        uint64
		thermal, power bool
	}{
		{"none", gonvml.ClocksEventReasonNone, false, false},
		{"idle", gonvml.ClocksEventReasonGpuIdle, false, false},
		{"applications clocks", gonvml.ClocksEventReasonApplicationsClocksSetting, false, false},
		{"sync boost", gonvml.ClocksEventReasonSyncBoost, false, false},
		{"display clock", gonvml.ClocksEventReasonDisplayClockSetting, false, false},
		{"sw power cap", 0x4, false, true},
		{"hw slowdown", 0x8, true, false},
		{"sw thermal slowdown", 0x20, true, false},
		{"hw thermal slowdown", 0x40, true, false},
		{"hw power brake", 0x80, false, true},
		{"power cap and sw thermal", 0x4 | 0x20, true, true},
		{"idle and power brake", 0x1 | 0x80, false, true},
		{"all", gonvml.ClocksEventReasonAll, true, true},
		{"unknown future bit", 1 << 40, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			thermal, power := schema.DecodeClockEvents(tc.reasons)
			if thermal != tc.thermal || power != tc.power {
				t.Errorf("schema.DecodeClockEvents(%#x) = thermal %v, power %v; want %v, %v",
					tc.reasons, thermal, power, tc.thermal, tc.power)
			}
		})
	}
}

// The clock event bits schema decodes are NVML's.
func TestSchemaClockEventBitsAreNVMLs(t *testing.T) {
	for _, tc := range []struct {
		name         string
		schema, nvml uint64
	}{
		{"sw power cap", schema.ClockEventSwPowerCap, gonvml.ClocksEventReasonSwPowerCap},
		{"hw slowdown", schema.ClockEventHwSlowdown, gonvml.ClocksThrottleReasonHwSlowdown},
		{"sw thermal slowdown", schema.ClockEventSwThermalSlowdown, gonvml.ClocksEventReasonSwThermalSlowdown},
		{"hw thermal slowdown", schema.ClockEventHwThermalSlowdown, gonvml.ClocksThrottleReasonHwThermalSlowdown},
		{"hw power brake", schema.ClockEventHwPowerBrakeSlowdown, gonvml.ClocksThrottleReasonHwPowerBrakeSlowdown},
	} {
		if tc.schema != tc.nvml {
			t.Errorf("%s: schema has %#x, NVML %#x", tc.name, tc.schema, tc.nvml)
		}
	}
}

func TestSampleDecodesThrottleFlags(t *testing.T) {
	srv, st := newDGXH100(1)
	s := discovered(t, srv, Options{})
	st[0].Reasons = gonvml.ClocksThrottleReasonHwThermalSlowdown
	pts, err := sample(t, s, t0)
	if err != nil {
		t.Fatal(err)
	}
	got := fields(pts[0])
	if got["clock_event_reasons"] != "int:64i" || got["throttle_thermal"] != "bool:true" || got["throttle_power"] != "bool:false" {
		t.Errorf("HW thermal slowdown decoded as %s %s %s", got["clock_event_reasons"], got["throttle_thermal"], got["throttle_power"])
	}
}

func TestOlderDriverFallsBackToThrottleReasons(t *testing.T) {
	srv, _ := newDGXH100(1)
	srv.Missing["nvmlDeviceGetCurrentClocksEventReasons"] = true
	// Calling a function the driver lacks crashes; the mock panics likewise.
	srv.Devices[0].GetCurrentClocksEventReasonsFunc = nil
	s := discovered(t, srv, Options{})
	pts, err := sample(t, s, t0)
	if err != nil {
		t.Fatal(err)
	}
	if v, _ := pts[0].Float("clock_event_reasons"); v != 4 {
		t.Errorf("clock_event_reasons = %v, want 4 from the throttle reasons call", v)
	}
	if n := len(srv.Devices[0].GetCurrentClocksThrottleReasonsCalls()); n != 1 {
		t.Errorf("GetCurrentClocksThrottleReasons called %d times, want 1", n)
	}
}

func TestPowerLimitIsReadRarely(t *testing.T) {
	srv, st := newDGXH100(1)
	s := discovered(t, srv, Options{LimitRefresh: time.Minute})
	d := srv.Devices[0]
	if n := len(d.GetEnforcedPowerLimitCalls()); n != 1 {
		t.Fatalf("GetEnforcedPowerLimit called %d times at discovery, want 1", n)
	}
	start := time.Now()
	for k := range 30 {
		if _, err := sample(t, s, start.Add(time.Duration(k)*time.Second)); err != nil {
			t.Fatal(err)
		}
	}
	if n := len(d.GetEnforcedPowerLimitCalls()); n != 1 {
		t.Errorf("GetEnforcedPowerLimit called %d times in 30 s, want only the discovery read", n)
	}
	st[0].LimitMW = 450000 // an administrator lowered the cap
	pts, err := sample(t, s, start.Add(2*time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	if n := len(d.GetEnforcedPowerLimitCalls()); n != 2 {
		t.Errorf("GetEnforcedPowerLimit called %d times after 2 min, want 2", n)
	}
	if v, _ := pts[0].Float("power_limit_w"); v != 450 {
		t.Errorf("power_limit_w = %v after refresh, want 450", v)
	}
}

func TestFailedPowerLimitReadIsNotReportedStale(t *testing.T) {
	srv, _ := newDGXH100(1)
	s := discovered(t, srv, Options{LimitRefresh: time.Second})
	srv.Devices[0].GetEnforcedPowerLimitFunc = func() (uint32, gonvml.Return) { return 0, gonvml.ERROR_UNKNOWN }
	pts, err := sample(t, s, time.Now().Add(time.Hour))
	if !errors.Is(err, gonvml.ERROR_UNKNOWN) {
		t.Fatalf("error %v, want the failed limit read", err)
	}
	if v, ok := pts[0].Field("power_limit_w"); ok {
		t.Errorf("power_limit_w = %v reported after its read failed", v)
	}
}

func TestFiltersSelectGPUsAndFields(t *testing.T) {
	srv, _ := newDGXH100(4)
	f, err := filter.New(filter.Spec{
		DeviceExclude: `^(1|GPU-5b1c3f2e-9a4d-4c1e-8f00-000000000003)$`,
		SensorExclude: `^(mem_temp_c|util_pct|mem_util_pct)$`,
	})
	if err != nil {
		t.Fatal(err)
	}
	s := discovered(t, srv, Options{Filter: f})
	pts, err := sample(t, s, t0)
	if err != nil {
		t.Fatal(err)
	}
	var gpus []string
	for _, p := range pts {
		gpus = append(gpus, p.Tag("gpu"))
		for _, f := range []string{"mem_temp_c", "util_pct", "mem_util_pct"} {
			if _, ok := p.Field(f); ok {
				t.Errorf("gpu %s: excluded field %s present", p.Tag("gpu"), f)
			}
		}
		if _, ok := p.Field("temp_c"); !ok {
			t.Errorf("gpu %s: temp_c missing", p.Tag("gpu"))
		}
	}
	if strings.Join(gpus, ",") != "0,2" {
		t.Errorf("sampled GPUs %v, want 0,2 (1 by index and 3 by UUID excluded)", gpus)
	}
	for i, d := range srv.Devices {
		if n := len(d.GetFieldValuesCalls()) + len(d.GetUtilizationRatesCalls()); n != 0 {
			t.Errorf("gpu %d: excluded calls made %d times", i, n)
		}
	}
	if n := len(srv.Devices[1].GetTemperatureCalls()); n != 0 {
		t.Errorf("excluded gpu 1 sampled %d times", n)
	}

	f, err = filter.New(filter.Spec{DeviceInclude: `^7$`})
	if err != nil {
		t.Fatal(err)
	}
	only := New(Options{Library: srv, Filter: f})
	err = only.Discover(context.Background())
	if !errors.Is(err, errors.ErrUnsupported) || !strings.Contains(err.Error(), "device filter") {
		t.Errorf("filter matching nothing: Discover = %v, want unavailable naming the filter", err)
	}
}

func TestDescribeListsDriverGPUsAndLimits(t *testing.T) {
	srv, _ := newDGXH100(2)
	s := discovered(t, srv, Options{})
	got := s.Describe()
	want := []string{
		"driver 580.65.06",
		"gpu0 NVIDIA H100 80GB HBM3 GPU-5b1c3f2e-9a4d-4c1e-8f00-000000000000: slowdown_c=89 shutdown_c=95 gpu_max_c=87 mem_max_c=95 power_limit_w=700",
		"gpu1 NVIDIA H100 80GB HBM3 GPU-5b1c3f2e-9a4d-4c1e-8f00-000000000001: slowdown_c=89 shutdown_c=95 gpu_max_c=87 mem_max_c=95 power_limit_w=700",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("Describe =\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestDiscoveryErrorsAreReportedWithTheFirstSample(t *testing.T) {
	srv, _ := newDGXH100(2)
	srv.Devices[1].GetNameFunc = func() (string, gonvml.Return) { return "", gonvml.ERROR_UNKNOWN }
	srv.Devices[1].GetTemperatureThresholdFunc = func(gonvml.TemperatureThresholds) (uint32, gonvml.Return) {
		return 0, gonvml.ERROR_NO_PERMISSION
	}
	s := discovered(t, srv, Options{})
	pts, err := sample(t, s, t0)
	if len(pts) != 2 || !errors.Is(err, gonvml.ERROR_UNKNOWN) || !errors.Is(err, gonvml.ERROR_NO_PERMISSION) {
		t.Fatalf("first sample: %d points, %v; want both GPUs and the discovery errors", len(pts), err)
	}
	if pts[1].Tag("model") != "" {
		t.Errorf("gpu 1 model tag %q after GetName failed", pts[1].Tag("model"))
	}
	if _, ok := pts[1].Field("slowdown_c"); ok {
		t.Error("gpu 1 has slowdown_c though its threshold read failed")
	}
	if _, err := sample(t, s, t0.Add(time.Second)); err != nil {
		t.Errorf("second sample repeats discovery errors: %v", err)
	}
}

func TestSampleStopsAtTheDeadline(t *testing.T) {
	srv, _ := newDGXH100(2)
	s := discovered(t, srv, Options{})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	pts, err := s.Sample(ctx, t0, nil)
	if len(pts) != 0 || !errors.Is(err, context.Canceled) {
		t.Errorf("Sample with a cancelled context = %d points, %v", len(pts), err)
	}
}

func TestFieldFloatDecodesEveryValueType(t *testing.T) {
	put := func(typ gonvml.ValueType, fill func(b []byte)) gonvml.FieldValue {
		fv := gonvml.FieldValue{FieldId: gonvml.FI_DEV_MEMORY_TEMP, ValueType: uint32(typ)}
		fill(fv.Value[:])
		return fv
	}
	ne := binary.NativeEndian
	for _, tc := range []struct {
		name string
		fv   gonvml.FieldValue
		want float64
		err  bool
	}{
		{"double", put(gonvml.VALUE_TYPE_DOUBLE, func(b []byte) { ne.PutUint64(b, math.Float64bits(81.5)) }), 81.5, false},
		{"uint", put(gonvml.VALUE_TYPE_UNSIGNED_INT, func(b []byte) { ne.PutUint32(b, 78) }), 78, false},
		{"ulong", put(gonvml.VALUE_TYPE_UNSIGNED_LONG, func(b []byte) { ne.PutUint64(b, 1<<40) }), 1 << 40, false},
		{"ulonglong", put(gonvml.VALUE_TYPE_UNSIGNED_LONG_LONG, func(b []byte) { ne.PutUint64(b, 79) }), 79, false},
		{"slonglong", put(gonvml.VALUE_TYPE_SIGNED_LONG_LONG, func(b []byte) { ne.PutUint64(b, uint64(math.MaxUint64)) }), -1, false},
		{"sint", put(gonvml.VALUE_TYPE_SIGNED_INT, func(b []byte) { ne.PutUint32(b, uint32(0xfffffffe)) }), -2, false},
		{"ushort", put(gonvml.VALUE_TYPE_UNSIGNED_SHORT, func(b []byte) { ne.PutUint16(b, 77) }), 77, false},
		{"nan", put(gonvml.VALUE_TYPE_DOUBLE, func(b []byte) { ne.PutUint64(b, math.Float64bits(math.NaN())) }), 0, true},
		{"unknown type", put(gonvml.VALUE_TYPE_COUNT, func(b []byte) {}), 0, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v, err := FieldFloat(tc.fv)
			if (err != nil) != tc.err || (err == nil && v != tc.want) {
				t.Errorf("FieldFloat = %v, %v; want %v (error %v)", v, err, tc.want, tc.err)
			}
		})
	}
}

func TestBadMemTempFieldIsAnError(t *testing.T) {
	srv, st := newDGXH100(1)
	st[0].MemTempType = 42
	s := discovered(t, srv, Options{})
	pts, err := sample(t, s, t0)
	if err == nil || !strings.Contains(err.Error(), "unknown value type 42") {
		t.Fatalf("error %v, want the unknown value type named", err)
	}
	if _, ok := pts[0].Field("mem_temp_c"); ok {
		t.Error("mem_temp_c present from an undecodable field")
	}
}

func FuzzFieldFloat(f *testing.F) {
	f.Add(uint32(gonvml.VALUE_TYPE_UNSIGNED_INT), uint64(78))
	f.Add(uint32(gonvml.VALUE_TYPE_DOUBLE), math.Float64bits(math.Inf(1)))
	f.Add(uint32(99), uint64(0))
	f.Fuzz(func(t *testing.T, typ uint32, raw uint64) {
		fv := gonvml.FieldValue{ValueType: typ}
		binary.NativeEndian.PutUint64(fv.Value[:], raw)
		v, err := FieldFloat(fv)
		if err == nil && (math.IsNaN(v) || math.IsInf(v, 0)) {
			t.Fatalf("FieldFloat(type %d, %#x) = %v without error", typ, raw, v)
		}
		if err == nil && typ >= uint32(gonvml.VALUE_TYPE_COUNT) {
			t.Fatalf("FieldFloat accepted unknown type %d", typ)
		}
	})
}

// TestSystemLibrary runs the source against whatever NVML this machine has:
// on a machine without the driver it must report itself unavailable with the
// reason (and not crash); on a GPU machine it must read each GPU.
func TestSystemLibrary(t *testing.T) {
	s := New(Options{})
	defer s.Close()
	err := s.Discover(context.Background())
	if err != nil {
		if !errors.Is(err, errors.ErrUnsupported) {
			t.Fatalf("Discover without a usable NVML = %v, want ErrUnsupported", err)
		}
		t.Logf("system NVML: %v", err)
		if _, err := s.Sample(context.Background(), t0, nil); err == nil {
			t.Error("Sample after failed Discover succeeded")
		}
		return
	}
	pts, err := s.Sample(context.Background(), time.Now(), nil)
	if err != nil {
		t.Logf("sample errors: %v", err)
	}
	if len(pts) == 0 {
		t.Fatal("NVML initialised but no GPU point")
	}
	for _, p := range pts {
		if _, ok := p.Field("temp_c"); !ok {
			t.Errorf("gpu %s: no temp_c", p.Tag("gpu"))
		}
		t.Log(p.String())
	}
}

// BenchmarkSampleDGXH100 measures the source's own cost per tick for eight
// GPUs. The mock answers instantly but logs every call (its appends count in
// the allocations); real NVML calls add about 7 µs a GPU.
func BenchmarkSampleDGXH100(b *testing.B) {
	srv, _ := newDGXH100(8)
	s := New(Options{Library: srv})
	if err := s.Discover(context.Background()); err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	buf := make([]point.Point, 0, 8)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		pts, err := s.Sample(ctx, t0, buf[:0])
		if err != nil || len(pts) != 8 {
			b.Fatal(len(pts), err)
		}
	}
}
