package rundir

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A run is the site's data: who may read it is the umask's decision, for
// the directory, points.lp and run.json alike.
func TestRunDirectoryFollowsTheUmask(t *testing.T) {
	for _, tc := range []struct {
		umask           int
		dir, file, meta os.FileMode
	}{
		{0o022, 0o755, 0o644, 0o644},
		{0o077, 0o700, 0o600, 0o600},
		{0o027, 0o750, 0o640, 0o640},
	} {
		old := syscall.Umask(tc.umask)
		dir := filepath.Join(t.TempDir(), "run")
		w, err := Create(dir)
		if err == nil {
			err = WriteMeta(dir, &Meta{ID: "r", Start: time.Unix(0, 0)})
		}
		syscall.Umask(old)
		if err != nil {
			t.Fatal(err)
		}
		w.Close()
		for name, want := range map[string]os.FileMode{dir: tc.dir, filepath.Join(dir, PointsFile): tc.file, filepath.Join(dir, MetaFile): tc.meta} {
			st, err := os.Stat(name)
			if err != nil {
				t.Fatal(err)
			}
			if got := st.Mode().Perm(); got != want {
				t.Errorf("umask %03o: %s is %03o, want %03o", tc.umask, filepath.Base(name), got, want)
			}
		}
	}
}

func TestRunJSONRedactsCredentialsInArgv(t *testing.T) {
	dir := t.TempDir()
	argv := []string{"heatsink", "run", "--influx-url=http://admin:hunter2@db:8086", "--", "curl", "https://bob:hunter2@x/y", "http://plain/z"}
	m := &Meta{ID: "r", Command: argv, Workload: &Workload{Name: "command", Command: argv[4:]}}
	if err := WriteMeta(dir, m); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(filepath.Join(dir, MetaFile))
	if strings.Contains(string(b), "hunter2") || !strings.Contains(string(b), "http://REDACTED@db:8086") || !strings.Contains(string(b), "http://plain/z") {
		t.Errorf("run.json: %s", b)
	}
	if argv[2] != "--influx-url=http://admin:hunter2@db:8086" {
		t.Error("WriteMeta changed the caller's argv")
	}
}
