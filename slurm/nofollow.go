package slurm

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

// openDirNoFollow opens dir (an O_PATH descriptor, usable with openat and
// renameat) without following a symbolic link in any of its components:
// a job's working directory, or a parent of it, that its user replaced by
// a link is refused rather than resolved. A site whose home directories
// are reached through a link (/home -> /gpfs/home) gets a clear error; the
// summary then needs the real path (--out).
func openDirNoFollow(dir string) (int, error) {
	return openDirNoFollowWith(dir, true)
}

// openDirNoFollowWith tries openat2(RESOLVE_NO_SYMLINKS|RESOLVE_BENEATH)
// when withOpenat2 is set, and walks the path one component at a time
// with O_NOFOLLOW|O_DIRECTORY where openat2 is missing (Linux before 5.6,
// or a seccomp filter that refuses it) and to name the component that
// made openat2 fail.
func openDirNoFollowWith(dir string, withOpenat2 bool) (int, error) {
	if dir == "" || strings.Contains("/"+dir+"/", "/../") {
		return -1, fmt.Errorf("open %q: a directory with \"..\" in it is not followed", dir)
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return -1, fmt.Errorf("open %s: %w", dir, err)
	}
	rel := strings.TrimPrefix(abs, "/")
	root, err := unix.Open("/", unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, fmt.Errorf("open /: %w", err)
	}
	if rel == "" {
		return root, nil
	}
	if withOpenat2 {
		fd, err := unix.Openat2(root, rel, &unix.OpenHow{Flags: unix.O_PATH | unix.O_DIRECTORY | unix.O_CLOEXEC,
			Resolve: unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_BENEATH})
		if err == nil {
			unix.Close(root)
			return fd, nil
		}
		if !errors.Is(err, unix.ENOSYS) && !errors.Is(err, unix.EPERM) && !errors.Is(err, unix.ELOOP) && !errors.Is(err, unix.ENOTDIR) {
			unix.Close(root)
			return -1, fmt.Errorf("open %s: %w", abs, err)
		}
	}
	fd := root
	at := "/"
	for _, c := range strings.Split(rel, "/") {
		if c == "" || c == "." {
			continue
		}
		next, err := unix.Openat(fd, c, unix.O_PATH|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		path := filepath.Join(at, c)
		if err != nil {
			var st unix.Stat_t
			if unix.Fstatat(fd, c, &st, unix.AT_SYMLINK_NOFOLLOW) == nil && st.Mode&unix.S_IFMT == unix.S_IFLNK {
				err = errors.New("a symbolic link, which is not followed")
			}
			unix.Close(fd)
			if path == abs {
				return -1, fmt.Errorf("open %s: %w", abs, err)
			}
			return -1, fmt.Errorf("open %s: %s: %w", abs, path, err)
		}
		unix.Close(fd)
		fd, at = next, path
	}
	return fd, nil
}
