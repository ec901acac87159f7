package docs

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
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

// row is one row of architecture.md's table of rooms.
type row struct {
	line  int
	rooms []string // path prefixes without the slash: "sensors", "configs"
	// allowed are the prefixes the rooms' packages may import besides the
	// rooms of their own row; any allows every package of the module.
	allowed []string
	any     bool
}

var codeSpan = regexp.MustCompile("`([^`]*)`")

// parseRooms reads the table that starts at the "| room | holds | imports |"
// header. Only the code spans of a cell count, so the prose around them is
// free; the imports cell must name paths, say "any room", or say "nothing",
// so that an empty cell is never read as a silent "nothing".
func parseRooms(md string) ([]row, error) {
	lines := strings.Split(md, "\n")
	start := slices.IndexFunc(lines, func(l string) bool {
		return strings.HasPrefix(strings.ReplaceAll(l, " ", ""), "|room|holds|imports|")
	})
	if start < 0 {
		return nil, errors.New("no table with the header | room | holds | imports |")
	}
	var rows []row
	for i := start + 2; i < len(lines) && strings.HasPrefix(lines[i], "|"); i++ {
		cells := strings.Split(strings.Trim(strings.TrimSpace(lines[i]), "|"), "|")
		if len(cells) != 3 {
			return nil, fmt.Errorf("line %d: %d cells, want room, holds, imports", i+1, len(cells))
		}
		r := row{line: i + 1}
		for _, m := range codeSpan.FindAllStringSubmatch(cells[0], -1) {
			if !strings.HasSuffix(m[1], "/") {
				return nil, fmt.Errorf("line %d: room %q is not a directory (ends in /)", i+1, m[1])
			}
			r.rooms = append(r.rooms, strings.TrimSuffix(m[1], "/"))
		}
		if len(r.rooms) == 0 {
			return nil, fmt.Errorf("line %d: the room cell names no directory", i+1)
		}
		imports := strings.TrimSpace(cells[2])
		for _, m := range codeSpan.FindAllStringSubmatch(imports, -1) {
			if !strings.HasSuffix(m[1], "/") {
				return nil, fmt.Errorf("line %d: import %q is not a directory (ends in /)", i+1, m[1])
			}
			r.allowed = append(r.allowed, strings.TrimSuffix(m[1], "/"))
		}
		r.any = strings.Contains(imports, "any room")
		if len(r.allowed) == 0 && !r.any && imports != "nothing" {
			return nil, fmt.Errorf("line %d: the imports cell %q names no directory; write nothing or any room", i+1, imports)
		}
		rows = append(rows, r)
	}
	if len(rows) == 0 {
		return nil, errors.New("the table of rooms has no rows")
	}
	return rows, nil
}

// under reports whether the package path p is the directory prefix or
// below it.
func under(p, prefix string) bool {
	return p == prefix || strings.HasPrefix(p, prefix+"/")
}

// roomOf finds the row and room of a package: the longest room that holds
// it, so that a room may be carved out of a larger one.
func roomOf(rows []row, pkg string) (ri int, room string) {
	ri = -1
	for i, r := range rows {
		for _, rm := range r.rooms {
			if under(pkg, rm) && len(rm) > len(room) {
				ri, room = i, rm
			}
		}
	}
	return ri, room
}

// pkg is a package of the module with its imports, both relative to the
// module's path; imports outside the module are left out.
type pkg struct {
	path    string
	imports []string
}

// checkRooms returns every way the packages break the table: a package in
// no room, an import its row does not allow, a room that holds nothing.
func checkRooms(rows []row, pkgs []pkg) []string {
	var bad []string
	used := map[string]bool{}
	for _, p := range pkgs {
		ri, room := roomOf(rows, p.path)
		if ri < 0 {
			bad = append(bad, fmt.Sprintf("%s is in no room of the table: add a row or move it", p.path))
			continue
		}
		used[room] = true
		r := rows[ri]
		for _, imp := range p.imports {
			if ii, _ := roomOf(rows, imp); r.any || ii == ri ||
				slices.ContainsFunc(r.allowed, func(a string) bool { return under(imp, a) }) {
				continue
			}
			bad = append(bad, fmt.Sprintf("%s (room %s/, line %d) imports %s, which its imports column does not allow", p.path, room, r.line, imp))
		}
	}
	for _, r := range rows {
		for _, rm := range r.rooms {
			if !used[rm] {
				bad = append(bad, fmt.Sprintf("room %s/ (line %d) holds no package", rm, r.line))
			}
		}
	}
	return bad
}

// modulePackages lists the module's packages with `go list -json ./...`,
// once: the imports of their non-test files under the default build tags,
// the dependencies the map is about (tests may reach further for fixtures).
func modulePackages(t *testing.T) []pkg {
	t.Helper()
	if _, err := exec.LookPath("go"); err != nil {
		t.Skipf("no go command to list the packages: %v", err)
	}
	cmd := exec.Command("go", "list", "-json", "./...")
	cmd.Dir = ".."
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list -json ./...: %v\n%s", err, stderr.Bytes())
	}
	var pkgs []pkg
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var lp struct {
			ImportPath string
			Imports    []string
			Module     *struct{ Path string }
		}
		if err := dec.Decode(&lp); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatalf("go list -json ./...: decoding: %v", err)
		}
		if lp.Module == nil {
			t.Fatalf("go list: %s is in no module", lp.ImportPath)
		}
		mod := lp.Module.Path
		p := pkg{path: strings.TrimPrefix(strings.TrimPrefix(lp.ImportPath, mod), "/")}
		for _, imp := range lp.Imports {
			if under(imp, mod) {
				p.imports = append(p.imports, strings.TrimPrefix(strings.TrimPrefix(imp, mod), "/"))
			}
		}
		pkgs = append(pkgs, p)
	}
	return pkgs
}

// Every package of the module is in a room of architecture.md's table and
// imports only what its row's imports column allows.
func TestArchitectureImportsAreTheTables(t *testing.T) {
	b, err := os.ReadFile("architecture.md")
	if err != nil {
		t.Fatal(err)
	}
	rows, err := parseRooms(string(b))
	if err != nil {
		t.Fatalf("architecture.md: %v", err)
	}
	pkgs := modulePackages(t)
	if len(pkgs) < 20 {
		t.Fatalf("go list found only %d packages", len(pkgs))
	}
	for _, msg := range checkRooms(rows, pkgs) {
		t.Error("architecture.md: " + msg)
	}
}

// The rule itself, on a small table: it must be able to fail.
func TestArchitectureRule(t *testing.T) {
	const table = "intro\n\n| room | holds | imports |\n| --- | --- | --- |\n" +
		"| `cmd/` | the CLI | any room |\n" +
		"| `node/` | collection | `sensors/`, `configs/keypath/` (errors only) |\n" +
		"| `sensors/` | sources | `point/` |\n" +
		"| `sensors/gpu/` | a room carved out | `point/`, `vendor/` |\n" +
		"| `configs/` | the loader | `point/` |\n" +
		"| `point/`, `rundir/` | the data model | nothing |\n" +
		"| `vendor/` | | nothing |\n\nafter\n"
	rows, err := parseRooms(table)
	if err != nil {
		t.Fatal(err)
	}
	base := []pkg{
		{path: "cmd/x", imports: []string{"node", "rundir", "vendor/v"}},
		{path: "node", imports: []string{"sensors/hwmon", "configs/keypath"}},
		{path: "sensors/hwmon", imports: []string{"point", "sensors/sysfs"}},
		{path: "sensors/sysfs"},
		{path: "sensors/gpu/nvml", imports: []string{"vendor/v"}},
		{path: "configs", imports: []string{"configs/keypath"}},
		{path: "configs/keypath"},
		{path: "point"},
		{path: "rundir", imports: []string{"point"}},
		{path: "vendor/v"},
	}
	with := func(extra ...pkg) []pkg { return append(slices.Clone(base), extra...) }
	for _, tc := range []struct {
		name string
		pkgs []pkg
		want []string // substrings, one per violation
	}{
		{"all allowed", base, nil},
		{"a room imports one its row does not name", with(pkg{path: "sensors/bad", imports: []string{"configs"}}),
			[]string{"sensors/bad (room sensors/, line 7) imports configs"}},
		{"a named package does not open its whole room", with(pkg{path: "node/x", imports: []string{"configs"}}),
			[]string{"node/x (room node/, line 6) imports configs"}},
		{"the data model imports nothing above it", with(pkg{path: "point/schema", imports: []string{"sensors/hwmon"}}),
			[]string{"point/schema (room point/, line 10) imports sensors/hwmon"}},
		{"a carved-out room keeps its own row", with(pkg{path: "sensors/hw2", imports: []string{"vendor/v"}}),
			[]string{"sensors/hw2 (room sensors/, line 7) imports vendor/v"}},
		{"a new package in no room", with(pkg{path: "tools/x"}), []string{"tools/x is in no room"}},
		{"a stale room", base[1:], []string{"room cmd/ (line 5) holds no package"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := checkRooms(rows, tc.pkgs)
			if len(got) != len(tc.want) {
				t.Fatalf("violations %q, want %d like %q", got, len(tc.want), tc.want)
			}
			for i, w := range tc.want {
				if !strings.Contains(got[i], w) {
					t.Errorf("violation %q, want it to say %q", got[i], w)
				}
			}
		})
	}

	for _, bad := range []string{
		"| room | holds | imports |\n| - | - | - |\n| `a/` | x | |\n",
		"| room | holds | imports |\n| - | - | - |\n| a | x | nothing |\n",
		"| room | holds | imports |\n| - | - | - |\n| `a/` | x | `b` |\n",
		"no table\n",
	} {
		if _, err := parseRooms(bad); err == nil {
			t.Errorf("parseRooms(%q) accepted it", bad)
		}
	}
}
