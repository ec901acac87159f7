package w2v

import (
	"embed"
	"fmt"
	"io/fs"
	"os"
)

// The evaluation sets the project scores vectors on ship with it (see
// evalsets/README.md), so scoring needs nothing outside the binary.
//
//go:embed evalsets/*.txt
var evalSets embed.FS

// BuiltinSets names the sets embedded in heatsink for OpenSets.
const BuiltinSets = "builtin"

// OpenSets resolves --sets: "builtin" is the embedded sets, "" or "none"
// is none (nil), anything else a directory holding sets under the same
// file names.
func OpenSets(spec string) (fs.FS, error) {
	switch spec {
	case "", "none":
		return nil, nil
	case BuiltinSets:
		return fs.Sub(evalSets, "evalsets")
	}
	st, err := os.Stat(spec)
	if err != nil {
		return nil, fmt.Errorf("evaluation sets: %w", err)
	}
	if !st.IsDir() {
		return nil, fmt.Errorf("evaluation sets: %s is not a directory (give the directory that holds ws353.txt, google.txt...)", spec)
	}
	return os.DirFS(spec), nil
}
