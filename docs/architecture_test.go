package docs

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// holdsGo reports whether dir or a directory under it holds Go files: a
// package, or a room of packages (sensors/).
func holdsGo(dir string) bool {
	found := false
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".go") {
			found = true
			return filepath.SkipAll
		}
		return nil
	})
	return found
}

// Every path docs/architecture.md names (a code span with a slash in it)
// exists: a package directory holding Go files, or a file.
func TestArchitectureNamesOnlyPathsThatExist(t *testing.T) {
	b, err := os.ReadFile("architecture.md")
	if err != nil {
		t.Fatal(err)
	}
	spans := regexp.MustCompile("`([a-z][a-z0-9_./-]*/[a-z0-9_./-]*)`").FindAllStringSubmatch(string(b), -1)
	if len(spans) < 20 {
		t.Fatalf("only %d paths found in architecture.md", len(spans))
	}
	for _, m := range spans {
		path := filepath.Join("..", m[1])
		st, err := os.Stat(path)
		if err != nil {
			t.Errorf("architecture.md names %s: %v", m[1], err)
			continue
		}
		if !st.IsDir() {
			continue
		}
		if !holdsGo(path) {
			t.Errorf("architecture.md names %s, which holds no Go package", m[1])
		}
	}
}
