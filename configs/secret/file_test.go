//go:build linux

// (Mkfifo, /dev/zero and /proc/self/fd are Linux's.)

package secret

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A {file: PATH} secret is a token or passphrase: a file that is too large,
// a device (/dev/zero read until memory ran out) or a FIFO nobody writes
// to (open blocked forever) is refused quickly, naming the file and why;
// a pipe that is written to, as from --influx-token-file <(pass show x),
// still works (issue 28).
func TestSecretFileIsLimited(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, b []byte) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, b, 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	fifo := func(name string) string {
		path := filepath.Join(dir, name)
		if err := syscall.Mkfifo(path, 0o600); err != nil {
			t.Skipf("mkfifo: %v", err)
		}
		return path
	}
	// pipe returns a path to the read end of a pipe that s was written to.
	pipe := func(s string) string {
		r, w, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { r.Close() })
		go func() { w.WriteString(s); w.Close() }()
		return fmt.Sprintf("/proc/self/fd/%d", r.Fd())
	}
	for _, tc := range []struct {
		name string
		path func() string
		want string // the secret, or with err the error's text
		err  bool
	}{
		{"token", func() string { return write("tok", []byte(" s3cr3t\n")) }, "s3cr3t", false},
		{"at the limit", func() string { return write("max", bytes.Repeat([]byte("a"), MaxFileSize)) }, strings.Repeat("a", MaxFileSize), false},
		{"over the limit", func() string { return write("big", bytes.Repeat([]byte("a"), MaxFileSize+1)) }, "larger than 64 KiB", true},
		{"dev zero", func() string { return "/dev/zero" }, "/dev/zero: not a regular file", true},
		{"directory", func() string { return dir }, "not a regular file", true},
		{"fifo without writer", func() string { return fifo("nobody") }, "nothing was written", true},
		{"pipe written to", func() string { return pipe("piped\n") }, "piped", false},
		{"pipe over the limit", func() string { return pipe(strings.Repeat("b", MaxFileSize+1)) }, "larger than 64 KiB", true},
		{"missing", func() string { return filepath.Join(dir, "none") }, "no such file", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := tc.path()
			type result struct {
				v   Value
				err error
			}
			done := make(chan result, 1)
			go func() {
				v, err := FromFile(path)
				done <- result{v, err}
			}()
			var r result
			select {
			case r = <-done:
			case <-time.After(10 * time.Second):
				t.Fatalf("reading %s has not returned after 10s", path)
			}
			if tc.err {
				if r.err == nil || !strings.Contains(r.err.Error(), tc.want) || !strings.Contains(r.err.Error(), path) {
					t.Errorf("err = %v, want one naming %s and %q", r.err, path, tc.want)
				}
				return
			}
			if r.err != nil {
				t.Fatal(r.err)
			}
			if r.v.Reveal() != tc.want {
				t.Errorf("secret of %d bytes, want %d", len(r.v.Reveal()), len(tc.want))
			}
		})
	}
}
