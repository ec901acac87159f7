#!/usr/bin/env bash
# Builds the Debian package: scripts/package.sh OUTDIR writes
# OUTDIR/heatsink_VERSION_amd64.deb and prints its path.
#
# The binary is built with cgo (go-nvml loads libnvidia-ml at run time
# through it), so the package depends on the glibc this machine's binary
# links against; build on the oldest Debian or Ubuntu the nodes run. The
# man pages (one per command) and the bash, zsh and fish completions come
# from the binary itself, so they match its commands. nfpm (pinned below)
# assembles the .deb from deploy/debian/nfpm.yaml.
#
# VERSION is git's: a tag vX.Y.Z on HEAD gives X.Y.Z, N commits after it
# X.Y.Z+gitN.HASH; with no tag, 0.0.0~gitCOMMITTIME.HASH (a Go
# pseudo-version's parts, sorting under any release). A tree with changes
# adds +dirty. `heatsink version` of the installed binary prints the same
# commit and the Go form of the version (vX.Y.Z..., v0.0.0-COMMITTIME-HASH).
set -euo pipefail
[ $# -eq 1 ] || { echo "usage: scripts/package.sh OUTDIR" >&2; exit 2; }
out=$(realpath -m "$1") # before the cd: OUTDIR is relative to where it was given
cd "$(dirname "$0")/.."
export PATH="$(go env GOPATH)/bin:$PATH"
NFPM_VERSION=v2.45.2
if ! command -v nfpm >/dev/null 2>&1; then
  echo "package: building nfpm $NFPM_VERSION from the Go module proxy" >&2
  GOFLAGS= go install "github.com/goreleaser/nfpm/v2/cmd/nfpm@$NFPM_VERSION"
fi
git rev-parse HEAD >/dev/null 2>&1 || { echo "package: $(pwd) is not a git checkout: the version comes from git" >&2; exit 1; }

rev=$(git rev-parse HEAD)
short=${rev:0:12}
when=$(TZ=UTC git log -1 --format=%cd --date=format-local:%Y%m%d%H%M%S HEAD)
if tag=$(git describe --tags --match 'v[0-9]*' --abbrev=0 HEAD 2>/dev/null); then
  n=$(git rev-list --count "$tag..HEAD")
  base=${tag#v}
  if [ "$n" = 0 ]; then
    debver=$base gover=$tag
  else
    debver="$base+git$n.$short" gover="$tag-$n-g$short"
  fi
else
  debver="0.0.0~git$when.$short" gover="v0.0.0-$when-$short"
fi
if [ -n "$(git status --porcelain --untracked-files=no)" ]; then
  debver+="+dirty" gover+="+dirty"
fi
# dpkg's own check of the version, before anything is built.
dpkg --validate-version "$debver" 2>/dev/null || { echo "package: $debver is not a valid Debian version" >&2; exit 1; }

stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
echo "package: building heatsink $gover (cgo)" >&2
CGO_ENABLED=1 go build -buildvcs=false -o "$stage/heatsink" \
  -ldflags "-X github.com/heatsink-hpc/heatsink/buildinfo.version=$gover -X github.com/heatsink-hpc/heatsink/buildinfo.revision=$rev" \
  ./cmd/heatsink
SOURCE_DATE_EPOCH=$(git log -1 --format=%ct HEAD) "$stage/heatsink" man "$stage/man"
gzip -9n "$stage"/man/*.1
mkdir "$stage/completions"
"$stage/heatsink" completion bash >"$stage/completions/heatsink.bash"
"$stage/heatsink" completion zsh >"$stage/completions/_heatsink"
"$stage/heatsink" completion fish >"$stage/completions/heatsink.fish"
# The unit and the Slurm scripts name /usr/local/bin/heatsink, where a hand
# install puts it; the package's binary is /usr/bin/heatsink.
sed 's#/usr/local/bin/heatsink#/usr/bin/heatsink#g' deploy/heatsink-collect.service >"$stage/heatsink-collect.service"
mkdir "$stage/slurm"
for f in deploy/slurm/*.sh; do
  sed 's#/usr/local/bin/heatsink#/usr/bin/heatsink#g' "$f" >"$stage/slurm/$(basename "$f")"
done
cp configs/node.yaml "$stage/heatsink.yaml"
cp LICENSE "$stage/copyright"
mkdir "$stage/prometheus" "$stage/grafana"
cp deploy/prometheus/*.yml "$stage/prometheus/"
cp deploy/grafana/*.json "$stage/grafana/"
cp deploy/debian/postinst deploy/debian/prerm deploy/debian/postrm "$stage/"
# The oldest glibc symbol version the binary needs is the libc6 it depends on.
libc=$(objdump -T "$stage/heatsink" | grep -o 'GLIBC_[0-9.]*' | sort -Vu | tail -1)
[ -n "$libc" ] || { echo "package: found no glibc symbol version in the binary (not a cgo build?)" >&2; exit 1; }

mkdir -p "$out"
deb="$out/heatsink_${debver}_amd64.deb"
(cd "$stage" && HEATSINK_DEB_VERSION=$debver HEATSINK_LIBC=${libc#GLIBC_} \
  nfpm package --config "$OLDPWD/deploy/debian/nfpm.yaml" --packager deb --target "$deb" >&2)
echo "$deb"
