package main

import (
	"path/filepath"
	"runtime/debug"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

// versions are recorded in run.json.
func versions() map[string]string {
	v := map[string]string{"heatsink": version}
	if bi, ok := debug.ReadBuildInfo(); ok {
		v["go"] = bi.GoVersion
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" {
				v["revision"] = s.Value
			}
		}
	}
	return v
}

func absDir(dir string) string {
	if a, err := filepath.Abs(dir); err == nil {
		return a
	}
	return dir
}
