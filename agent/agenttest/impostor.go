// Package agenttest starts an impostor of the node agent, a real process
// of another user that took the agent's port or socket and answers "all
// cool", for tests and benchmarks of whoever must not believe it.
package agenttest

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// envImpostor tells a copy of the test binary to be the impostor, and
// where: "tcp:HOST:PORT" or "unix:PATH".
const envImpostor = "HEATSINK_AGENTTEST_IMPOSTOR"

// RunImpostorIfAsked makes this process the impostor when StartImpostor
// started it, and then never returns; otherwise it does nothing. Call it
// first in TestMain, or in main.
func RunImpostorIfAsked() {
	where := os.Getenv(envImpostor)
	if where == "" {
		return
	}
	network, addr, _ := strings.Cut(where, ":")
	l, err := net.Listen(network, addr)
	if err != nil {
		fmt.Fprintf(os.Stderr, "impostor: %v\n", err)
		os.Exit(1)
	}
	if network == "unix" {
		os.Chmod(addr, 0o666) // so that the owner check, not the mode, is what refuses it
	}
	// Every question is answered as the agent would with nothing firing.
	err = http.Serve(l, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, "[]\n")
	}))
	fmt.Fprintf(os.Stderr, "impostor: %v\n", err)
	os.Exit(1)
}

// Impostor is a running impostor process.
type Impostor struct {
	cmd  *exec.Cmd
	dir  string
	log  *bytes.Buffer
	Done chan struct{}
}

// StartImpostor starts a copy of this executable as user uid and group gid
// listening on network ("tcp" or "unix") addr, and returns once it
// listens. The copy lives in a directory that user can read; Stop removes it.
func StartImpostor(network, addr string, uid, gid int) (*Impostor, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("impostor: %w", err)
	}
	dir, err := os.MkdirTemp("", "heatsink-impostor-")
	if err != nil {
		return nil, fmt.Errorf("impostor: %w", err)
	}
	bin := filepath.Join(dir, "impostor")
	if err := copyFile(self, bin); err != nil || os.Chmod(dir, 0o755) != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("impostor: copy %s: %w", self, err)
	}
	im := &Impostor{dir: dir, log: &bytes.Buffer{}, Done: make(chan struct{})}
	im.cmd = exec.Command(bin)
	im.cmd.Env = append(os.Environ(), envImpostor+"="+network+":"+addr)
	im.cmd.Stdout, im.cmd.Stderr = im.log, im.log
	im.cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}, Pdeathsig: syscall.SIGKILL}
	if err := im.cmd.Start(); err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("impostor: start as uid %d: %w", uid, err)
	}
	go func() { im.cmd.Wait(); close(im.Done) }()
	for deadline := time.Now().Add(15 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if c, err := net.DialTimeout(network, addr, time.Second); err == nil {
			c.Close()
			return im, nil
		}
		select {
		case <-im.Done:
			os.RemoveAll(dir)
			return nil, fmt.Errorf("impostor on %s %s exited: %s", network, addr, im.log)
		default:
		}
		if time.Now().After(deadline) {
			im.Stop()
			return nil, fmt.Errorf("impostor on %s %s: not listening after 15 s: %s", network, addr, im.log)
		}
	}
}

// Stop kills the impostor and removes its copy.
func (im *Impostor) Stop() error {
	im.cmd.Process.Kill()
	<-im.Done
	return os.RemoveAll(im.dir)
}

func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY|os.O_EXCL, 0o755)
	if err != nil {
		return err
	}
	_, err = io.Copy(out, in)
	return errors.Join(err, out.Close())
}
