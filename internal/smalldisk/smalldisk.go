// Package smalldisk gives tests a real filesystem that fills up: a small
// tmpfs mounted for the test, and a filler file that takes its free space
// until the test frees it.
package smalldisk

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
)

// Mount mounts a tmpfs of size bytes, and as many inodes as it has pages,
// on a fresh directory and unmounts it
// when the test ends. It skips the test where mounting is impossible (not
// root, or no CAP_SYS_ADMIN in a container), saying so.
func Mount(t testing.TB, size int64) string {
	t.Helper()
	dir := t.TempDir()
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, "size="+strconv.FormatInt(size, 10)+",nr_inodes="+strconv.FormatInt(max(size/4096, 16), 10)); err != nil {
		t.Skipf("a full disk needs a small tmpfs, and mounting one failed (%v): run the test as root", err)
	}
	t.Cleanup(func() {
		if err := syscall.Unmount(dir, syscall.MNT_DETACH); err != nil {
			t.Errorf("unmount %s: %v", dir, err)
		}
	})
	return dir
}

// Fill writes a filler file into dir until the filesystem answers ENOSPC
// and returns a function that removes it, giving the space back.
func Fill(t testing.TB, dir string) (free func()) {
	t.Helper()
	path := filepath.Join(dir, ".smalldisk-filler")
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600)
	if err != nil {
		t.Fatalf("fill %s: %v", dir, err)
	}
	buf := make([]byte, 4096)
	for {
		if _, err := f.Write(buf); err != nil {
			if !errors.Is(err, syscall.ENOSPC) {
				t.Fatalf("fill %s: %v", dir, err)
			}
			break
		}
	}
	f.Close()
	// A full disk on ext4 or xfs also refuses new files (no block for the
	// directory entry); on tmpfs that takes running out of inodes.
	var extra []string
	for i := 0; ; i++ {
		p := path + "." + strconv.Itoa(i)
		f, err := os.OpenFile(p, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
		if err != nil {
			if !errors.Is(err, syscall.ENOSPC) {
				t.Fatalf("fill %s: %v", dir, err)
			}
			break
		}
		f.Close()
		extra = append(extra, p)
	}
	return func() {
		for _, p := range append(extra, path) {
			if err := os.Remove(p); err != nil {
				t.Errorf("free %s: %v", dir, err)
			}
		}
	}
}
