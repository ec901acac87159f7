package agent

import (
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"time"
)

// ListenTCP listens on addr (--listen). When the port is taken it says by
// whom, so that an operator sees the impostor or the second agent rather
// than a bare "address already in use".
func ListenTCP(addr string) (net.Listener, error) {
	l, err := net.Listen("tcp", addr)
	if err == nil {
		return l, nil
	}
	if !errors.Is(err, syscall.EADDRINUSE) {
		return nil, fmt.Errorf("--listen %s: %w", addr, err)
	}
	_, p, _ := net.SplitHostPort(addr)
	port, _ := strconv.Atoi(p)
	holder := PortHolder("/proc", port)
	if holder == "" {
		holder = "a process this user cannot see"
	}
	return nil, fmt.Errorf("--listen %s: port %d is taken by %s: %w", addr, port, holder, err)
}

// ListenSocket creates the agent's local socket at path, readable and
// writable by its owner only, in a directory no one else can write (so no
// one else can replace it). It creates the directory (0700) when missing,
// replaces a stale socket a dead agent left, and refuses to take over one
// another agent still serves.
func ListenSocket(path string) (net.Listener, error) {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("--socket %s: %w", path, err)
	}
	st, err := os.Stat(dir)
	if err != nil {
		return nil, fmt.Errorf("--socket %s: %w", path, err)
	}
	if uid := ownerUID(st); uid != int64(os.Geteuid()) || st.Mode().Perm()&0o022 != 0 {
		return nil, fmt.Errorf("--socket %s: directory %s (owner uid %d, mode %v) must be this user's and writable by no one else, or another user could replace the socket", path, dir, uid, st.Mode().Perm())
	}
	if old, err := os.Lstat(path); err == nil {
		if old.Mode().Type() != fs.ModeSocket {
			return nil, fmt.Errorf("--socket %s: exists and is not a socket (%v); remove it", path, old.Mode().Type())
		}
		if c, err := net.DialTimeout("unix", path, time.Second); err == nil {
			c.Close()
			return nil, fmt.Errorf("--socket %s: another process serves it (a second agent?)", path)
		}
		if err := os.Remove(path); err != nil {
			return nil, fmt.Errorf("--socket %s: remove the stale socket: %w", path, err)
		}
	}
	l, err := net.Listen("unix", path)
	if err != nil {
		return nil, fmt.Errorf("--socket %s: %w", path, err)
	}
	if err := os.Chmod(path, 0o600); err != nil {
		l.Close()
		return nil, fmt.Errorf("--socket %s: %w", path, err)
	}
	return l, nil
}
