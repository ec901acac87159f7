package slurm

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// As EpilogSlurmctld, root writes the summary into a WorkDir its user
// controls. Links the user planted at the temporary and the final name
// must neither be followed nor have their targets chowned.
func TestWriteFileAsRootFollowsNoLinkInTheJobsDirectory(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root: the attack is on root writing into a user's directory")
	}
	const uid, gid = 4242, 4242
	base := t.TempDir()
	secret := filepath.Join(base, "secret")
	if err := os.WriteFile(secret, []byte("root only\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	work := filepath.Join(base, "work")
	if err := os.Mkdir(work, 0o755); err != nil {
		t.Fatal(err)
	}
	os.Chown(work, uid, gid)
	final := filepath.Join(work, FileName("42"))
	for _, link := range []string{final, final + ".tmp"} {
		if err := os.Symlink(secret, link); err != nil {
			t.Fatal(err)
		}
	}

	s := &Summary{Job: "42", Nodes: []string{"n1"}}
	path, err := s.WriteFile(work, &Owner{UID: uid, GID: gid})
	if err != nil {
		t.Fatal(err)
	}

	b, _ := os.ReadFile(secret)
	var st syscall.Stat_t
	syscall.Lstat(secret, &st)
	if string(b) != "root only\n" || st.Uid != 0 || st.Mode&0o777 != 0o600 {
		t.Errorf("the link's target was written or chowned: %q uid %d mode %o", b, st.Uid, st.Mode&0o777)
	}
	syscall.Lstat(path, &st)
	if st.Mode&syscall.S_IFMT != syscall.S_IFREG || st.Uid != uid || st.Gid != gid {
		t.Errorf("%s: mode %o uid %d gid %d, want a regular file of the job's user", path, st.Mode, st.Uid, st.Gid)
	}
	ents, _ := os.ReadDir(work)
	if len(ents) != 2 { // the summary and the planted .tmp link, left alone
		t.Errorf("work dir holds %d entries, want the summary and the planted link", len(ents))
	}
}

func TestWriteFileAsRootRefusesADirectoryOthersControl(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root")
	}
	for _, tc := range []struct {
		name      string
		uid       int
		mode      os.FileMode
		wantError bool
	}{
		{"the job user's own directory", 4242, 0o755, false},
		{"root's directory, not writable by others", 0, 0o755, false},
		{"root's world-writable directory (/tmp)", 0, 0o1777, true},
		{"another user's directory", 4343, 0o777, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "d")
			os.Mkdir(dir, 0o700)
			os.Chmod(dir, tc.mode)
			os.Chown(dir, tc.uid, 0)
			_, err := (&Summary{Job: "7"}).WriteFile(dir, &Owner{UID: 4242, GID: 4242})
			if (err != nil) != tc.wantError {
				t.Errorf("error %v, want error %v", err, tc.wantError)
			}
		})
	}
}

func TestWriteFileRefusesAJobIDThatIsAPath(t *testing.T) {
	if _, err := (&Summary{Job: "../../etc/x"}).WriteFile(t.TempDir(), nil); err == nil {
		t.Error("a job id with a path was accepted")
	}
}
