package slurm_test

import (
	"errors"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/heatsink-hpc/heatsink/slurm"
	"github.com/heatsink-hpc/heatsink/slurm/slurmtest"
)

// writerArg makes this test binary the summary's writer child, as the
// heatsink binary's hidden `slurm write-summary` is in production.
const writerArg = "heatsink-test-summary-writer"

var (
	writerOnce sync.Once
	writerDir  string
	writerErr  error
)

// writerCommand is a copy of this test binary that any user may run (go
// test builds it in a directory only root can enter).
func writerCommand(t *testing.T) []string {
	t.Helper()
	writerOnce.Do(func() {
		if writerDir, writerErr = os.MkdirTemp("", "heatsink-writer-"); writerErr != nil {
			return
		}
		var b []byte
		if b, writerErr = os.ReadFile(os.Args[0]); writerErr == nil {
			writerErr = errors.Join(os.Chmod(writerDir, 0o755), os.WriteFile(filepath.Join(writerDir, "writer"), b, 0o755))
		}
	})
	if writerErr != nil {
		t.Fatal(writerErr)
	}
	return []string{filepath.Join(writerDir, "writer"), writerArg}
}

// sharedDir is a directory every user can reach (t.TempDir's parents are
// root's alone), removed at cleanup.
func sharedDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "heatsink-summary-")
	if err != nil {
		t.Fatal(err)
	}
	os.Chmod(dir, 0o755)
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

func mkdir(t *testing.T, path string, mode os.FileMode, uid, gid int) string {
	t.Helper()
	if err := os.Mkdir(path, mode); err != nil {
		t.Fatal(err)
	}
	if err := errors.Join(os.Chmod(path, mode), os.Chown(path, uid, gid)); err != nil {
		t.Fatal(err)
	}
	return path
}

// entries lists a directory's names.
func entries(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	return names
}

// As EpilogSlurmctld, root writes the summary into the WorkDir the job
// gave. The user controls that path, links in it included; the summary
// must land only where the user could have written it.
func TestWriteFileAsRootWritesOnlyWhereTheJobsUserMay(t *testing.T) {
	u := slurmtest.NewUser(t)
	w, err := slurm.UserWriterFor(u.UID, u.Name, writerCommand(t))
	if err != nil || w == nil || w.GID != u.GID {
		t.Fatalf("writer for %s: %+v %v", u.Name, w, err)
	}
	base := sharedDir(t)
	// An /etc of this test: root's, 0755.
	etc := mkdir(t, filepath.Join(base, "etc"), 0o755, 0, 0)
	home := mkdir(t, filepath.Join(base, "home"), 0o755, u.UID, u.GID)
	secret := filepath.Join(etc, "shadow")
	os.WriteFile(secret, []byte("root only\n"), 0o600)
	os.Symlink(etc, filepath.Join(home, "work-link"))
	mkdir(t, filepath.Join(home, "real"), 0o755, u.UID, u.GID)
	os.Symlink(filepath.Join(home, "real"), filepath.Join(home, "parent-link"))
	planted := mkdir(t, filepath.Join(home, "planted"), 0o755, u.UID, u.GID)
	os.Symlink(secret, filepath.Join(planted, slurm.FileName("42")))
	os.Lchown(filepath.Join(planted, slurm.FileName("42")), u.UID, u.GID)

	for _, tc := range []struct {
		name, dir string
		wantErr   string // "" for a summary written, owned by the user
	}{
		{"the user's own directory", home, ""},
		{"a WorkDir that is a link into root's directory", filepath.Join(home, "work-link"), "symbolic link"},
		{"a WorkDir under a link the user made", filepath.Join(home, "parent-link"), "symbolic link"},
		{"root's directory named directly", etc, "permission denied"},
		{"a link planted at the summary's name", planted, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path, err := (&slurm.Summary{Job: "42", Nodes: []string{"n1"}}).WriteFile(tc.dir, w)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("wrote %q (error %v), want an error saying %q", path, err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var st syscall.Stat_t
			if err := syscall.Lstat(path, &st); err != nil {
				t.Fatal(err)
			}
			if st.Mode&syscall.S_IFMT != syscall.S_IFREG || int(st.Uid) != u.UID || int(st.Gid) != u.GID {
				t.Errorf("%s: mode %o uid %d gid %d, want a regular file of uid %d gid %d", path, st.Mode, st.Uid, st.Gid, u.UID, u.GID)
			}
		})
	}
	if got := entries(t, etc); len(got) != 1 || got[0] != "shadow" {
		t.Errorf("root's directory holds %v, want only its own file", got)
	}
	var st syscall.Stat_t
	syscall.Lstat(secret, &st)
	if b, _ := os.ReadFile(secret); string(b) != "root only\n" || st.Uid != 0 || st.Mode&0o777 != 0o600 {
		t.Errorf("the link's target was written or chowned: %q uid %d mode %o", b, st.Uid, st.Mode&0o777)
	}
	if got := entries(t, filepath.Join(home, "real")); len(got) != 0 {
		t.Errorf("the directory behind the user's link got %v", got)
	}
}

// The writer child is a process of the user's: what it may do is what the
// user may do, which is the point; it must not be a way to stall root.
func TestWriteFileAsUserGivesUpOnAStuckWriter(t *testing.T) {
	u := slurmtest.NewUser(t)
	w, err := slurm.UserWriterFor(u.UID, u.Name, []string{"/bin/sh", "-c", "sleep 60", "sh"})
	if err != nil {
		t.Fatal(err)
	}
	w.Timeout = 500 * time.Millisecond
	start := time.Now()
	_, err = (&slurm.Summary{Job: "7"}).WriteFile(sharedDir(t), w)
	if err == nil || !strings.Contains(err.Error(), "no answer") || time.Since(start) > 5*time.Second {
		t.Errorf("a writer that never answers: %v after %v", err, time.Since(start))
	}
}

// The child runs with the user's supplementary groups and none of root's
// environment or inherited descriptors.
func TestWriteFileAsUserHasTheUsersGroupsAndNothingOfRoots(t *testing.T) {
	u := slurmtest.NewUser(t)
	group := u.Name + "g"
	for _, argv := range [][]string{{"groupadd", "--system", group}, {"usermod", "--append", "--groups", group, u.Name}} {
		if out, err := exec.Command(argv[0], argv[1:]...).CombinedOutput(); err != nil {
			t.Fatalf("%v: %v: %s", argv, err, out)
		}
	}
	t.Cleanup(func() { exec.Command("groupdel", group).Run() })
	g, err := user.LookupGroup(group)
	if err != nil {
		t.Fatal(err)
	}
	gid, _ := strconv.Atoi(g.Gid)
	base := sharedDir(t)
	shared := mkdir(t, filepath.Join(base, "project"), 0o775, 0, gid)
	closed := mkdir(t, filepath.Join(base, "closed"), 0o755, 0, gid)
	w, err := slurm.UserWriterFor(u.UID, u.Name, writerCommand(t))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := (&slurm.Summary{Job: "8"}).WriteFile(shared, w); err != nil {
		t.Errorf("a directory the user's supplementary group may write: %v", err)
	}
	if _, err := (&slurm.Summary{Job: "8"}).WriteFile(closed, w); err == nil {
		t.Error("a directory the group may only read was written")
	}

	t.Setenv("HEATSINK_TEST_SECRET", "s3cr3t")
	inherited, err := os.Open(filepath.Join(base, "project"))
	if err != nil {
		t.Fatal(err)
	}
	defer inherited.Close()
	syscall.Syscall(syscall.SYS_FCNTL, inherited.Fd(), syscall.F_SETFD, 0) // as a parent might leave it
	w.Command = []string{"/bin/sh", "-c", `env > "$1/seen"; ls /proc/self/fd >> "$1/seen"; echo "$1/job-$2-thermal.json"`, "sh"}
	home := mkdir(t, filepath.Join(base, "home"), 0o755, u.UID, u.GID)
	if _, err := (&slurm.Summary{Job: "9"}).WriteFile(home, w); err != nil {
		t.Fatal(err)
	}
	seen, _ := os.ReadFile(filepath.Join(home, "seen"))
	fds := 0
	for _, l := range strings.Fields(string(seen)) {
		if _, err := strconv.Atoi(l); err == nil {
			fds++
		}
	}
	if strings.Contains(string(seen), "s3cr3t") || fds > 4 {
		t.Errorf("the child saw root's environment or descriptors (0-2 and ls's own expected):\n%s", seen)
	}
}

func TestUserWriterForRefusesAUserThisHostDoesNotKnow(t *testing.T) {
	u := slurmtest.NewUser(t)
	if _, err := slurm.UserWriterFor(u.UID, "someone-else", []string{"x"}); err == nil || !strings.Contains(err.Error(), "nothing written") {
		t.Errorf("uid %d under another name: %v", u.UID, err)
	}
	if _, err := slurm.UserWriterFor(3999999, "", []string{"x"}); err == nil || !strings.Contains(err.Error(), "nothing written") {
		t.Errorf("an unknown uid: %v", err)
	}
}

func TestOpenDirNoFollowNamesTheLink(t *testing.T) {
	base := t.TempDir()
	os.MkdirAll(filepath.Join(base, "real", "sub"), 0o755)
	os.Symlink(filepath.Join(base, "real"), filepath.Join(base, "link"))
	os.WriteFile(filepath.Join(base, "file"), nil, 0o644)
	for _, openat2 := range []bool{true, false} {
		for _, tc := range []struct{ dir, want string }{
			{filepath.Join(base, "real", "sub"), ""},
			{filepath.Join(base, "link", "sub"), filepath.Join(base, "link") + ": a symbolic link"},
			{filepath.Join(base, "link"), filepath.Join(base, "link") + ": a symbolic link"},
			{filepath.Join(base, "file"), "not a directory"},
			{base + "/real/../link", `".." in it`},
			{filepath.Join(base, "missing"), "no such file"},
		} {
			fd, err := slurm.OpenDirNoFollowWith(tc.dir, openat2)
			if err == nil {
				syscall.Close(fd)
			}
			if (tc.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tc.want)) {
				t.Errorf("openat2 %v, %s: error %v, want %q", openat2, tc.dir, err, tc.want)
			}
		}
	}
}

func TestReceiveSummaryTakesOnlyASummaryOfItsJob(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct{ job, in, want string }{
		{"../../etc/x", `{"job":"../../etc/x"}`, "not a job id"},
		{"5", `{"job":"6"}`, "not the summary of job 5"},
		{"5", `not json`, "not the summary of job 5"},
		{"5", strings.Repeat(" ", slurm.MaxSummaryBytes+1), "over"},
	} {
		if _, err := slurm.ReceiveSummary(dir, tc.job, strings.NewReader(tc.in)); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("job %s, input %.20q: %v, want %q", tc.job, tc.in, err, tc.want)
		}
	}
	if path, err := slurm.ReceiveSummary(dir, "5", strings.NewReader(`{"job":"5"}`)); err != nil || path != filepath.Join(dir, slurm.FileName("5")) {
		t.Errorf("a good summary: %q %v", path, err)
	}
	if got := entries(t, dir); len(got) != 1 {
		t.Errorf("directory holds %v, want the one summary", got)
	}
}

func TestWriteFileRefusesAJobIDThatIsAPath(t *testing.T) {
	if _, err := (&slurm.Summary{Job: "../../etc/x"}).WriteFile(t.TempDir(), nil); err == nil {
		t.Error("a job id with a path was accepted")
	}
}
