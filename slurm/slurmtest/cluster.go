// Package slurmtest starts a real Slurm cluster on this machine for tests:
// munged, slurmctld and one slurmd per node, all on 127.0.0.1 with their
// configuration, state, sockets and logs in a temporary directory, several
// nodes being several slurmd on one host (NodeName=n1,n2... with
// NodeHostname set to this host and a port each).
//
// It needs Debian's slurmctld, slurmd, slurm-client and munge packages
// (scripts/deps.sh installs them) and root, since slurmd runs jobs as
// their users and munged must run as the munge user. When they are missing,
// Start fails the test with the reason: the Slurm integration is tested
// against the real thing or not at all.
//
// Start-up takes a few seconds, so a test package starts one cluster and
// shares it between subtests. Cleanup cancels every job, stops the daemons
// and kills whatever process of this cluster is left (found by the
// SLURM_CONF in its environment), so no daemon outlives the test.
package slurmtest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/heatsink-hpc/heatsink/slurm"
)

// Options configure a cluster. Script paths must be executable by root.
type Options struct {
	// Nodes is the number of nodes, named n1, n2...; default 1.
	Nodes int
	// Prolog, Epilog, EpilogSlurmctld and HealthCheckProgram are set in
	// slurm.conf when given. The Prolog runs at allocation (PrologFlags=Alloc).
	Prolog, Epilog, EpilogSlurmctld, HealthCheckProgram string
	// Conf are further slurm.conf lines.
	Conf []string
	// GPUs gives each node that many GPU gres (gres.conf File= lines on
	// empty files standing in for /dev/nvidiaN, which is all Slurm needs)
	// and as many CPUs, so that jobs holding some of them share a node.
	GPUs int
	// StartTimeout bounds the wait for every node to be idle; default 90s.
	StartTimeout time.Duration
	// Accounting starts MariaDB (its own data directory, socket and port
	// in Dir) and slurmdbd, with AccountingStorageType=slurmdbd, so that
	// sacct and sacctmgr work; it adds a few seconds to the start and
	// needs AccountingBinaries.
	Accounting bool
}

// clusterName is slurm.conf's ClusterName, the cluster slurmdbd knows.
const clusterName = "heatsinktest"

// Cluster is a running test cluster.
type Cluster struct {
	// Dir holds slurm.conf, the daemons' state and their logs.
	Dir string
	// Conf is the path of slurm.conf.
	Conf string
	// Nodes are the node names.
	Nodes []string
	// Client runs Slurm's commands against this cluster.
	Client slurm.Client

	mu    sync.Mutex
	procs []*proc
	lock  *os.File // held from Launch to Stop; see lockHost
}

type proc struct {
	name string
	cmd  *exec.Cmd
	done chan struct{}
}

// Binaries are the programs a cluster needs, with where Debian puts them.
var Binaries = []string{"/usr/sbin/munged", "/usr/sbin/mungekey", "/usr/sbin/slurmctld", "/usr/sbin/slurmd",
	"scontrol", "sinfo", "squeue", "srun", "salloc", "sbatch", "scancel"}

// Available reports why a cluster cannot start here, or nil.
func Available() error {
	var missing []string
	for _, b := range Binaries {
		if _, err := exec.LookPath(b); err != nil {
			missing = append(missing, b)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("slurm is not installed (missing %s): run scripts/deps.sh, which installs Debian's slurmctld slurmd slurm-client munge",
			strings.Join(missing, ", "))
	}
	if os.Geteuid() != 0 {
		return errors.New("a test Slurm cluster needs root (slurmd runs jobs as their users, munged as the munge user)")
	}
	if _, err := user.Lookup("munge"); err != nil {
		return fmt.Errorf("no munge user: %w (install the munge package)", err)
	}
	return nil
}

// Start starts a cluster for the test and stops it at cleanup; it fails
// the test, with the reason, when Slurm is missing or does not come up.
func Start(t testing.TB, o Options) *Cluster {
	t.Helper()
	if err := Available(); err != nil {
		t.Fatalf("slurmtest: %v", err)
	}
	dir, err := os.MkdirTemp("", "slurmtest-")
	if err != nil {
		t.Fatal(err)
	}
	c, err := Launch(dir, o)
	t.Cleanup(func() {
		if c != nil {
			c.Stop()
		}
		if t.Failed() {
			t.Logf("slurmtest: logs kept in %s", dir)
			return
		}
		os.RemoveAll(dir)
	})
	if err != nil {
		t.Fatalf("slurmtest: %v (logs in %s)", err, dir)
	}
	return c
}

// Launch starts a cluster in dir for programs with no testing.T; stop it
// with Stop. On error the daemons already started are stopped. Every parent
// of dir must be searchable by others (os.MkdirTemp("", ...) is; a
// testing.T's TempDir is not), since munged runs as the munge user.
func Launch(dir string, o Options) (*Cluster, error) {
	if o.Nodes <= 0 {
		o.Nodes = 1
	}
	if o.StartTimeout <= 0 {
		o.StartTimeout = 90 * time.Second
	}
	// The munge user must reach its socket directory through dir.
	if err := os.Chmod(dir, 0o755); err != nil {
		return nil, err
	}
	for d := filepath.Dir(dir); ; d = filepath.Dir(d) {
		if st, err := os.Stat(d); err == nil && st.Mode().Perm()&0o001 == 0 {
			return nil, fmt.Errorf("%s is not searchable by others (mode %v): munged, running as the munge user, could not reach its socket under %s", d, st.Mode().Perm(), dir)
		}
		if d == filepath.Dir(d) {
			break
		}
	}
	lock, err := lockHost()
	if err != nil {
		return nil, err
	}
	c := &Cluster{Dir: dir, Conf: filepath.Join(dir, "slurm.conf"), lock: lock}
	c.Client = slurm.Client{Env: []string{"SLURM_CONF=" + c.Conf}}
	for i := 1; i <= o.Nodes; i++ {
		c.Nodes = append(c.Nodes, "n"+strconv.Itoa(i))
	}
	if err := c.start(o); err != nil {
		c.Stop()
		return nil, err
	}
	return c, nil
}

func (c *Cluster) start(o Options) error {
	sock, err := c.startMunge()
	if err != nil {
		return err
	}
	host, err := os.Hostname()
	if err != nil {
		return err
	}
	ports, err := freePorts(1 + len(c.Nodes) + 2)
	if err != nil {
		return err
	}
	for _, d := range []string{"state", "log", "run"} {
		if err := os.MkdirAll(filepath.Join(c.Dir, d), 0o755); err != nil {
			return err
		}
	}
	var conf bytes.Buffer
	fmt.Fprintf(&conf, `ClusterName=`+clusterName+`
SlurmctldHost=%s(127.0.0.1)
SlurmctldPort=%d
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=%s
CredType=cred/munge
StateSaveLocation=%s
SlurmdSpoolDir=%s
SlurmctldPidFile=%s
SlurmdPidFile=%s
SlurmctldLogFile=%s
SlurmdLogFile=%s
SlurmctldDebug=info
SlurmdDebug=info
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
JobCompType=jobcomp/none
MpiDefault=none
SwitchType=switch/none
ReturnToService=2
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
KillWait=5
MessageTimeout=30
SlurmdTimeout=300
InactiveLimit=0
PrologFlags=Alloc
`, host, ports[0], sock, filepath.Join(c.Dir, "state"), filepath.Join(c.Dir, "spool-%n"),
		filepath.Join(c.Dir, "run", "slurmctld.pid"), filepath.Join(c.Dir, "run", "slurmd-%n.pid"),
		filepath.Join(c.Dir, "log", "slurmctld.log"), filepath.Join(c.Dir, "log", "slurmd-%n.log"))
	dbPort, dbdPort := ports[1+len(c.Nodes)], ports[2+len(c.Nodes)]
	if o.Accounting {
		conf.WriteString(accountingConf(dbdPort, sock))
	} else {
		conf.WriteString("AccountingStorageType=accounting_storage/none\n")
	}
	for key, path := range map[string]string{"Prolog": o.Prolog, "Epilog": o.Epilog, "EpilogSlurmctld": o.EpilogSlurmctld, "HealthCheckProgram": o.HealthCheckProgram} {
		if path != "" {
			fmt.Fprintf(&conf, "%s=%s\n", key, path)
		}
	}
	for _, l := range o.Conf {
		fmt.Fprintln(&conf, l)
	}
	cpus, gres := 1, ""
	if o.GPUs > 0 {
		if err := c.writeGres(o.GPUs); err != nil {
			return err
		}
		cpus, gres = o.GPUs, fmt.Sprintf(" Gres=gpu:%d", o.GPUs)
		// The configured CPUs, not this host's, so that a 2-core host
		// still has a CPU for each GPU's job.
		fmt.Fprintln(&conf, "GresTypes=gpu\nSlurmdParameters=config_overrides")
	}
	for i, n := range c.Nodes {
		fmt.Fprintf(&conf, "NodeName=%s NodeHostname=%s NodeAddr=127.0.0.1 Port=%d CPUs=%d%s State=UNKNOWN\n", n, host, ports[1+i], cpus, gres)
	}
	fmt.Fprintf(&conf, "PartitionName=debug Nodes=%s Default=YES MaxTime=INFINITE State=UP\n", strings.Join(c.Nodes, ","))
	if err := os.WriteFile(c.Conf, conf.Bytes(), 0o644); err != nil {
		return err
	}
	if o.Accounting {
		if err := c.startAccounting(host, sock, dbPort, dbdPort); err != nil {
			return err
		}
	}
	if err := c.spawn("slurmctld", nil, "/usr/sbin/slurmctld", "-D", "-f", c.Conf); err != nil {
		return err
	}
	for _, n := range c.Nodes {
		if err := c.spawn("slurmd-"+n, nil, "/usr/sbin/slurmd", "-D", "-N", n, "-f", c.Conf); err != nil {
			return err
		}
	}
	return c.WaitIdle(o.StartTimeout)
}

// startMunge creates a key and starts munged as the munge user; it
// returns the socket path.
// writeGres writes gres.conf beside slurm.conf (where Slurm looks for it)
// with n GPUs per node, each a character device in Dir/dev named as the
// driver's device files are but with /dev/null's numbers (slurmd wants a
// device; nothing opens it).
func (c *Cluster) writeGres(n int) error {
	dev := filepath.Join(c.Dir, "dev")
	if err := os.MkdirAll(dev, 0o755); err != nil {
		return err
	}
	var b bytes.Buffer
	for i := range n {
		f := filepath.Join(dev, "nvidia"+strconv.Itoa(i))
		if err := syscall.Mknod(f, syscall.S_IFCHR|0o666, 1<<8|3); err != nil && !os.IsExist(err) {
			return fmt.Errorf("mknod %s: %w", f, err)
		}
		fmt.Fprintf(&b, "Name=gpu File=%s\n", f)
	}
	return os.WriteFile(filepath.Join(c.Dir, "gres.conf"), b.Bytes(), 0o644)
}

func (c *Cluster) startMunge() (string, error) {
	u, err := user.Lookup("munge")
	if err != nil {
		return "", err
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	// munged insists: its key directory private, its socket directory
	// reachable by all, both owned by it.
	keyDir, sockDir := filepath.Join(c.Dir, "munge"), filepath.Join(c.Dir, "munge-run")
	for dir, mode := range map[string]os.FileMode{keyDir: 0o700, sockDir: 0o755} {
		if err := os.Mkdir(dir, mode); err != nil {
			return "", err
		}
		if err := os.Chown(dir, uid, gid); err != nil {
			return "", err
		}
	}
	key := filepath.Join(keyDir, "munge.key")
	mk := exec.Command("/usr/sbin/mungekey", "--create", "--keyfile", key)
	mk.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}}
	if out, err := mk.CombinedOutput(); err != nil {
		return "", fmt.Errorf("mungekey: %w: %s", err, out)
	}
	sock := filepath.Join(sockDir, "munge.socket")
	cred := &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}
	if err := c.spawn("munged", cred, "/usr/sbin/munged", "--foreground", "--key-file="+key, "--socket="+sock,
		"--pid-file="+filepath.Join(sockDir, "munged.pid"), "--log-file="+filepath.Join(keyDir, "munged.log"),
		"--seed-file="+filepath.Join(keyDir, "munged.seed")); err != nil {
		return "", err
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		if _, err := os.Stat(sock); err == nil {
			return sock, nil
		}
		if err := c.exited("munged"); err != nil {
			return "", err
		}
		if time.Now().After(deadline) {
			return "", errors.New("munged did not create its socket within 30 s")
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// spawn starts a daemon in the foreground, its output in log/NAME.out,
// with SLURM_CONF naming this cluster so that stragglers can be found.
func (c *Cluster) spawn(name string, cred *syscall.Credential, argv ...string) error {
	out, err := os.Create(filepath.Join(c.Dir, name+".out"))
	if err != nil {
		return err
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), "SLURM_CONF="+c.Conf)
	cmd.Stdout, cmd.Stderr = out, out
	// A test binary that dies must not leave daemons behind.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Credential: cred}
	if err := cmd.Start(); err != nil {
		out.Close()
		return fmt.Errorf("start %s: %w", name, err)
	}
	p := &proc{name: name, cmd: cmd, done: make(chan struct{})}
	go func() {
		cmd.Wait()
		out.Close()
		close(p.done)
	}()
	c.mu.Lock()
	c.procs = append(c.procs, p)
	c.mu.Unlock()
	return nil
}

// exited returns an error with the daemon's output if it has exited.
func (c *Cluster) exited(name string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, p := range c.procs {
		if p.name != name {
			continue
		}
		select {
		case <-p.done:
			b, _ := os.ReadFile(filepath.Join(c.Dir, name+".out"))
			return fmt.Errorf("%s exited: %s", name, tail(b))
		default:
		}
	}
	return nil
}

func tail(b []byte) string {
	if len(b) > 2000 {
		b = b[len(b)-2000:]
	}
	return strings.TrimSpace(string(b))
}

// WaitIdle waits until every node is idle (no job, not drained), the
// state a test starts from.
func (c *Cluster) WaitIdle(timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	var last string
	for {
		for _, d := range append([]string{"slurmctld"}, prefixed("slurmd-", c.Nodes)...) {
			if err := c.exited(d); err != nil {
				return err
			}
		}
		out, err := c.Client.Run(context.Background(), "sinfo", "--noheader", "--Node", "--format=%N %t")
		if err == nil {
			last = strings.TrimSpace(string(out))
			idle := 0
			for _, l := range strings.Split(last, "\n") {
				if f := strings.Fields(l); len(f) == 2 && f[1] == "idle" {
					idle++
				}
			}
			if idle == len(c.Nodes) {
				return nil
			}
		} else {
			last = err.Error()
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("nodes not idle after %v: %s", timeout, last)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func prefixed(p string, ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = p + s
	}
	return out
}

// Log returns a daemon's log (slurmctld, slurmd-n1...), for failing tests.
func (c *Cluster) Log(name string) string {
	b, _ := os.ReadFile(filepath.Join(c.Dir, "log", name+".log"))
	return tail(b)
}

// Stop cancels every job, stops the daemons (SIGTERM, then SIGKILL after
// 15 s) and kills any process of this cluster still running (a job step's
// slurmstepd, a job's processes).
func (c *Cluster) Stop() {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := c.exited("slurmctld"); err == nil {
		c.Client.Run(ctx, "scancel", "--full", "--user=root")
		for ctx.Err() == nil {
			out, err := c.Client.Run(ctx, "squeue", "--noheader", "--format=%i")
			if err != nil || len(bytes.TrimSpace(out)) == 0 {
				break
			}
			time.Sleep(200 * time.Millisecond)
		}
	}
	c.mu.Lock()
	procs := append([]*proc(nil), c.procs...)
	c.mu.Unlock()
	// slurmds first, munged last: the daemons talk to it as they stop.
	for i := len(procs) - 1; i >= 0; i-- {
		p := procs[i]
		p.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-p.done:
		case <-time.After(15 * time.Second):
			p.cmd.Process.Kill()
			<-p.done
		}
	}
	killStragglers(c.Conf)
	if c.lock != nil {
		c.lock.Close() // releases the flock
		c.lock = nil
	}
}

// lockHost takes a host-wide lock so that one test cluster runs at a time.
// go test runs packages in parallel, and two clusters on one host were seen
// to disturb each other (srun's "step creation temporarily disabled", job
// steps that never started) although their ports and directories differ.
func lockHost() (*os.File, error) {
	path := filepath.Join(os.TempDir(), "heatsink-slurmtest.lock")
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	return f, nil
}

// killStragglers kills, by process id, every process whose environment
// names this cluster's slurm.conf: job steps and their programs that
// outlived their slurmd.
func killStragglers(conf string) {
	marker := []byte("SLURM_CONF=" + conf + "\x00")
	ents, _ := os.ReadDir("/proc")
	self := os.Getpid()
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == self {
			continue
		}
		env, err := os.ReadFile(filepath.Join("/proc", e.Name(), "environ"))
		if err != nil || !bytes.Contains(env, marker) {
			continue
		}
		syscall.Kill(pid, syscall.SIGKILL)
	}
}

func freePorts(n int) ([]int, error) {
	var ls []net.Listener
	defer func() {
		for _, l := range ls {
			l.Close()
		}
	}()
	var ports []int
	for i := 0; i < n; i++ {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("find a free port: %w", err)
		}
		ls = append(ls, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}
