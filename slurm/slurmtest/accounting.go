package slurmtest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// AccountingBinaries are what Options.Accounting needs besides
// Binaries: Debian's slurmdbd, MariaDB's server and client binaries
// (mariadb-server-core, mariadb-client-core: mariadb-server's programs
// without the system service it would start on install) and the
// accounting commands of slurm-client. scripts/deps.sh installs them.
var AccountingBinaries = []string{"/usr/sbin/mariadbd", "mariadb-install-db", "mariadb", "/usr/sbin/slurmdbd", "sacct", "sacctmgr"}

// accountingAvailable says why accounting cannot start here, or nil.
func accountingAvailable() error {
	var missing []string
	for _, b := range AccountingBinaries {
		if _, err := exec.LookPath(b); err != nil {
			missing = append(missing, b)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("slurm accounting is not installed (missing %s): run scripts/deps.sh, which installs Debian's slurmdbd mariadb-server-core mariadb-client-core",
			strings.Join(missing, ", "))
	}
	return nil
}

// accountingConf are slurm.conf's lines for slurmdbd on dbdPort. The
// commands and slurmctld reach slurmdbd with a munge credential from
// AccountingStoragePass's socket (a site's second munged), not
// AuthInfo's: it must name this cluster's munged too.
func accountingConf(dbdPort int, munge string) string {
	return fmt.Sprintf("AccountingStorageType=accounting_storage/slurmdbd\nAccountingStorageHost=127.0.0.1\nAccountingStoragePort=%d\nAccountingStoragePass=%s\n", dbdPort, munge)
}

// startAccounting starts MariaDB on its own data directory, socket and
// port under Dir (as root, the user the tests run as; no systemd, nothing
// of the host's own database touched), creates slurmdbd's database user,
// starts slurmdbd on dbdPort and registers the cluster, so that slurmctld
// finds its accounting ready when it starts.
func (c *Cluster) startAccounting(host, munge string, dbPort, dbdPort int) error {
	if err := accountingAvailable(); err != nil {
		return err
	}
	data, sock := filepath.Join(c.Dir, "mysql"), filepath.Join(c.Dir, "run", "mysqld.sock")
	install := exec.Command("mariadb-install-db", "--no-defaults", "--datadir="+data, "--user=root",
		"--skip-test-db", "--skip-name-resolve", "--auth-root-authentication-method=socket")
	if out, err := install.CombinedOutput(); err != nil {
		return fmt.Errorf("mariadb-install-db: %w: %s", err, tail(out))
	}
	if err := c.spawn("mariadbd", nil, "/usr/sbin/mariadbd", "--no-defaults", "--datadir="+data, "--user=root",
		"--socket="+sock, fmt.Sprintf("--port=%d", dbPort), "--bind-address=127.0.0.1", "--skip-name-resolve",
		"--pid-file="+filepath.Join(c.Dir, "run", "mysqld.pid"), "--log-error="+filepath.Join(c.Dir, "log", "mysqld.log"),
		// A test database: small buffers, no fsync per commit.
		"--innodb-buffer-pool-size=32M", "--innodb-log-file-size=16M", "--innodb-flush-log-at-trx-commit=0"); err != nil {
		return err
	}
	if err := c.waitFor("mariadbd", 60*time.Second, func() error {
		return exec.Command("mariadb", "--no-defaults", "--socket="+sock, "--user=root", "-e", "SELECT 1").Run()
	}); err != nil {
		return err
	}
	const user, pass = "slurm", "heatsinktest"
	sql := fmt.Sprintf("CREATE USER '%s'@'127.0.0.1' IDENTIFIED BY '%s'; GRANT ALL ON slurm_acct_db.* TO '%s'@'127.0.0.1';", user, pass, user)
	if out, err := exec.Command("mariadb", "--no-defaults", "--socket="+sock, "--user=root", "-e", sql).CombinedOutput(); err != nil {
		return fmt.Errorf("mariadb: create slurmdbd's user: %w: %s", err, out)
	}
	conf := fmt.Sprintf(`AuthType=auth/munge
AuthInfo=socket=%s
DbdHost=%s
DbdAddr=127.0.0.1
DbdPort=%d
SlurmUser=root
PidFile=%s
LogFile=%s
DebugLevel=info
StorageType=accounting_storage/mysql
StorageHost=127.0.0.1
StoragePort=%d
StorageUser=%s
StoragePass=%s
StorageLoc=slurm_acct_db
`, munge, host, dbdPort, filepath.Join(c.Dir, "run", "slurmdbd.pid"), filepath.Join(c.Dir, "log", "slurmdbd.log"), dbPort, user, pass)
	// slurmdbd reads slurmdbd.conf beside slurm.conf, and only when no
	// one but its owner can read it (it holds the password).
	if err := os.WriteFile(filepath.Join(c.Dir, "slurmdbd.conf"), []byte(conf), 0o600); err != nil {
		return err
	}
	if err := c.spawn("slurmdbd", nil, "/usr/sbin/slurmdbd", "-D"); err != nil {
		return err
	}
	ctx := context.Background()
	if err := c.waitFor("slurmdbd", 60*time.Second, func() error {
		_, err := c.Client.Run(ctx, "sacctmgr", "--noheader", "list", "cluster")
		return err
	}); err != nil {
		return err
	}
	if _, err := c.Client.Run(ctx, "sacctmgr", "-i", "add", "cluster", clusterName); err != nil {
		return fmt.Errorf("register the cluster with slurmdbd: %w", err)
	}
	return nil
}

// waitFor polls ready until it answers nil, the daemon exits or timeout
// passes.
func (c *Cluster) waitFor(daemon string, timeout time.Duration, ready func() error) error {
	deadline := time.Now().Add(timeout)
	for {
		err := ready()
		if err == nil {
			return nil
		}
		if xerr := c.exited(daemon); xerr != nil {
			return xerr
		}
		if time.Now().After(deadline) {
			return errors.Join(fmt.Errorf("%s not ready after %v", daemon, timeout), err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}
