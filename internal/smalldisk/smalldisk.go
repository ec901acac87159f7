// Package smalldisk gives tests and the fault benchmark a real filesystem
// that fills up: a small tmpfs, and a filler that takes its free space
// (blocks and inodes) until it is freed.
package smalldisk

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
)

// MountAt mounts a tmpfs of size bytes, and as many inodes as it has
// pages, on dir.
func MountAt(dir string, size int64) error {
	opts := "size=" + strconv.FormatInt(size, 10) + ",nr_inodes=" + strconv.FormatInt(max(size/4096, 16), 10)
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, opts); err != nil {
		return fmt.Errorf("mount a %d-byte tmpfs on %s: %w", size, dir, err)
	}
	return nil
}

// Unmount detaches the tmpfs at dir.
func Unmount(dir string) error {
	if err := syscall.Unmount(dir, syscall.MNT_DETACH); err != nil {
		return fmt.Errorf("unmount %s: %w", dir, err)
	}
	return nil
}

// Mount mounts a small tmpfs on a fresh directory for the test and
// unmounts it when the test ends. It skips the test where mounting is
// impossible (not root, or no CAP_SYS_ADMIN in a container), saying so.
func Mount(t testing.TB, size int64) string {
	t.Helper()
	dir := t.TempDir()
	if err := MountAt(dir, size); err != nil {
		t.Skipf("a full disk needs a small tmpfs, and mounting one failed (%v): run the test as root", err)
	}
	t.Cleanup(func() {
		if err := Unmount(dir); err != nil {
			t.Error(err)
		}
	})
	return dir
}

// FillDir writes a filler file into dir until the filesystem answers
// ENOSPC, then creates empty files until it refuses new files too (a full
// ext4 or xfs refuses a new directory entry; tmpfs, a new inode). It
// returns the function that removes them, giving the space back.
func FillDir(dir string) (free func() error, err error) {
	path := filepath.Join(dir, ".smalldisk-filler")
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600)
	if err != nil {
		return nil, fmt.Errorf("fill %s: %w", dir, err)
	}
	buf := make([]byte, 4096)
	for {
		if _, err := f.Write(buf); err != nil {
			if !errors.Is(err, syscall.ENOSPC) {
				f.Close()
				return nil, fmt.Errorf("fill %s: %w", dir, err)
			}
			break
		}
	}
	f.Close()
	made := []string{path}
	for i := 0; ; i++ {
		p := path + "." + strconv.Itoa(i)
		f, err := os.OpenFile(p, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
		if err != nil {
			if !errors.Is(err, syscall.ENOSPC) {
				return nil, fmt.Errorf("fill %s: %w", dir, err)
			}
			break
		}
		f.Close()
		made = append(made, p)
	}
	return func() error {
		var errs []error
		for _, p := range made {
			if err := os.Remove(p); err != nil {
				errs = append(errs, fmt.Errorf("free %s: %w", dir, err))
			}
		}
		return errors.Join(errs...)
	}, nil
}

// Fill is FillDir for a test, failing it on an error.
func Fill(t testing.TB, dir string) (free func()) {
	t.Helper()
	fr, err := FillDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	return func() {
		if err := fr(); err != nil {
			t.Error(err)
		}
	}
}
