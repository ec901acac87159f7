package pdu

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/gosnmp/gosnmp"
)

// agent is a real net-snmp snmpd on 127.0.0.1, serving the APC subtree
// through testdata/passpersist.sh from a values file the test rewrites.
type agent struct {
	port   uint16
	values string
	dir    string
	log    *syncBuffer
}

// v3 users the agent knows: name -> createUser arguments and rouser level.
var agentUsers = []struct{ name, create, level string }{
	{"sha-aes", "SHA shaaespass1 AES shaaespriv1", "priv"},
	{"sha256-aes", "SHA-256 sha256pass1 AES sha256priv1", "priv"},
	{"sha-auth", "SHA shaauthpass1", "auth"},
	{"noauth", "", "noauth"},
}

func findSNMPD(t testing.TB) string {
	if p, err := exec.LookPath("snmpd"); err == nil {
		return p
	}
	for _, p := range []string{"/usr/sbin/snmpd", "/usr/local/sbin/snmpd"} {
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	// Not a skip: the test suite installs snmpd (scripts/deps.sh), and a
	// missing peer must show as a failure, never as silently untested code.
	t.Fatal("snmpd not found in PATH, /usr/sbin or /usr/local/sbin: install net-snmp's snmpd (Debian package snmpd; scripts/deps.sh does it)")
	return ""
}

// startAgent starts snmpd with a private configuration in a temp dir and
// waits until it answers. values maps OID -> "TYPE VALUE".
func startAgent(t *testing.T, values map[string]string) *agent {
	t.Helper()
	bin := findSNMPD(t)
	script, err := filepath.Abs("testdata/passpersist.sh")
	if err != nil {
		t.Fatal(err)
	}
	a := &agent{dir: t.TempDir(), log: &syncBuffer{}}
	a.values = filepath.Join(a.dir, "values")
	a.set(t, values)
	for attempt := 0; attempt < 3; attempt++ {
		a.port = freeUDPPort(t)
		conf := filepath.Join(a.dir, "snmpd.conf")
		var b strings.Builder
		fmt.Fprintf(&b, "[snmp] persistentDir %s\n", filepath.Join(a.dir, "persist"))
		fmt.Fprintf(&b, "agentAddress udp:127.0.0.1:%d\n", a.port)
		b.WriteString("dontLogTCPWrappersConnects yes\n")
		b.WriteString("sysDescr APC Web/SNMP Management Card (MB:v4.1.0 PF:v6.2.1 MN:AP8641)\n")
		b.WriteString("sysName rack1-pdu\n")
		b.WriteString("rocommunity public 127.0.0.1\n")
		for _, u := range agentUsers {
			fmt.Fprintf(&b, "createUser %s %s\nrouser %s %s\n", u.name, u.create, u.name, u.level)
		}
		fmt.Fprintf(&b, "pass_persist .1.3.6.1.4.1.318 %s %s\n", script, a.values)
		if err := os.WriteFile(conf, []byte(b.String()), 0o600); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(bin, "-f", "-Lo", "-C", "-c", conf, "-I", "-smux", "-p", filepath.Join(a.dir, "snmpd.pid"))
		// An empty MIB directory keeps snmpd from logging hundreds of lines
		// about MIB modules it cannot find; it needs none of them.
		mibs := filepath.Join(a.dir, "mibs")
		os.MkdirAll(mibs, 0o755)
		cmd.Env = append(os.Environ(), "MIBDIRS="+mibs, "MIBS=")
		cmd.Stdout, cmd.Stderr = a.log, a.log
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		if err := cmd.Start(); err != nil {
			t.Fatalf("start %s: %v", bin, err)
		}
		exited := make(chan error, 1)
		go func() { exited <- cmd.Wait() }()
		t.Cleanup(func() {
			// The process group takes the pass_persist script down with snmpd.
			syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
			select {
			case <-exited:
			case <-time.After(10 * time.Second):
				syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
				<-exited
			}
			if t.Failed() {
				t.Logf("snmpd log:\n%s", a.log.String())
			}
		})
		if a.ready(exited) {
			return a
		}
		select {
		case <-exited: // lost the port to another process: try another
			continue
		default:
			t.Fatalf("snmpd on port %d did not answer within 20 s; log:\n%s", a.port, a.log.String())
		}
	}
	t.Fatalf("snmpd would not start; log:\n%s", a.log.String())
	return nil
}

func (a *agent) ready(exited <-chan error) bool {
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case <-exited:
			return false
		default:
		}
		g := &gosnmp.GoSNMP{Target: "127.0.0.1", Port: a.port, Community: "public", Version: gosnmp.Version2c,
			Timeout: 200 * time.Millisecond, Retries: 0, MaxOids: 10}
		if g.Connect() == nil {
			_, err := g.Get([]string{oidSysDescr})
			g.Conn.Close()
			if err == nil {
				return true
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	return false
}

// set replaces the values the agent serves, atomically.
func (a *agent) set(t *testing.T, values map[string]string) {
	t.Helper()
	oids := make([]string, 0, len(values))
	for o := range values {
		oids = append(oids, o)
	}
	sort.Strings(oids)
	var b strings.Builder
	for _, o := range oids {
		fmt.Fprintf(&b, "%s %s\n", o, values[o])
	}
	tmp := a.values + ".tmp"
	if err := os.WriteFile(tmp, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, a.values); err != nil {
		t.Fatal(err)
	}
}

func freeUDPPort(t *testing.T) uint16 {
	c, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	return uint16(c.LocalAddr().(*net.UDPAddr).Port)
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// relay forwards SNMP datagrams between one client and the agent, counting
// requests, and can drop them to play an agent that stopped answering.
type relay struct {
	port     uint16
	requests atomic.Int64
	drop     atomic.Bool
}

func startRelay(t *testing.T, to uint16) *relay {
	t.Helper()
	front, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	back, err := net.DialUDP("udp", nil, &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1), Port: int(to)})
	if err != nil {
		t.Fatal(err)
	}
	r := &relay{port: uint16(front.LocalAddr().(*net.UDPAddr).Port)}
	var client atomic.Pointer[net.Addr]
	t.Cleanup(func() { front.Close(); back.Close() })
	go func() {
		buf := make([]byte, 65536)
		for {
			n, from, err := front.ReadFrom(buf)
			if err != nil {
				return
			}
			r.requests.Add(1)
			if r.drop.Load() {
				continue
			}
			client.Store(&from)
			back.Write(buf[:n])
		}
	}()
	go func() {
		buf := make([]byte, 65536)
		for {
			n, err := back.Read(buf)
			if errors.Is(err, net.ErrClosed) {
				return
			}
			if err != nil {
				continue // ICMP port unreachable while the agent restarts
			}
			if c := client.Load(); c != nil {
				front.WriteTo(buf[:n], *c)
			}
		}
	}()
	return r
}
