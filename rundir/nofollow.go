package rundir

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
)

// ErrSymlink is returned for a run directory, or a file in it, that is a
// symbolic link.
var ErrSymlink = errors.New("is a symbolic link: not following it")

// OpenInDir opens name in dir as os.OpenFile does, but follows no symbolic
// link in dir's last element or in name. heatsink often writes runs as
// root into a directory another user could have prepared: a link planted
// there (run.json -> /etc/shadow) must not make root write through it.
func OpenInDir(dir, name string, flag int, perm os.FileMode) (*os.File, error) {
	path := filepath.Join(dir, name)
	d, err := openDir(dir)
	if err != nil {
		return nil, err
	}
	defer d.Close()
	// Relative to the directory opened above, so the directory cannot be
	// swapped for a link between the check and the open.
	fd, err := syscall.Openat(int(d.Fd()), name, flag|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, uint32(perm.Perm()))
	if errors.Is(err, syscall.ELOOP) {
		return nil, fmt.Errorf("open %s: %s %w", path, path, ErrSymlink)
	}
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	return os.NewFile(uintptr(fd), path), nil
}

// openDir opens dir itself without following it, should it be a link.
func openDir(dir string) (*os.File, error) {
	d, err := os.OpenFile(dir, os.O_RDONLY|syscall.O_DIRECTORY|syscall.O_NOFOLLOW, 0)
	if errors.Is(err, syscall.ELOOP) || (errors.Is(err, syscall.ENOTDIR) && isSymlink(dir)) {
		return nil, fmt.Errorf("open run directory: %s %w", dir, ErrSymlink)
	}
	if err != nil {
		return nil, fmt.Errorf("open run directory: %w", err)
	}
	return d, nil
}

func isSymlink(path string) bool {
	st, err := os.Lstat(path)
	return err == nil && st.Mode()&os.ModeSymlink != 0
}
