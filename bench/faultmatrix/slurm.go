package main

import (
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/heatsink-hpc/heatsink/collectors/influx/influxtest"
	"github.com/heatsink-hpc/heatsink/slurm"
	"github.com/heatsink-hpc/heatsink/slurm/slurmtest"
)

// slurmSummary (issue 28, item 2): `heatsink slurm summary` as a real
// slurmctld's EpilogSlurmctld, running as root, for jobs of a throwaway
// user: one whose WorkDir is a link into a root-owned directory, one whose
// name poses as WorkDir and UserId fields, and a plain one. Per job it
// counts the files that appeared in the root-owned directory (written
// outside the job's WorkDir) and where the summary went, as whom.
func (b *bench) slurmSummary() []row {
	if err := slurmtest.Available(); err != nil {
		return []row{skipped("slurm summary", err.Error())}
	}
	dir, err := os.MkdirTemp("", "heatsink-faults-slurm-")
	check(err)
	defer os.RemoveAll(dir)
	check(os.Chmod(dir, 0o755))
	// The job's user runs heatsink too (the summary's writer): a copy any
	// user may execute, as an installed /usr/local/bin/heatsink is.
	bin := filepath.Join(dir, "heatsink")
	exe, err := os.ReadFile(b.bin)
	check(err)
	check(os.WriteFile(bin, exe, 0o755))
	u, cleanup, err := throwawayUser()
	if err != nil {
		return []row{skipped("slurm summary", err.Error())}
	}
	defer cleanup()

	// A node agent for n1, so the summary has readings to summarise.
	host := "n1"
	agent, agentLog := b.start(host, append([]string{"collect", "--config", b.config(host, b.sysCopy(host), ""), "--duration", "300s"},
		b.influxFlags(filepath.Join(b.work, "slurm-agent-spool"))...)...)
	defer func() { agent.Process.Signal(syscall.SIGTERM); wait(agent, agentLog, "slurm-agent") }()
	conf := filepath.Join(dir, "summary.yaml")
	check(os.WriteFile(conf, []byte(fmt.Sprintf("interval: 1s\nsinks:\n  influx: {url: %s, bucket: %s, spool_dir: %s}\n",
		b.srv.URL(), influxtest.Bucket, filepath.Join(dir, "spool-ctld"))), 0o644))
	log := filepath.Join(dir, "summary.log")
	epilog := filepath.Join(dir, "epilog-slurmctld.sh")
	check(os.WriteFile(epilog, []byte("#!/bin/sh\nexit 0\n"), 0o755)) // written below, once slurm.conf exists
	check(os.Mkdir(filepath.Join(dir, "cluster"), 0o755))
	cluster, err := slurmtest.Launch(filepath.Join(dir, "cluster"), slurmtest.Options{Nodes: 1, EpilogSlurmctld: epilog})
	if err != nil {
		return []row{skipped("slurm summary", err.Error())}
	}
	defer cluster.Stop()
	check(os.WriteFile(epilog, []byte(fmt.Sprintf("#!/bin/sh\nexport SLURM_CONF=%s\n%s slurm summary --config %s --baseline 5s --wait 30s >>%s 2>&1\necho \"done $SLURM_JOB_ID\" >>%s\n",
		cluster.Conf, bin, conf, log, log)), 0o755))

	guarded := mkdirOwned(filepath.Join(dir, "etc"), 0, 0) // root's, 0755: an /etc
	check(os.WriteFile(filepath.Join(guarded, "passwd"), []byte("root:x:0:0::/root:/bin/sh\n"), 0o644))
	home := mkdirOwned(filepath.Join(dir, "home"), u.UID, u.GID)
	work := mkdirOwned(filepath.Join(home, "work"), u.UID, u.GID)
	link := filepath.Join(home, "work-link")
	check(os.Symlink(guarded, link))
	check(os.Lchown(link, u.UID, u.GID))

	var rows []row
	for _, job := range []struct{ fault, workDir, name string }{
		{"slurm summary: WorkDir a link into root's dir", link, "plain"},
		{"slurm summary: job named to forge WorkDir, UserId", work, "x WorkDir=" + guarded + " UserId=root(0)"},
		{"slurm summary: the user's own WorkDir", work, "plain"},
	} {
		before := entries(guarded)
		id, err := b.slurmJob(cluster, u, job.workDir, job.name, log)
		r := row{fault: job.fault, expected: -1, local: -1, delivered: -1, lostLocalS: -1, lostDeliveredS: -1, recoverLocalS: -1, recoverInfluxS: -1, orphans: -1}
		if err != nil {
			r.note = err.Error()
			rows = append(rows, r)
			continue
		}
		outside := len(entries(guarded)) - len(before)
		where := "none written"
		var st syscall.Stat_t
		if syscall.Lstat(filepath.Join(work, slurm.FileName(id)), &st) == nil {
			where = fmt.Sprintf("in WorkDir, owner uid %d (the job's user: %d)", st.Uid, u.UID)
		}
		r.note = fmt.Sprintf("job %s: files written outside WorkDir: %d; summary: %s; epilog said: %s", id, outside, where, lastLine(log, id))
		rows = append(rows, r)
	}
	return rows
}

// slurmJob submits a 2 s job as u and waits for its EpilogSlurmctld.
func (b *bench) slurmJob(c *slurmtest.Cluster, u jobUser, workDir, name, log string) (string, error) {
	sb := exec.Command("sbatch", "--parsable", "--uid="+u.Username, "--gid="+u.Gid, "--chdir="+workDir, "--job-name="+name, "--wrap=sleep 2")
	sb.Env = append(os.Environ(), c.Client.Env...)
	out, err := sb.CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("sbatch: %v: %s", err, out)
	}
	id := strings.TrimSpace(string(out))
	for deadline := time.Now().Add(120 * time.Second); time.Now().Before(deadline); time.Sleep(500 * time.Millisecond) {
		if b, _ := os.ReadFile(log); strings.Contains(string(b), "done "+id+"\n") {
			return id, nil
		}
	}
	return id, fmt.Errorf("job %s: no EpilogSlurmctld in 120 s", id)
}

// jobUser is the throwaway user the jobs run as.
type jobUser struct {
	user.User
	UID, GID int
}

// throwawayUser creates a system user with a group of its own.
func throwawayUser() (u jobUser, cleanup func(), err error) {
	name := fmt.Sprintf("hsfault%d", os.Getpid()%100000)
	if out, err := exec.Command("useradd", "--system", "--user-group", "--no-create-home", "--shell", "/usr/sbin/nologin", name).CombinedOutput(); err != nil {
		return u, nil, fmt.Errorf("useradd %s: %v: %s", name, err, out)
	}
	cleanup = func() { exec.Command("userdel", name).Run() }
	p, err := user.Lookup(name)
	if err == nil {
		u.User = *p
		u.UID, err = strconv.Atoi(p.Uid)
	}
	if err == nil {
		u.GID, err = strconv.Atoi(p.Gid)
	}
	if err != nil {
		cleanup()
		return u, nil, fmt.Errorf("the new user %s: %w", name, err)
	}
	return u, cleanup, nil
}

func mkdirOwned(path string, uid, gid int) string {
	check(os.Mkdir(path, 0o755))
	check(os.Chown(path, uid, gid))
	return path
}

func entries(dir string) []os.DirEntry {
	ents, _ := os.ReadDir(dir)
	return ents
}

// lastLine is the summary log's last line about job id before its "done".
func lastLine(log, id string) string {
	b, _ := os.ReadFile(log)
	lines := strings.Split(string(b), "\n")
	last := ""
	for _, l := range lines {
		if l == "done "+id {
			return last
		}
		last = l
	}
	return ""
}

func skipped(fault, why string) row {
	return row{fault: fault, expected: -1, local: -1, delivered: -1, lostLocalS: -1, lostDeliveredS: -1, recoverLocalS: -1, recoverInfluxS: -1, orphans: -1,
		note: "not run: " + why}
}
