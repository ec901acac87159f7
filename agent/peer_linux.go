package agent

import (
	"bufio"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// unixPeerUID is the user of the process at the other end of a Unix
// socket, from the kernel (SO_PEERCRED), which no process can forge.
func unixPeerUID(c net.Conn) (uint32, error) {
	uc, ok := c.(*net.UnixConn)
	if !ok {
		return 0, fmt.Errorf("%T is no Unix socket", c)
	}
	raw, err := uc.SyscallConn()
	if err != nil {
		return 0, err
	}
	var cred *syscall.Ucred
	var gerr error
	if err := raw.Control(func(fd uintptr) {
		cred, gerr = syscall.GetsockoptUcred(int(fd), syscall.SOL_SOCKET, syscall.SO_PEERCRED)
	}); err != nil {
		return 0, err
	}
	if gerr != nil {
		return 0, fmt.Errorf("SO_PEERCRED: %w", gerr)
	}
	return cred.Uid, nil
}

// tcpSocket is one line of /proc/net/tcp or tcp6.
type tcpSocket struct {
	local, remote net.TCPAddr
	state         string // "01" established, "0A" listen
	uid           uint32
	inode         string // "0" for a socket no process holds any more
}

// tcpSockets reads the machine's TCP sockets, IPv4 and IPv6, from proc.
func tcpSockets(proc string) ([]tcpSocket, error) {
	var out []tcpSocket
	for _, name := range []string{"tcp", "tcp6"} {
		path := filepath.Join(proc, "net", name)
		f, err := os.Open(path)
		if err != nil {
			if name == "tcp6" && errors.Is(err, os.ErrNotExist) {
				continue // a kernel without IPv6
			}
			return nil, err
		}
		sc := bufio.NewScanner(f)
		sc.Scan() // header
		for line := 2; sc.Scan(); line++ {
			col := strings.Fields(sc.Text())
			if len(col) < 10 {
				continue
			}
			l, err1 := parseProcAddr(col[1])
			r, err2 := parseProcAddr(col[2])
			uid, err3 := strconv.ParseUint(col[7], 10, 32)
			if err := errors.Join(err1, err2, err3); err != nil {
				return nil, fmt.Errorf("%s line %d: %w", path, line, err)
			}
			out = append(out, tcpSocket{local: l, remote: r, state: col[3], uid: uint32(uid), inode: col[9]})
		}
		err = sc.Err()
		f.Close()
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", path, err)
		}
	}
	return out, nil
}

// parseProcAddr decodes "0100007F:2385": the address as the kernel's
// 32-bit words in this machine's byte order, the port big-endian.
func parseProcAddr(s string) (net.TCPAddr, error) {
	h, p, ok := strings.Cut(s, ":")
	port, err := strconv.ParseUint(p, 16, 16)
	if !ok || err != nil || (len(h) != 8 && len(h) != 32) {
		return net.TCPAddr{}, fmt.Errorf("address %q", s)
	}
	raw, err := hex.DecodeString(h)
	if err != nil {
		return net.TCPAddr{}, fmt.Errorf("address %q: %w", s, err)
	}
	ip := make(net.IP, len(raw))
	for i := 0; i < len(raw); i += 4 {
		binary.NativeEndian.PutUint32(ip[i:], binary.BigEndian.Uint32(raw[i:]))
	}
	return net.TCPAddr{IP: ip, Port: int(port)}, nil
}

// tcpPeerUID is the user owning the socket at the far end of a local TCP
// connection (local, remote as the client sees them): the kernel's record,
// like SO_PEERCRED for a Unix socket. Only an established socket that a
// process still holds counts.
func tcpPeerUID(proc string, local, remote net.Addr) (uint32, error) {
	l, lok := local.(*net.TCPAddr)
	r, rok := remote.(*net.TCPAddr)
	if !lok || !rok {
		return 0, fmt.Errorf("%v to %v is no TCP connection", local, remote)
	}
	socks, err := tcpSockets(proc)
	if err != nil {
		return 0, err
	}
	for _, s := range socks {
		if s.local.Port == r.Port && s.remote.Port == l.Port && s.local.IP.Equal(r.IP) && s.remote.IP.Equal(l.IP) {
			if s.state != "01" || s.inode == "0" {
				return 0, fmt.Errorf("the peer of %v closed its end after answering (state %s): no process vouches for the answer", l, s.state)
			}
			return s.uid, nil
		}
	}
	return 0, fmt.Errorf("no local socket is the peer of %v to %v: the agent is not on this machine", l, r)
}

// PortHolder names who listens on a TCP port of this machine, "pid 123
// (python3), uid 1000", for the error of an agent whose port is taken;
// "" when the kernel lists no such listener.
func PortHolder(proc string, port int) string {
	socks, err := tcpSockets(proc)
	if err != nil {
		return ""
	}
	for _, s := range socks {
		if s.state != "0A" || s.local.Port != port {
			continue
		}
		if pid, comm := socketProcess(proc, s.inode); pid != "" {
			return fmt.Sprintf("pid %s (%s), uid %d", pid, comm, s.uid)
		}
		return fmt.Sprintf("a process of uid %d", s.uid)
	}
	return ""
}

// socketProcess finds the process holding socket inode through its file
// descriptors; root sees every process's.
func socketProcess(proc, inode string) (pid, comm string) {
	dirs, _ := os.ReadDir(proc)
	want := "socket:[" + inode + "]"
	for _, d := range dirs {
		if _, err := strconv.Atoi(d.Name()); err != nil {
			continue
		}
		fds, _ := os.ReadDir(filepath.Join(proc, d.Name(), "fd"))
		for _, fd := range fds {
			if l, _ := os.Readlink(filepath.Join(proc, d.Name(), "fd", fd.Name())); l == want {
				b, _ := os.ReadFile(filepath.Join(proc, d.Name(), "comm"))
				return d.Name(), strings.TrimSpace(string(b))
			}
		}
	}
	return "", ""
}
