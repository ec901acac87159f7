package recordings

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/heatsink-hpc/heatsink/point"
	"github.com/heatsink-hpc/heatsink/rundir"
)

func readAll(t *testing.T, path string, o Options) ([]point.Point, *FileResult) {
	t.Helper()
	var pts []point.Point
	res, err := ReadFile(path, o, func(p *point.Point) error {
		pts = append(pts, *p)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if res.Points != len(pts) {
		t.Fatalf("result counts %d points, %d were handed over", res.Points, len(pts))
	}
	return pts, res
}

func badLines(res *FileResult) []int {
	var lines []int
	for _, b := range res.Bad {
		lines = append(lines, b.Line)
	}
	return lines
}

func field(t *testing.T, p point.Point, key string) float64 {
	t.Helper()
	v, ok := p.Float(key)
	if !ok {
		t.Fatalf("%s has no %s", p, key)
	}
	return v
}

func find(pts []point.Point, measurement string, at time.Time, tags ...string) *point.Point {
outer:
	for i := range pts {
		p := &pts[i]
		if p.Measurement != measurement || !p.Time.Equal(at) {
			continue
		}
		for j := 0; j+1 < len(tags); j += 2 {
			if p.Tag(tags[j]) != tags[j+1] {
				continue outer
			}
		}
		return p
	}
	return nil
}

func TestNvidiaSMIWithUnits(t *testing.T) {
	utc := time.UTC
	pts, res := readAll(t, "testdata/nvidia-smi-units.csv", Options{Host: "node7", Location: utc})
	if res.Format != NvidiaSMI {
		t.Fatalf("detected %s", res.Format)
	}
	// 9 data rows: the short row, "yesterday" are skipped; "lots W" loses only power.
	if len(pts) != 8 {
		t.Fatalf("%d points, want 8", len(pts))
	}
	if got := fmt.Sprint(badLines(res)); got != "[7 10 11]" {
		t.Errorf("bad lines %s, want [7 10 11]; %v", got, res.Bad)
	}
	for _, b := range res.Bad {
		if !strings.HasPrefix(b.Error(), "testdata/nvidia-smi-units.csv:") {
			t.Errorf("error %q does not name the file", b)
		}
	}
	t2 := time.Date(2024, 3, 1, 12, 0, 2, 105e6, utc)
	p := find(pts, "gpu", t2, "gpu", "0")
	if p == nil {
		t.Fatal("no gpu 0 point at 12:00:02.105")
	}
	if p.Tag("uuid") != "GPU-6e1a2f3c-0b1d-4b7e-9a55-3c1e0f7d2a10" || p.Tag("model") != "NVIDIA H100 80GB HBM3" || p.Tag("host") != "node7" {
		t.Errorf("tags %v", p.Tags)
	}
	for key, want := range map[string]float64{
		"temp_c": 87, "mem_temp_c": 91, "power_w": 699.1, "sm_clock_mhz": 1755, "mem_clock_mhz": 2619,
		"util_pct": 100, "mem_util_pct": 88, "mem_used_bytes": 65536 << 20, "pstate": 0,
		"clock_event_reasons": 0x24, "throttle_thermal": 1, "throttle_power": 1,
	} {
		if got := field(t, *p, key); got != want {
			t.Errorf("%s = %v, want %v", key, got, want)
		}
	}
	// [N/A] and [Not Supported] leave the field out, never zero.
	for _, at := range []time.Time{time.Date(2024, 3, 1, 12, 0, 0, 106e6, utc), time.Date(2024, 3, 1, 12, 0, 3, 0, utc)} {
		q := find(pts, "gpu", at, "gpu", "1")
		if q == nil {
			t.Fatalf("no gpu 1 point at %v", at)
		}
		if _, ok := q.Field("mem_temp_c"); ok {
			t.Errorf("%v: mem_temp_c present for an unsupported reading", at)
		}
	}
	last := find(pts, "gpu", time.Date(2024, 3, 1, 12, 0, 4, 105e6, utc), "gpu", "0")
	if last == nil {
		t.Fatal("the row with a bad power value was dropped whole")
	}
	if _, ok := last.Field("power_w"); ok {
		t.Error("power_w kept from \"lots W\"")
	}
	if res.Interval != time.Second {
		t.Errorf("interval %v, want 1s", res.Interval)
	}
}

func TestNvidiaSMIWithoutUnitsAndARepeatedHeader(t *testing.T) {
	pts, res := readAll(t, "testdata/nvidia-smi-nounits.csv", Options{Host: "n", Location: time.UTC})
	if len(pts) != 3 || len(res.Bad) != 0 {
		t.Fatalf("%d points, bad %v", len(pts), res.Bad)
	}
	p := pts[2]
	if v := field(t, p, "power_w"); v != 220.1 {
		t.Errorf("power_w %v", v)
	}
	if v := field(t, p, "pstate"); v != 2 {
		t.Errorf("pstate %v", v)
	}
	if v := field(t, p, "sm_clock_mhz"); v != 1912 {
		t.Errorf("clocks.sm gave %v", v)
	}
	if len(res.Warnings) != 1 || !strings.Contains(res.Warnings[0], "fan.speed") {
		t.Errorf("warnings %q, want one naming fan.speed", res.Warnings)
	}
}

func TestNvidiaSMIWithoutHeaderIsAnError(t *testing.T) {
	_, err := Read(strings.NewReader("2024/03/01 12:00:00.000, 0, 35\n"), "x.csv", NvidiaSMI, Options{}, func(*point.Point) error { return nil })
	if err == nil || !strings.Contains(err.Error(), "x.csv:1: no header") {
		t.Fatalf("err %v", err)
	}
}

func TestLineProtocolPrecisionIsDetectedPerFile(t *testing.T) {
	pts, res := readAll(t, "testdata/seconds.lp", Options{})
	if res.Precision != "s" || len(pts) != 3 {
		t.Fatalf("precision %q, %d points", res.Precision, len(pts))
	}
	if want := time.Unix(1709294401, 0); !pts[1].Time.Equal(want) {
		t.Errorf("time %v, want %v", pts[1].Time, want)
	}
	if v, _ := pts[2].Field("pump1_on"); v.BoolV() {
		t.Error("bool field misread")
	}
	// An explicit precision overrides detection: seconds read as ms are 1970.
	_, err := ReadFile("testdata/seconds.lp", Options{Precision: "ms"}, func(*point.Point) error { return nil })
	if err == nil || !strings.Contains(err.Error(), "no readings") {
		t.Errorf("seconds read as milliseconds: %v", err)
	}
}

func TestTelegrafFileIsReadWithItsGPUsMapped(t *testing.T) {
	pts, res := readAll(t, "testdata/telegraf.lp", Options{})
	if res.Precision != "ns" {
		t.Errorf("precision %q", res.Precision)
	}
	// Line 6 is malformed, line 8 is in seconds in a nanosecond file.
	if got := fmt.Sprint(badLines(res)); got != "[6 8]" {
		t.Errorf("bad lines %s, want [6 8]: %v", got, res.Bad)
	}
	if len(pts) != 5 {
		t.Fatalf("%d points, want 5", len(pts))
	}
	g := find(pts, "gpu", time.Unix(0, 1709294401000000000), "gpu", "0")
	if g == nil {
		t.Fatal("nvidia_smi not mapped to gpu")
	}
	if g.Tag("host") != "node7" || g.Tag("model") != "NVIDIA H100 80GB HBM3" || g.Tag("uuid") != "GPU-6e1a2f3c" {
		t.Errorf("tags %v", g.Tags)
	}
	for key, want := range map[string]float64{"temp_c": 41, "power_w": 512.4, "util_pct": 100, "mem_used_bytes": 65536 << 20, "sm_clock_mhz": 1980, "pstate": 0} {
		if got := field(t, *g, key); got != want {
			t.Errorf("%s = %v, want %v", key, got, want)
		}
	}
	if c := find(pts, "cpu", time.Unix(0, 1709294401000000000)); c == nil || field(t, *c, "usage_user") != 97.5 {
		t.Error("other measurements are not kept as they are")
	}
}

func TestLibSensorsToolsRunBecomesPhasesAndPoints(t *testing.T) {
	start := time.Date(2020, 11, 2, 9, 0, 0, 0, time.UTC)
	at := func(s float64) time.Time { return start.Add(time.Duration(s * 1e9)) }
	pts, res := readAll(t, "testdata/libsensorstools.json", Options{Host: "node1", Start: start})
	if res.Format != LibSensorsTools {
		t.Fatalf("format %s", res.Format)
	}
	want := []struct {
		name       string
		start, end float64
	}{{"baseline", 0.708086, 3.71847}, {"load", 3.71847, 6.70114}, {"cooldown", 6.70121, 9.20801}}
	if len(res.Phases) != 3 {
		t.Fatalf("phases %+v", res.Phases)
	}
	for i, w := range want {
		ph := res.Phases[i]
		if ph.Name != w.name || !ph.Start.Equal(at(w.start)) || ph.End == nil || !ph.End.Equal(at(w.end)) {
			t.Errorf("phase %d = %s %v..%v, want %s %v..%v", i, ph.Name, ph.Start, ph.End, w.name, at(w.start), at(w.end))
		}
	}
	if len(res.Bad) != 1 || res.Bad[0].Line != 278 || !strings.Contains(res.Bad[0].Error(), "gpu-1-gpu-temperature") {
		t.Errorf("bad %v, want the \"hot\" value on line 278", res.Bad)
	}
	// 8 polls, each: 2 gpus, 3 hwmon sensors (k10temp temp1 and temp2, jc42), 2 cores, nvme, tank, pdu phase + 2 banks.
	if len(pts) != 8*12 {
		t.Errorf("%d points, want 96", len(pts))
	}
	// Polls after initial-wait-end count from t0 (initial-wait-start, 0.708086 s).
	t5 := at(5.7251 + 0.708086)
	g1 := find(pts, "gpu", t5, "gpu", "1")
	if g1 == nil {
		t.Fatal("gpu 1 lost with its bad temperature")
	}
	if _, ok := g1.Field("temp_c"); ok {
		t.Error("bad temperature imported")
	}
	if v := field(t, *g1, "power_w"); v != 228 {
		t.Errorf("power_w %v (mW -> W)", v)
	}
	g0 := find(pts, "gpu", at(4.72201+0.708086), "gpu", "0")
	if g0 == nil || g0.Tag("model") != "TITAN V" || field(t, *g0, "mem_used_bytes") != 47054848 || field(t, *g0, "pstate") != 2 {
		t.Errorf("gpu 0: %v", g0)
	}
	if c := find(pts, "cpufreq", at(0.708088), "cpu", "cpu0"); c == nil || field(t, *c, "freq_mhz") != 2598.91 {
		t.Errorf("cpufreq: %v", c)
	}
	if h := find(pts, "hwmon", at(0.708088), "chip", "k10temp-pci-00c3", "sensor", "temp2"); h == nil || h.Tag("class") != "cpu" || field(t, *h, "temp_c") != 18 {
		t.Errorf("hwmon: %v", h)
	}
	tank := find(pts, "tank", t5, "tank", "submer-0")
	if tank == nil || field(t, *tank, "coolant_temp_c") != 21.4 || field(t, *tank, "pump1_rpm") != 1200 || field(t, *tank, "water_flow_lpm") != 4.7 {
		t.Errorf("tank: %v", tank)
	}
	if p := find(pts, "pdu", t5, "pdu", "pdu-0", "phase", "1"); p == nil || field(t, *p, "current_a") != 9.8 {
		t.Errorf("pdu phase: %v", p)
	}
	if p := find(pts, "pdu", t5, "pdu", "pdu-0", "bank", "2"); p == nil || field(t, *p, "current_a") != 4.9 {
		t.Errorf("pdu bank 2: %v", p)
	}
	if strings.Join(res.Command, " ") != "./stream_gpu 100" || res.Versions["NVIDIA Driver"] != "460.27.04" {
		t.Errorf("command %q versions %v", res.Command, res.Versions)
	}
	if len(res.Warnings) != 1 || !strings.Contains(res.Warnings[0], "fan-speed") {
		t.Errorf("warnings %q", res.Warnings)
	}
}

func TestLibSensorsToolsKilledMidRecordKeepsWhatWasWhole(t *testing.T) {
	start := time.Date(2020, 11, 2, 9, 0, 0, 0, time.UTC)
	pts, res := readAll(t, "testdata/libsensorstools-killed.json", Options{Host: "node1", Start: start})
	if len(pts) != 5*12 {
		t.Errorf("%d points, want the 60 of the 5 whole polls", len(pts))
	}
	if len(res.Bad) != 1 || !strings.Contains(res.Bad[0].Error(), "cut short") {
		t.Fatalf("bad %v", res.Bad)
	}
	// The load phase started and never ended: open, not invented.
	var load *rundir.Phase
	for i := range res.Phases {
		if res.Phases[i].Name == "load" {
			load = &res.Phases[i]
		}
	}
	if load == nil || load.End != nil {
		t.Errorf("phases %+v; want an open load phase", res.Phases)
	}
}

func TestLibSensorsToolsNeedsAStartTime(t *testing.T) {
	_, err := ReadFile("testdata/libsensorstools.json", Options{}, func(*point.Point) error { return nil })
	if err == nil || !strings.Contains(err.Error(), "--start") {
		t.Fatalf("err %v", err)
	}
}

func TestParsePhase(t *testing.T) {
	origin := time.Date(2024, 3, 1, 12, 0, 0, 0, time.UTC)
	cases := []struct {
		spec       string
		start, end time.Time
		open       bool
		err        string
	}{
		{spec: "baseline=0s..30m", start: origin, end: origin.Add(30 * time.Minute)},
		{spec: "load=2024-03-01T12:30:00Z..2024-03-01T20:00:00Z", start: origin.Add(30 * time.Minute), end: origin.Add(8 * time.Hour)},
		{spec: "cooldown=2024-03-01 20:00:00..", start: origin.Add(8 * time.Hour), open: true},
		{spec: "load=1h..30m", err: "ends before it starts"},
		{spec: "load=0s-1h", err: "needs .."},
		{spec: "=0s..1h", err: "NAME=START..END"},
		{spec: "load=soon..1h", err: "neither a duration nor a time"},
		{spec: "bseline=0s..1h", err: `unknown phase "bseline"; the phases are baseline, wait_nominal, load, cooldown`},
	}
	for _, tc := range cases {
		ps, err := ParsePhase(tc.spec, time.UTC)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s: err %v, want %q", tc.spec, err, tc.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", tc.spec, err)
			continue
		}
		ph := ps.Resolve(origin)
		if !ph.Start.Equal(tc.start) || (tc.open != (ph.End == nil)) || (!tc.open && !ph.End.Equal(tc.end)) {
			t.Errorf("%s: %v..%v", tc.spec, ph.Start, ph.End)
		}
	}
}

// TestImportIntoARunDirectory imports a CSV with phases given by hand and
// reads the run back as analysis would.
func TestImportIntoARunDirectory(t *testing.T) {
	dir := t.TempDir()
	w, err := rundir.Create(dir)
	if err != nil {
		t.Fatal(err)
	}
	base, _ := ParsePhase("baseline=0s..1s", time.UTC)
	load, _ := ParsePhase("load=2024-03-01T12:00:01Z..2024-03-01T12:00:04.5Z", time.UTC)
	res, err := Import([]string{"testdata/nvidia-smi-units.csv"}, ImportOptions{
		Options: Options{Host: "node7", Location: time.UTC},
		Phases:  []PhaseSpec{base, load},
	}, w)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := rundir.WriteMeta(dir, res.Meta); err != nil {
		t.Fatal(err)
	}
	run, err := rundir.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	m := run.Meta
	if m.ID != "20240301T120000Z-node7" || m.Host != "node7" || m.IntervalS != 1 || len(m.Phases) != 2 {
		t.Errorf("meta %+v", m)
	}
	if len(m.Sources) != 1 || !strings.Contains(m.Sources[0].Name, "nvidia-smi-csv:") || !strings.Contains(m.Sources[0].Error, "3 lines skipped") {
		t.Errorf("sources %+v", m.Sources)
	}
	var events, gpus int
	for _, p := range run.Points {
		switch p.Measurement {
		case "event":
			events++
			if p.Tag("run") != m.ID || p.Tag("host") != "node7" {
				t.Errorf("event %s", p)
			}
		case "gpu":
			gpus++
		}
	}
	if events != 4 || gpus != 8 {
		t.Errorf("%d events, %d gpu points; want 4 and 8", events, gpus)
	}
}

func FuzzNvidiaSMI(f *testing.F) {
	for _, name := range []string{"nvidia-smi-units.csv", "nvidia-smi-nounits.csv"} {
		b, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte("timestamp, power.draw [W]\n2024/03/01 12:00:00, \"7\n"))
	f.Add([]byte("timestamp, power.draw [kW], memory.used [GiB]\n2024/03/01 12:00:00, 71 mW, 1e30 TiB\n"))
	f.Add([]byte("timestamp, power.draw, Power.Draw\n2024/03/01 12:00:00, 1, 2\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		checkRead(t, b, NvidiaSMI, Options{Host: "h", Location: time.UTC})
	})
}

func FuzzLibSensorsTools(f *testing.F) {
	for _, name := range []string{"libsensorstools.json", "libsensorstools-killed.json"} {
		b, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte(`[{"event":"poll-data","timestamp":1e300,"gpu-0-temperature":1}]`))
	f.Add([]byte(`[{"event":"poll-data","timestamp":1,"gpu-0-temperature":"\"}{"}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		checkRead(t, b, LibSensorsTools, Options{Host: "h", Start: time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)})
	})
}

// checkRead holds every reader to its promises on any input: no panic,
// only points that can be stored, bad lines that exist in the input.
func checkRead(t *testing.T, b []byte, format Format, o Options) {
	lines := bytes.Count(b, []byte("\n")) + 1
	res, err := Read(bytes.NewReader(b), "fuzz", format, o, func(p *point.Point) error {
		if len(p.Fields) == 0 {
			t.Fatalf("point without fields: %+v", p)
		}
		if p.Time.Before(earliest) || p.Time.After(latest) {
			t.Fatalf("point at %v", p.Time)
		}
		if _, err := point.Append(nil, []point.Point{*p}); err != nil {
			t.Fatalf("point cannot be encoded: %v", err)
		}
		return nil
	})
	if err != nil {
		return
	}
	for _, bad := range res.Bad {
		if bad.Line < 1 || bad.Line > lines {
			t.Fatalf("bad line %d of %d: %v", bad.Line, lines, bad)
		}
	}
}

// A value an integer field cannot hold (memory.used of 1e20 MiB is 1e26
// bytes; int64 conversion made it -9223372036854775808) is a bad value
// with its file and line, and the rest of its row is kept.
func TestImportSkipsIntegersOutOfRangeWithFileAndLine(t *testing.T) {
	pts, res := readAll(t, "testdata/nvidia-smi-overflow.csv", Options{Host: "n", Location: time.UTC})
	if len(pts) != 3 || len(res.Bad) != 1 || res.Bad[0].Line != 3 || !strings.Contains(res.Bad[0].Err.Error(), "out of range") {
		t.Fatalf("%d points, bad %v; want 3 points and line 3 out of range", len(pts), res.Bad)
	}
	if _, ok := pts[1].Float("mem_used_bytes"); ok {
		t.Errorf("the overflowing value was kept: %s", pts[1])
	}
	if v := field(t, pts[1], "temp_c"); v != 28 {
		t.Errorf("temp_c of the row with the bad value: %v", v)
	}
	if v, _ := pts[2].Float("mem_used_bytes"); v != 2048<<20 {
		t.Errorf("mem_used_bytes %v", v)
	}

	lst := `[{"event": "poll-data", "timestamp": 1.0, "gpu-0-pstate": 1e30, "gpu-0-temperature": 40}]`
	var got []point.Point
	r, err := Read(strings.NewReader(lst), "lst.json", LibSensorsTools, Options{Host: "n", Start: time.Unix(1.6e9, 0)}, func(p *point.Point) error { got = append(got, *p); return nil })
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Bad) != 1 || !strings.Contains(r.Bad[0].Error(), "lst.json:1") || !strings.Contains(r.Bad[0].Error(), "pstate") {
		t.Errorf("bad %v, want lst.json:1 naming pstate", r.Bad)
	}
	for _, p := range got {
		if _, ok := p.Float("pstate"); ok {
			t.Errorf("pstate 1e30 was kept: %s", p)
		}
	}
}

func TestNvidiaSMIRowLongerThanTheMaximumIsSkipped(t *testing.T) {
	in := "timestamp, index, temperature.gpu\n2020/11/02 09:15:00.001, 0, 27\n2020/11/02 09:15:01.001, 0, " + strings.Repeat("2", maxCSVLine) + "\n2020/11/02 09:15:02.001, 0, 29\n"
	n := 0
	res, err := Read(strings.NewReader(in), "smi.csv", NvidiaSMI, Options{Host: "n", Location: time.UTC}, func(*point.Point) error { n++; return nil })
	if err != nil || n != 2 || len(res.Bad) != 1 || res.Bad[0].Line != 3 {
		t.Errorf("%d points, bad %v, err %v; want 2 and line 3", n, res.Bad, err)
	}
}

// A recording compressed by logrotate (or gzip by hand) is read through
// gzip, found by its magic bytes: each format's fixture gives the same
// points and the same bad lines, named in the compressed file; a gzip
// stream cut short is an error naming it, with what was whole kept.
func TestGzippedRecordingsReadAsThePlainOnes(t *testing.T) {
	for _, c := range []struct {
		path string
		o    Options
	}{
		{"testdata/nvidia-smi-units.csv", Options{Host: "node7", Location: time.UTC}},
		{"testdata/libsensorstools.json", Options{Host: "n", Start: time.Date(2024, 3, 1, 12, 0, 0, 0, time.UTC)}},
	} {
		plain, want := readAll(t, c.path, c.o)
		data, err := os.ReadFile(c.path)
		if err != nil {
			t.Fatal(err)
		}
		var z bytes.Buffer
		zw := gzip.NewWriter(&z)
		zw.Write(data)
		zw.Close()
		gz := filepath.Join(t.TempDir(), filepath.Base(c.path)+".gz")
		if err := os.WriteFile(gz, z.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		pts, got := readAll(t, gz, c.o)
		if got.Format != want.Format || len(pts) != len(plain) || fmt.Sprint(badLines(got)) != fmt.Sprint(badLines(want)) {
			t.Errorf("%s gzipped: %s, %d points, bad %v; plain: %s, %d, %v", c.path, got.Format, len(pts), badLines(got), want.Format, len(plain), badLines(want))
			continue
		}
		for i := range pts {
			if !pts[i].Time.Equal(plain[i].Time) || pts[i].Measurement != plain[i].Measurement || fmt.Sprint(pts[i].Tags) != fmt.Sprint(plain[i].Tags) || fmt.Sprint(pts[i].Fields) != fmt.Sprint(plain[i].Fields) {
				t.Fatalf("%s gzipped: point %d is %+v, plain %+v", c.path, i, pts[i], plain[i])
			}
		}
		for _, b := range got.Bad {
			if !strings.HasPrefix(b.Error(), gz+":") {
				t.Errorf("bad line %q does not name the gzipped file", b)
			}
		}
		cut := filepath.Join(t.TempDir(), "cut.gz")
		if err := os.WriteFile(cut, z.Bytes()[:z.Len()/2], 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := ReadFile(cut, c.o, func(*point.Point) error { return nil }); err == nil || !strings.Contains(err.Error(), "cut.gz") {
			t.Errorf("%s cut short: err = %v", c.path, err)
		}
	}
}
