// Package buildinfo says which heatsink a binary is: its module version,
// the VCS revision it was built from and whether that tree had changes,
// read from the build information the Go toolchain embeds.
//
// A build outside a git checkout (a source tarball, a distribution
// package) has no VCS stamp; the link-time overrides supply one:
//
//	go build -ldflags "-X github.com/heatsink-hpc/heatsink/buildinfo.version=v0.4.0 \
//	    -X github.com/heatsink-hpc/heatsink/buildinfo.revision=$(git rev-parse HEAD)" ./cmd/heatsink
package buildinfo

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"
)

// Set with -ldflags -X; they win over what the toolchain recorded.
var (
	version  string
	revision string
)

// Info is what is known of a build. Empty fields are unknown.
type Info struct {
	// Version is the module version: a release tag (v0.4.0), the
	// pseudo-version go build derives from the commit
	// (v0.0.0-20261124203951-f1d4629c0a1b+dirty), or "(devel)".
	Version string `json:"version"`
	// Revision is the VCS commit, Time its commit time (RFC 3339).
	Revision string `json:"revision,omitempty"`
	Time     string `json:"vcs_time,omitempty"`
	// Modified says the working tree had uncommitted changes.
	Modified  bool   `json:"vcs_modified,omitempty"`
	GoVersion string `json:"go"`
	Platform  string `json:"platform"`
}

// Read returns this binary's build information.
func Read() Info {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		bi = nil
	}
	return FromBuildInfo(bi, version, revision)
}

// FromBuildInfo assembles Info from the toolchain's record (nil when the
// binary has none) and the link-time overrides ("" for none).
func FromBuildInfo(bi *debug.BuildInfo, versionOverride, revisionOverride string) Info {
	i := Info{Version: "(devel)", GoVersion: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH}
	if bi != nil {
		if v := bi.Main.Version; v != "" {
			i.Version = v
		}
		i.GoVersion = bi.GoVersion
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				i.Revision = s.Value
			case "vcs.time":
				i.Time = s.Value
			case "vcs.modified":
				i.Modified = s.Value == "true"
			case "GOOS":
				i.Platform = s.Value + i.Platform[strings.IndexByte(i.Platform, '/'):]
			case "GOARCH":
				i.Platform = i.Platform[:strings.IndexByte(i.Platform, '/')+1] + s.Value
			}
		}
	}
	if versionOverride != "" {
		i.Version = versionOverride
	}
	if revisionOverride != "" {
		i.Revision, i.Time, i.Modified = revisionOverride, "", false
	}
	return i
}

// String is the one line `heatsink --version` prints.
func (i Info) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "heatsink %s", i.Version)
	var vcs []string
	if i.Revision != "" {
		vcs = append(vcs, "revision "+i.Revision)
	} else {
		vcs = append(vcs, "no VCS revision: built outside a git checkout, in a linked worktree, by go run, or with -buildvcs=false")
	}
	if i.Modified {
		vcs = append(vcs, "modified")
	}
	if i.Time != "" {
		vcs = append(vcs, "committed "+i.Time)
	}
	fmt.Fprintf(&b, " (%s) %s %s", strings.Join(vcs, ", "), i.GoVersion, i.Platform)
	return b.String()
}

// Versions is the build as run.json's versions records it.
func (i Info) Versions() map[string]string {
	v := map[string]string{"heatsink": i.Version, "go": i.GoVersion}
	if i.Revision != "" {
		v["revision"] = i.Revision
		v["vcs_modified"] = fmt.Sprint(i.Modified)
	}
	if i.Time != "" {
		v["vcs_time"] = i.Time
	}
	return v
}
