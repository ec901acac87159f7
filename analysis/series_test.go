package analysis

import (
	"bytes"
	"compress/gzip"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/heatsink-hpc/heatsink/point"
	"github.com/heatsink-hpc/heatsink/rundir"
)

func TestLoadSharesTimesAndMarksAbsentFields(t *testing.T) {
	b := newRun(t)
	for s := 0; s < 5; s++ {
		p := point.New("gpu", b.at(float64(s)))
		p.AddTag("host", "node1").AddTag("gpu", "0")
		p.AddFloat("temp_c", 40+float64(s))
		if s != 2 {
			p.AddFloat("mem_temp_c", 50+float64(s)) // missing once
		}
		if s >= 3 {
			p.AddInt("pstate", 0) // appears late
		}
		p.AddBool("throttle_thermal", s == 4)
		p.AddString("note", "strings are not series")
		b.write(p)
	}
	r := b.done()
	if r.Points != 5 || r.BadLines != 0 {
		t.Fatalf("points %d bad %d, want 5 and 0", r.Points, r.BadLines)
	}
	var fields []string
	for _, s := range r.Series {
		fields = append(fields, s.Field)
	}
	if got := strings.Join(fields, ","); got != "mem_temp_c,pstate,temp_c,throttle_thermal" {
		t.Fatalf("series fields = %s", got)
	}
	mem := r.Find("gpu", "mem_temp_c", nil)[0]
	ps := r.Find("gpu", "pstate", nil)[0]
	tc := r.Find("gpu", "temp_c", nil)[0]
	thr := r.Find("gpu", "throttle_thermal", nil)[0]
	if &mem.T[0] != &tc.T[0] {
		t.Error("fields of one point do not share their time slice")
	}
	wantMem := []float64{50, 51, math.NaN(), 53, 54}
	wantPs := []float64{math.NaN(), math.NaN(), math.NaN(), 0, 0}
	for k := 0; k < 5; k++ {
		if tc.T[k] != float64(k) {
			t.Errorf("T[%d] = %v, want %d s after the start", k, tc.T[k], k)
		}
		if !same(mem.V[k], wantMem[k]) || !same(ps.V[k], wantPs[k]) {
			t.Errorf("reading %d: mem %v pstate %v, want %v and %v", k, mem.V[k], ps.V[k], wantMem[k], wantPs[k])
		}
	}
	if thr.V[4] != 1 || thr.V[3] != 0 {
		t.Errorf("booleans: %v, want 0 then 1", thr.V)
	}
}

func same(a, b float64) bool { return a == b || (math.IsNaN(a) && math.IsNaN(b)) }

// writeRaw writes run.json and a hand-written points.lp, for input the
// encoder would never produce.
func writeRaw(t *testing.T, meta *rundir.Meta, lines ...string) string {
	t.Helper()
	dir := t.TempDir()
	if err := rundir.WriteMeta(dir, meta); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, rundir.PointsFile), []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestLoadBadLinesTagOrderAndBackwardsTime(t *testing.T) {
	t0 := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	ts := func(s int) string { return strconv.FormatInt(t0.Add(time.Duration(s)*time.Second).UnixNano(), 10) }
	dir := writeRaw(t, &rundir.Meta{ID: "raw", Start: t0},
		"gpu,gpu=0,host=n1 temp_c=40 "+ts(0),
		"gpu,host=n1,gpu=0 temp_c=41 "+ts(1),  // tags out of order: the same series
		"gpu,gpu=0,host=n1 temp_c=NaN "+ts(2), // NaN cannot be line protocol
		"this is not line protocol",
		"gpu,gpu=0,host=n1 temp_c=43", // no timestamp
		"gpu,gpu=0,host=n1 temp_c=44 "+ts(4),
		"gpu,gpu=0,host=n1 temp_c=45 "+ts(3), // backwards
		"nvme,device=nvme0 temp_c=30 "+ts(0),
	)
	r, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if r.BadLines != 3 || len(r.BadLineErrors) != 3 {
		t.Errorf("bad lines %d (%v), want 3", r.BadLines, r.BadLineErrors)
	}
	if !strings.Contains(r.BadLineErrors[0], "points.lp:3") {
		t.Errorf("first bad line error %q does not name points.lp:3", r.BadLineErrors[0])
	}
	gpu := r.Find("gpu", "temp_c", nil)
	if len(gpu) != 1 {
		t.Fatalf("%d gpu series, want 1 (tag order must not split a series)", len(gpu))
	}
	g := gpu[0]
	if len(g.V) != 4 || g.Backwards != 1 || g.FirstBackwardsS != 3 {
		t.Errorf("gpu series: %d readings, %d backwards at %v; want 4, 1 at 3 s", len(g.V), g.Backwards, g.FirstBackwardsS)
	}
	if err := g.CheckTimes(); err == nil || !strings.Contains(err.Error(), "backwards") {
		t.Errorf("CheckTimes = %v", err)
	}
	if err := r.Find("nvme", "temp_c", nil)[0].CheckTimes(); err != nil {
		t.Errorf("nvme series: %v", err)
	}
}

func TestLoadPhasesFromEventPoints(t *testing.T) {
	b := newRun(t)
	ev := func(s float64, kind, phase string) point.Point {
		p := point.New("event", b.at(s))
		p.AddTag("run", "synthetic").AddTag("kind", kind).AddTag("phase", phase)
		p.AddString("message", kind+" "+phase)
		return p
	}
	b.write(ev(0, "phase_start", "baseline"), ev(60, "phase_end", "baseline"), ev(60, "phase_start", "load"), ev(300, "phase_end", "load"))
	for s := 0; s <= 400; s++ {
		b.write(gpuPoint(b.at(float64(s)), "0", 40, 50, 100))
	}
	r := b.done()
	if len(r.EventPhases) != 2 || r.EventPhases[1].Name != "load" || r.EventPhases[1].End == nil {
		t.Fatalf("event phases = %+v", r.EventPhases)
	}
	for _, s := range r.Series {
		if s.Measurement == "event" {
			t.Errorf("event point stored as series %s", s.Key())
		}
	}
	rep := Analyze(r, DefaultOptions())
	if rep.Phases.Load == nil || rep.Phases.Load.Start != 60 || rep.Phases.Load.End != 300 {
		t.Errorf("phases = %+v, want load 60..300 s", rep.Phases)
	}
}

func TestLoadMissingFiles(t *testing.T) {
	if _, err := Load(t.TempDir()); err == nil || !strings.Contains(err.Error(), "run.json") || !strings.Contains(err.Error(), "is not a run directory") {
		t.Errorf("no run.json: err = %v", err)
	}
	// A fleet survey's own directory: its nodes' runs are under nodes/.
	fleet := t.TempDir()
	if err := os.MkdirAll(filepath.Join(fleet, "nodes", "n1"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := rundir.WriteMeta(filepath.Join(fleet, "nodes", "n1"), &rundir.Meta{ID: "n1"}); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(fleet); err == nil || !strings.Contains(err.Error(), "is a fleet survey, not a run directory") || !strings.Contains(err.Error(), filepath.Join(fleet, "nodes", "n1")) {
		t.Errorf("a fleet's directory: err = %v", err)
	}
	dir := t.TempDir()
	if err := rundir.WriteMeta(dir, &rundir.Meta{ID: "x"}); err != nil {
		t.Fatal(err)
	}
	r, err := Load(dir)
	if err != nil {
		t.Fatalf("run.json without points.lp: %v", err)
	}
	if len(r.Notes) != 1 || !strings.Contains(r.Notes[0], "no points.lp (nor points.lp.gz)") {
		t.Errorf("notes = %v", r.Notes)
	}
}

// A large points.lp is decoded in stretches concurrently; the Run must be
// exactly what streaming it in one piece gives, bad-line numbers included.
func TestLoadInStretchesEqualsStreaming(t *testing.T) {
	r := buildScenario(t, scenario{backwards: true})
	path := filepath.Join(r.Dir, rundir.PointsFile)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	// Garbage at a few places, a field that appears late, and phases as
	// events straddling the stretch boundaries.
	lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	ts := func(i int) string { return lines[i][strings.LastIndexByte(lines[i], ' ')+1:] }
	n := len(lines)
	insert := map[int]string{
		3:         "garbage line",
		n / 3:     "event,kind=phase_start,phase=load,run=x message=\"go\" " + ts(n/3),
		n / 2:     "gpu,gpu=0,host=node1 temp_c=NaN " + ts(n/2),
		2 * n / 3: "event,kind=phase_end,phase=load,run=x message=\"stop\" " + ts(2*n/3),
		n - 2:     "nvme,device=nvme0,host=node1,model=Samsung\\ PM9A3,sensor=Composite temp_c=31,late_c=7 " + ts(n-2),
	}
	var b strings.Builder
	for i, l := range lines {
		if extra, ok := insert[i]; ok {
			b.WriteString(extra + "\n")
		}
		b.WriteString(l + "\n")
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	one, err := load(r.Dir, 1, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, workers := range []int{2, 3, 7} {
		many, err := load(r.Dir, workers, 0)
		if err != nil {
			t.Fatal(err)
		}
		if many.Points != one.Points || many.BadLines != one.BadLines || strings.Join(many.BadLineErrors, "|") != strings.Join(one.BadLineErrors, "|") {
			t.Errorf("%d stretches: points %d bad %d %v; streaming: %d %d %v", workers, many.Points, many.BadLines, many.BadLineErrors, one.Points, one.BadLines, one.BadLineErrors)
		}
		if len(many.EventPhases) != 1 || len(one.EventPhases) != 1 || many.EventPhases[0].End == nil || !many.EventPhases[0].End.Equal(*one.EventPhases[0].End) {
			t.Errorf("%d stretches: event phases %+v, streaming %+v", workers, many.EventPhases, one.EventPhases)
		}
		if len(many.Series) != len(one.Series) {
			t.Fatalf("%d stretches: %d series, streaming %d", workers, len(many.Series), len(one.Series))
		}
		for i, s := range one.Series {
			m := many.Series[i]
			if m.Key() != s.Key() || len(m.T) != len(s.T) || m.Backwards != s.Backwards || m.FirstBackwardsS != s.FirstBackwardsS {
				t.Fatalf("%d stretches: series %s (%d readings, %d backwards) vs %s (%d, %d)", workers, m.Key(), len(m.T), m.Backwards, s.Key(), len(s.T), s.Backwards)
			}
			for k := range s.T {
				if m.T[k] != s.T[k] || !same(m.V[k], s.V[k]) {
					t.Fatalf("%d stretches: %s reading %d = (%v, %v), streaming (%v, %v)", workers, s.Key(), k, m.T[k], m.V[k], s.T[k], s.V[k])
				}
			}
		}
	}
	if one.BadLines != 2 || !strings.Contains(one.BadLineErrors[0], "points.lp:4:") {
		t.Errorf("bad lines %d %v, want 2 with the first at line 4", one.BadLines, one.BadLineErrors)
	}
	late := one.Find("nvme", "late_c", nil)
	if len(late) != 1 || !math.IsNaN(late[0].V[0]) || late[0].V[len(late[0].V)-2] != 7 {
		t.Errorf("late field not NaN-filled before it appears")
	}
}

// A run archived with `gzip points.lp` loads as it did before: same
// series, same readings, bad lines named in the .gz file.
func TestLoadGzippedPointsEqualsPlain(t *testing.T) {
	plain := filepath.Join("testdata", "h100-hold-dgemm")
	dir := t.TempDir()
	meta, err := os.ReadFile(filepath.Join(plain, rundir.MetaFile))
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(plain, rundir.PointsFile))
	if err != nil {
		t.Fatal(err)
	}
	var z bytes.Buffer
	zw := gzip.NewWriter(&z)
	zw.Write(data)
	zw.Write([]byte("torn last lin"))
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, rundir.MetaFile), meta, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, rundir.PointsGzFile), z.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	want, err := Load(plain)
	if err != nil {
		t.Fatal(err)
	}
	got, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if got.Points != want.Points || got.Points == 0 || len(got.Series) != len(want.Series) || len(got.Notes) != len(want.Notes) {
		t.Fatalf("gzipped: %d points, %d series, notes %v; plain: %d, %d, %v", got.Points, len(got.Series), got.Notes, want.Points, len(want.Series), want.Notes)
	}
	if got.BadLines != 1 || !strings.Contains(got.BadLineErrors[0], rundir.PointsGzFile) {
		t.Errorf("the torn last line: %d bad, %v", got.BadLines, got.BadLineErrors)
	}
	for i, s := range want.Series {
		g := got.Series[i]
		if g.Key() != s.Key() || len(g.T) != len(s.T) {
			t.Fatalf("series %s (%d readings) vs plain %s (%d)", g.Key(), len(g.T), s.Key(), len(s.T))
		}
		for k := range s.T {
			if g.T[k] != s.T[k] || !same(g.V[k], s.V[k]) {
				t.Fatalf("%s reading %d = (%v, %v), plain (%v, %v)", s.Key(), k, g.T[k], g.V[k], s.T[k], s.V[k])
			}
		}
	}

	// Corrupt compressed data is an error naming the file, not an empty run.
	if err := os.WriteFile(filepath.Join(dir, rundir.PointsGzFile), []byte("not gzip"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(dir); err == nil || !strings.Contains(err.Error(), rundir.PointsGzFile) {
		t.Errorf("corrupt points.lp.gz: err = %v", err)
	}
}
