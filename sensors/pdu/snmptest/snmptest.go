// Package snmptest starts a real net-snmp snmpd for tests: on 127.0.0.1 and
// a free port, with a private configuration and persistent directory in a
// temporary directory, serving the APC enterprise subtree (.1.3.6.1.4.1.318)
// through a pass_persist script from a values file the test can rewrite
// while the agent runs, and knowing SNMPv3 users of every security level.
//
// snmpd must be installed (Debian package snmpd; scripts/deps.sh installs
// it). When it is missing, Start fails the test with that instruction rather
// than skip it: untested code must not pass as tested.
package snmptest

import (
	"bytes"
	_ "embed"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/gosnmp/gosnmp"
)

// passPersist is the pass_persist agent; see its header for the protocol.
//
//go:embed passpersist.sh
var passPersist []byte

// Community is the v1/v2c read community of every agent.
const Community = "public"

// User is an SNMPv3 user the agent knows.
type User struct {
	Name     string
	Auth     string // createUser protocol: SHA, SHA-256 ("" for none)
	AuthPass string
	Priv     string // AES ("" for none)
	PrivPass string
	Level    string // rouser level: noauth, auth, priv
}

// Users are the SNMPv3 users of every agent, one per security level and
// authentication protocol the PDU source must speak.
var Users = []User{
	{Name: "sha-aes", Auth: "SHA", AuthPass: "shaaespass1", Priv: "AES", PrivPass: "shaaespriv1", Level: "priv"},
	{Name: "sha256-aes", Auth: "SHA-256", AuthPass: "sha256pass1", Priv: "AES", PrivPass: "sha256priv1", Level: "priv"},
	{Name: "sha-auth", Auth: "SHA", AuthPass: "shaauthpass1", Level: "auth"},
	{Name: "noauth", Level: "noauth"},
}

// SysDescr is what the agent answers for sysDescr.0.
const SysDescr = "APC Web/SNMP Management Card (MB:v4.1.0 PF:v6.2.1 MN:AP8641)"

// Agent is a running snmpd.
type Agent struct {
	Port   uint16
	dir    string
	values string
	log    *syncBuffer
}

// FindSNMPD returns the path of snmpd, or fails the test saying how to get it.
func FindSNMPD(t testing.TB) string {
	t.Helper()
	if p, err := exec.LookPath("snmpd"); err == nil {
		return p
	}
	for _, p := range []string{"/usr/sbin/snmpd", "/usr/local/sbin/snmpd"} {
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	t.Fatal("snmpd not found in PATH, /usr/sbin or /usr/local/sbin: install net-snmp's snmpd (Debian package snmpd; scripts/deps.sh does it)")
	return ""
}

// Start starts snmpd serving values (OID -> "TYPE VALUE", TYPE as
// pass_persist names it: integer, gauge, counter, counter64, string...) and
// waits until it answers. The agent stops when the test ends.
func Start(t testing.TB, values map[string]string) *Agent {
	t.Helper()
	bin := FindSNMPD(t)
	a := &Agent{dir: t.TempDir(), log: &syncBuffer{}}
	a.values = filepath.Join(a.dir, "values")
	a.Set(t, values)
	script := filepath.Join(a.dir, "passpersist.sh")
	if err := os.WriteFile(script, passPersist, 0o755); err != nil {
		t.Fatal(err)
	}
	mibs := filepath.Join(a.dir, "mibs")
	if err := os.MkdirAll(mibs, 0o755); err != nil {
		t.Fatal(err)
	}
	for attempt := 0; attempt < 3; attempt++ {
		a.Port = freeUDPPort(t)
		conf := filepath.Join(a.dir, "snmpd.conf")
		var b strings.Builder
		fmt.Fprintf(&b, "[snmp] persistentDir %s\n", filepath.Join(a.dir, "persist"))
		fmt.Fprintf(&b, "agentAddress udp:127.0.0.1:%d\n", a.Port)
		b.WriteString("dontLogTCPWrappersConnects yes\n")
		fmt.Fprintf(&b, "sysDescr %s\nsysName rack1-pdu\n", SysDescr)
		fmt.Fprintf(&b, "rocommunity %s 127.0.0.1\n", Community)
		for _, u := range Users {
			fmt.Fprintf(&b, "createUser %s %s %s %s %s\nrouser %s %s\n", u.Name, u.Auth, u.AuthPass, u.Priv, u.PrivPass, u.Name, u.Level)
		}
		fmt.Fprintf(&b, "pass_persist .1.3.6.1.4.1.318 %s %s\n", script, a.values)
		if err := os.WriteFile(conf, []byte(b.String()), 0o600); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(bin, "-f", "-Lo", "-C", "-c", conf, "-I", "-smux", "-p", filepath.Join(a.dir, "snmpd.pid"))
		// An empty MIB directory keeps snmpd from logging hundreds of lines
		// about MIB modules it cannot find; it needs none of them.
		cmd.Env = append(os.Environ(), "MIBDIRS="+mibs, "MIBS=")
		cmd.Stdout, cmd.Stderr = a.log, a.log
		// Its own process group, so stopping it stops the pass_persist script too.
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		if err := cmd.Start(); err != nil {
			t.Fatalf("start %s: %v", bin, err)
		}
		exited := make(chan error, 1)
		go func() { exited <- cmd.Wait() }()
		t.Cleanup(func() {
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
			t.Fatalf("snmpd on port %d did not answer within 20 s; log:\n%s", a.Port, a.log.String())
		}
	}
	t.Fatalf("snmpd would not start; log:\n%s", a.log.String())
	return nil
}

func (a *Agent) ready(exited <-chan error) bool {
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case <-exited:
			return false
		default:
		}
		g := &gosnmp.GoSNMP{Target: "127.0.0.1", Port: a.Port, Community: Community, Version: gosnmp.Version2c,
			Timeout: 200 * time.Millisecond, Retries: 0, MaxOids: 10}
		if g.Connect() == nil {
			_, err := g.Get([]string{".1.3.6.1.2.1.1.1.0"})
			g.Conn.Close()
			if err == nil {
				return true
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	return false
}

// Set replaces the values the agent serves, atomically; the next request
// sees them.
func (a *Agent) Set(t testing.TB, values map[string]string) {
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

// Log returns what snmpd has logged.
func (a *Agent) Log() string { return a.log.String() }

func freeUDPPort(t testing.TB) uint16 {
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
