package slurmtest

import (
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"strconv"
	"sync/atomic"
	"testing"
)

// User is a throwaway local account for a test.
type User struct {
	Name     string
	UID, GID int
}

var users atomic.Int64

// NewUser creates a local system account with a group of its own and no
// home (useradd), removed (userdel) at the test's cleanup: a job's user
// whose rights the kernel checks, unlike root's. It needs root; without it
// the test is skipped with the reason.
func NewUser(t testing.TB) User {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root: creates a throwaway user with useradd")
	}
	name := fmt.Sprintf("hstest%d-%d", os.Getpid()%100000, users.Add(1))
	out, err := exec.Command("useradd", "--system", "--user-group", "--no-create-home", "--shell", "/usr/sbin/nologin", name).CombinedOutput()
	if err != nil {
		t.Fatalf("useradd %s: %v: %s", name, err, out)
	}
	t.Cleanup(func() {
		if out, err := exec.Command("userdel", name).CombinedOutput(); err != nil {
			t.Errorf("userdel %s: %v: %s", name, err, out)
		}
	})
	u, err := user.Lookup(name)
	if err != nil {
		t.Fatalf("the new user %s: %v", name, err)
	}
	uid, err1 := strconv.Atoi(u.Uid)
	gid, err2 := strconv.Atoi(u.Gid)
	if err1 != nil || err2 != nil {
		t.Fatalf("the new user %s: uid %q gid %q", name, u.Uid, u.Gid)
	}
	return User{Name: name, UID: uid, GID: gid}
}
