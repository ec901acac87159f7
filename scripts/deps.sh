#!/usr/bin/env bash
# Installs the real peers the tests talk to, when missing. Idempotent.
set -euo pipefail
export PATH="$(go env GOPATH)/bin:$PATH"
SUDO=""
[ "$(id -u)" = 0 ] || SUDO="sudo"
need_apt=()
# snmpd lives in /usr/sbin, outside an unprivileged user's PATH.
command -v snmpd >/dev/null 2>&1 || [ -x /usr/sbin/snmpd ] || need_apt+=(snmpd)
command -v snmpget >/dev/null 2>&1 || need_apt+=(snmp)
# A one-node Slurm cluster (slurm/slurmtest) needs slurmctld,
# slurmd, the client commands and munge; the daemons live in /usr/sbin.
{ command -v slurmctld >/dev/null 2>&1 || [ -x /usr/sbin/slurmctld ]; } || need_apt+=(slurmctld)
{ command -v slurmd >/dev/null 2>&1 || [ -x /usr/sbin/slurmd ]; } || need_apt+=(slurmd)
command -v srun >/dev/null 2>&1 || need_apt+=(slurm-client)
{ command -v munged >/dev/null 2>&1 || [ -x /usr/sbin/munged ]; } || need_apt+=(munge)
# Slurm's accounting (sacct, sacctmgr; slurmtest's Accounting option) needs
# slurmdbd and a MariaDB the test starts itself: the server's and client's
# programs only (the -core packages), not mariadb-server, whose install
# would start a system database.
{ command -v slurmdbd >/dev/null 2>&1 || [ -x /usr/sbin/slurmdbd ]; } || need_apt+=(slurmdbd)
{ command -v mariadbd >/dev/null 2>&1 || [ -x /usr/sbin/mariadbd ]; } || need_apt+=(mariadb-server-core)
command -v mariadb >/dev/null 2>&1 || need_apt+=(mariadb-client-core)
# heatsink export --prometheus is tested against a real Prometheus scraping a
# real node_exporter (recordings/promhistory); both live in /usr/bin.
command -v prometheus >/dev/null 2>&1 || [ -x /usr/bin/prometheus ] || need_apt+=(prometheus)
command -v prometheus-node-exporter >/dev/null 2>&1 || [ -x /usr/bin/prometheus-node-exporter ] || need_apt+=(prometheus-node-exporter)
# clang compiles kernels/*/*.cu for NVPTX in CI (no nvcc there), so the CUDA
# sources are checked on every run, not only on a GPU machine.
command -v clang-14 >/dev/null 2>&1 || command -v clang >/dev/null 2>&1 || need_apt+=(clang-14)
# The Debian package (scripts/package.sh, deploy/debian) is installed with
# dpkg into a scratch root and its unit checked with systemd-analyze verify;
# objdump reads the glibc version the cgo binary needs (its Depends).
command -v dpkg-deb >/dev/null 2>&1 || need_apt+=(dpkg)
command -v systemd-analyze >/dev/null 2>&1 || need_apt+=(systemd)
command -v objdump >/dev/null 2>&1 || need_apt+=(binutils)
# The packaged bash completion is tried in a real bash with its library.
[ -f /usr/share/bash-completion/bash_completion ] || need_apt+=(bash-completion)
if [ ${#need_apt[@]} -gt 0 ]; then
  echo "deps: installing ${need_apt[*]} (apt-get)"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${need_apt[@]}" >/dev/null
fi
if ! command -v influxd >/dev/null 2>&1; then
  echo "deps: building influxd 1.8.10 from the Go module proxy (about 100 s)"
  GOFLAGS= go install github.com/influxdata/influxdb/cmd/influxd@v1.8.10
fi
if ! command -v nfpm >/dev/null 2>&1; then
  echo "deps: building nfpm (the .deb packager of scripts/package.sh) from the Go module proxy"
  GOFLAGS= go install github.com/goreleaser/nfpm/v2/cmd/nfpm@v2.45.2
fi
