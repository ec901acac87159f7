package rundir

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// TestHelperRunThatIsKilled is the heatsink process of
// TestRunCutOffByKill9IsSaidSoAtTheNextStart.
func TestHelperRunThatIsKilled(t *testing.T) {
	ledger, dir := os.Getenv("HS_TEST_LEDGER"), os.Getenv("HS_TEST_RUNDIR")
	if ledger == "" {
		t.Skip("a helper process of TestRunCutOffByKill9IsSaidSoAtTheNextStart")
	}
	w, err := Create(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := WriteMeta(dir, &Meta{ID: "killed", Start: time.Now(), Status: "running"}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := Track(ledger, dir); err != nil {
		t.Fatal(err)
	}
	w.Write(samplePoints(3, time.Now()))
	w.Flush()
	os.WriteFile(dir+"/ready", nil, 0o644)
	time.Sleep(time.Minute)
}

// kill -9 of heatsink run leaves run.json saying "running" for ever; the
// next start finds the run in the ledger and says it was cut off.
func TestRunCutOffByKill9IsSaidSoAtTheNextStart(t *testing.T) {
	ledger := filepath.Join(t.TempDir(), "runs")
	killed := filepath.Join(t.TempDir(), "killed")
	finished := filepath.Join(t.TempDir(), "finished")

	// A run that finishes properly is never reported.
	if err := WriteMeta(mkdir(t, finished), &Meta{ID: "finished", Status: "running"}); err != nil {
		t.Fatal(err)
	}
	untrack, cut, err := Track(ledger, finished)
	if err != nil || len(cut) != 0 {
		t.Fatalf("first start: %v %v", cut, err)
	}
	WriteMeta(finished, &Meta{ID: "finished", Status: "complete"})
	untrack()

	helper := exec.Command(os.Args[0], "-test.run=^TestHelperRunThatIsKilled$")
	helper.Env = append(os.Environ(), "HS_TEST_LEDGER="+ledger, "HS_TEST_RUNDIR="+killed)
	if err := helper.Start(); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if _, err := os.Stat(killed + "/ready"); err == nil {
			break
		}
		if time.Now().After(deadline) {
			helper.Process.Kill()
			t.Fatal("the helper run did not start")
		}
	}
	// While it runs, a second start leaves it alone.
	if _, cut, err := Track(ledger, t.TempDir()); err != nil || len(cut) != 0 {
		t.Fatalf("with the run alive: cut off %v, %v", cut, err)
	}
	helper.Process.Kill()
	helper.Wait()

	_, cut, err = Track(ledger, t.TempDir())
	if err != nil || len(cut) != 1 || cut[0] != killed {
		t.Fatalf("after kill -9: cut off %v, %v; want %s", cut, err, killed)
	}
	m, err := ReadMeta(killed)
	if err != nil {
		t.Fatal(err)
	}
	if m.Status != StatusCutOff || m.End == nil || len(m.Events) != 1 || m.Events[0].Kind != CutOffEventKind {
		t.Errorf("run.json of the killed run: status %q end %v events %+v", m.Status, m.End, m.Events)
	}
	if m, _ := ReadMeta(finished); m.Status != "complete" {
		t.Errorf("the finished run became %q", m.Status)
	}
	if _, cut, _ := Track(ledger, t.TempDir()); len(cut) != 0 {
		t.Errorf("reported twice: %v", cut)
	}
}

func mkdir(t *testing.T, dir string) string {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}
