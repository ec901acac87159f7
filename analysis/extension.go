package analysis

import (
	"cmp"
	"fmt"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"sync"
)

// An Extension is an analysis that adds itself to every report: a file in
// this package (or a package imported beside it) whose init function calls
// Register. Analyze runs it after the built-in analyses; its result goes
// under the report's JSON "analyses" object, keyed by Name, and Render
// says it in the human formats. Adding one touches no other file, as a
// source registers itself with the node (internal/probe); the analyses of
// earlier releases stay fields of Report so that its JSON schema is kept.
type Extension struct {
	// Name is the result's key under "analyses", snake_case with the unit
	// in it where it has one.
	Name string
	// Order places the extension among the others in a report; ties go by
	// name.
	Order int
	// Title heads its section of a human report.
	Title string
	// Definitions state how its quantities are computed; they join the
	// report's.
	Definitions []Definition
	// Analyze computes the result, or says in why, a phrase, why it could
	// not (the result is then ignored). It must not change in. A result
	// that is a pointer to a struct has its non-finite *float64 fields
	// dropped with the reason, as the built-in results do (DropNonFinite).
	Analyze func(in Input) (result any, why string)
	// Render says the result in words and a table. Optional: without it
	// the section lists the result's JSON fields.
	Render func(result any) Section
}

// Input is what an extension analyses: the run and what the built-in
// analyses found in it.
type Input struct {
	Run        *Run
	Options    Options
	Phases     Phases
	Components []ComponentResult
	// EndS is the last reading's time, seconds after the run's start.
	EndS float64
}

// Section is an extension's part of a human report: paragraphs, then a
// table (Head and Rows), then a list.
type Section struct {
	Paras []string
	Head  []string
	Rows  [][]string
	List  []string
}

// Extensions register from init functions and are only read afterwards;
// the lock is there for tests that register from several goroutines.
var (
	extMu      sync.RWMutex
	extensions = map[string]Extension{}
)

var extName = regexp.MustCompile(`^[a-z][a-z0-9_]*$`)

// Register adds an extension to every report. It panics on a name that is
// not snake_case, one already taken (by an extension or a field of
// Report), or a missing Analyze: each is a mistake in the code that the
// first test to import it finds.
func Register(e Extension) {
	if !extName.MatchString(e.Name) || e.Analyze == nil || e.Title == "" {
		panic(fmt.Sprintf("analysis: extension %q needs a snake_case name, a title and Analyze", e.Name))
	}
	if reportJSONNames()[e.Name] {
		panic("analysis: extension " + e.Name + " has the name of a field of Report")
	}
	extMu.Lock()
	defer extMu.Unlock()
	if _, dup := extensions[e.Name]; dup {
		panic("analysis: a second extension named " + e.Name)
	}
	extensions[e.Name] = e
}

// Extensions returns the registered extensions, by Order then name.
func Extensions() []Extension {
	extMu.RLock()
	defer extMu.RUnlock()
	out := make([]Extension, 0, len(extensions))
	for _, e := range extensions {
		out = append(out, e)
	}
	slices.SortFunc(out, func(a, b Extension) int {
		return cmp.Or(cmp.Compare(a.Order, b.Order), cmp.Compare(a.Name, b.Name))
	})
	return out
}

// reportJSONNames are the JSON keys of Report's own fields, which an
// extension's name must not shadow in NotComputed.
func reportJSONNames() map[string]bool {
	names := map[string]bool{}
	t := reflect.TypeFor[Report]()
	for i := range t.NumField() {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
		names[name] = true
	}
	return names
}

// extensions runs every registered extension over the run.
func (a *analyzer) extensions() {
	in := Input{Run: a.r, Options: a.o, Phases: a.ph, Components: a.rep.Components, EndS: a.endS}
	for _, e := range Extensions() {
		a.rep.Definitions = append(a.rep.Definitions, e.Definitions...)
		res, why := e.Analyze(in)
		if why != "" {
			a.rep.NotComputed[e.Name] = why
			continue
		}
		if a.rep.Analyses == nil {
			a.rep.Analyses = map[string]any{}
		}
		a.rep.Analyses[e.Name] = res
	}
}
