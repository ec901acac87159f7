package analysis

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// dayRecording returns a day at 1 Hz of a shared 8-GPU node recorded
// without phases (bench/genrun -episodes 30 -hours 24, ~300 MB of
// points.lp): issue 30's scale case, a seventh of the week that
// bench/episodes.sh times. HEATSINK_BENCH_RUN names an existing one, so a
// profile need not regenerate it.
func dayRecording(b *testing.B) string {
	b.Helper()
	if dir := os.Getenv("HEATSINK_BENCH_RUN"); dir != "" {
		return dir
	}
	dir := filepath.Join(b.TempDir(), "day")
	cmd := exec.Command("go", "run", "../bench/genrun", "-episodes", "30", "-hours", "24", "-out", dir)
	if out, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("bench/genrun: %v\n%s", err, out)
	}
	return dir
}

// BenchmarkLoadDay measures reading a day's points.lp into series.
func BenchmarkLoadDay(b *testing.B) {
	dir := dayRecording(b)
	fi, err := os.Stat(filepath.Join(dir, "points.lp"))
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(fi.Size())
	b.ReportAllocs()
	for b.Loop() {
		r, err := Load(dir)
		if err != nil {
			b.Fatal(err)
		}
		if r.Points == 0 {
			b.Fatal("no points loaded")
		}
	}
}

// BenchmarkEpisodesDay measures the analysis of a loaded day: episode
// detection and every per-component analysis of each episode, which is
// most of it.
func BenchmarkEpisodesDay(b *testing.B) {
	r, err := Load(dayRecording(b))
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		rep := Analyze(r, DefaultOptions())
		if len(rep.Episodes) < 30 {
			b.Fatalf("%d episodes found, 30 planted", len(rep.Episodes))
		}
	}
}
