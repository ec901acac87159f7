package schema

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/heatsink-hpc/heatsink/docs"
)

// docRow is one row of docs/data-model.md's measurement table.
type docRow struct {
	line               int
	name               string
	tags, fields, kind []string
}

var (
	// A name in backticks; one followed by " gives" names a workload that
	// introduces its metrics, not a field.
	backticked    = regexp.MustCompile("`([a-z][a-z0-9_]*)`( gives)?")
	parenthesised = regexp.MustCompile(`\([^()]*\)`)
	kindValues    = regexp.MustCompile("`kind` \\(([^()]*(\\([^()]*\\))?[^()]*)\\)")
)

// parseTable reads the rows | `measurement` (note) | tags | fields |. Notes
// in parentheses are dropped so that example values (`package-0`) and
// config keys are not taken for names.
func parseTable(md string) ([]docRow, error) {
	var rows []docRow
	for i, line := range strings.Split(md, "\n") {
		cells := strings.Split(line, "|")
		if len(cells) != 5 || !strings.HasPrefix(strings.TrimSpace(cells[1]), "`") {
			continue
		}
		m := backticked.FindStringSubmatch(cells[1])
		if m == nil {
			return nil, fmt.Errorf("data-model.md:%d: no measurement name in %q", i+1, strings.TrimSpace(cells[1]))
		}
		r := docRow{line: i + 1, name: m[1], tags: names(cells[2]), fields: names(cells[3])}
		if k := kindValues.FindStringSubmatch(cells[2]); k != nil {
			r.kind = names(strings.ReplaceAll(strings.ReplaceAll(k[1], "(", ""), ")", ""))
		}
		rows = append(rows, r)
	}
	if len(rows) == 0 {
		return nil, fmt.Errorf("data-model.md: no measurement table (rows of the form | `name` | tags | fields |)")
	}
	return rows, nil
}

func names(cell string) []string {
	for {
		c := parenthesised.ReplaceAllString(cell, "")
		if c == cell {
			break
		}
		cell = c
	}
	var out []string
	for _, m := range backticked.FindAllStringSubmatch(cell, -1) {
		if m[2] == "" && !slices.Contains(out, m[1]) {
			out = append(out, m[1])
		}
	}
	return out
}

// diff says what one list has that the other lacks.
func diff(what string, doc, code []string) []string {
	var out []string
	for _, n := range doc {
		if !slices.Contains(code, n) {
			out = append(out, fmt.Sprintf("%s %q is in the document but not in the Go table", what, n))
		}
	}
	for _, n := range code {
		if !slices.Contains(doc, n) {
			out = append(out, fmt.Sprintf("%s %q is in the Go table but not in the document", what, n))
		}
	}
	return out
}

func TestDocumentAndConstantsAgree(t *testing.T) {
	rows, err := parseTable(docs.DataModel)
	if err != nil {
		t.Fatalf("docs/data-model.md has changed shape: %v", err)
	}
	code := table()
	var docNames, codeNames []string
	for _, r := range rows {
		docNames = append(docNames, r.name)
	}
	for _, m := range code {
		codeNames = append(codeNames, m.Name)
	}
	for _, d := range diff("measurement", docNames, codeNames) {
		t.Error(d + " (point/schema/names.go)")
	}
	for _, r := range rows {
		m, ok := Lookup(r.name)
		if !ok {
			continue
		}
		for _, d := range append(diff("tag", r.tags, m.Tags), diff("field", r.fields, m.Fields)...) {
			t.Errorf("data-model.md:%d: %s: %s (point/schema/names.go)", r.line, r.name, d)
		}
		if r.name == Event {
			for _, d := range diff("event kind", r.kind, EventKinds()) {
				t.Errorf("data-model.md:%d: %s (point/schema/event.go)", r.line, d)
			}
		}
	}
}

// TestEveryConstantNamesSomethingInTheTable catches a constant left behind
// when the document drops a name: the table test cannot, since a constant
// need not be in the table.
func TestEveryConstantNamesSomethingInTheTable(t *testing.T) {
	tags, fields := map[string]bool{TagHost: true, TagJob: true, TagJobs: true}, map[string]bool{}
	for _, m := range table() {
		for _, n := range m.Tags {
			tags[n] = true
		}
		for _, n := range m.Fields {
			fields[n] = true
		}
	}
	f, err := parser.ParseFile(token.NewFileSet(), "names.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.CONST {
			continue
		}
		for _, s := range g.Specs {
			vs := s.(*ast.ValueSpec)
			for i, id := range vs.Names {
				v, err := strconv.Unquote(vs.Values[i].(*ast.BasicLit).Value)
				if err != nil {
					t.Fatalf("%s: %v", id.Name, err)
				}
				n++
				switch {
				case strings.HasPrefix(id.Name, "Tag") && !tags[v]:
					t.Errorf("%s = %q is no measurement's tag", id.Name, v)
				case strings.HasPrefix(id.Name, "Field") && !fields[v]:
					t.Errorf("%s = %q is no measurement's field", id.Name, v)
				case !strings.HasPrefix(id.Name, "Tag") && !strings.HasPrefix(id.Name, "Field"):
					if _, ok := Lookup(v); !ok {
						t.Errorf("%s = %q is no measurement", id.Name, v)
					}
				}
			}
		}
	}
	if n < 100 {
		t.Fatalf("read only %d constants from names.go", n)
	}
}

func TestParseTableRefusesWhatIsNotATable(t *testing.T) {
	for _, md := range []string{"", "# nothing here\n", "| `gpu` | a |\n"} {
		if _, err := parseTable(md); err == nil {
			t.Errorf("parseTable(%q) = nil error", md)
		}
	}
}

// TestParseTableFindsDivergence checks the checker: a document that adds a
// field, drops a tag or names a workload must come out as such.
func TestParseTableFindsDivergence(t *testing.T) {
	md := "| `gpu` (NVML) | `gpu` (index), `uuid` | `temp_c`, `new_w` (e.g. `not_this`) |\n" +
		"| `iteration` | `run` | `n`; `stream` gives `triad_bytes_per_s` |\n" +
		"| `event` | `run`, `kind` (`phase_start`, `note`, and `job_start` (Slurm)) | `message` |\n"
	rows, err := parseTable(md)
	if err != nil {
		t.Fatal(err)
	}
	want := []docRow{
		{line: 1, name: "gpu", tags: []string{"gpu", "uuid"}, fields: []string{"temp_c", "new_w"}},
		{line: 2, name: "iteration", tags: []string{"run"}, fields: []string{"n", "triad_bytes_per_s"}},
		{line: 3, name: "event", tags: []string{"run", "kind"}, fields: []string{"message"}, kind: []string{"phase_start", "note", "job_start"}},
	}
	if fmt.Sprint(rows) != fmt.Sprint(want) {
		t.Fatalf("parsed\n%v\nwant\n%v", rows, want)
	}
	gpu, _ := Lookup(GPU)
	got := diff("field", rows[0].fields, gpu.Fields)
	if len(got) == 0 || !strings.Contains(got[0], `"new_w" is in the document but not in the Go table`) {
		t.Errorf("diff of a new field: %q", got)
	}
}
