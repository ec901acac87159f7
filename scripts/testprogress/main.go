// Command testprogress turns `go test -json` into a log a person can follow
// while the suite runs: a line per package as it finishes (ok or FAIL with
// its time, as go test prints them), every minute the packages still
// running and for how long, the whole output of each failing test (and of a
// package that failed outside its tests: a build error, a panic, a
// timeout) right under its FAIL line, and at the end the failed packages
// again and one "tests: N passed, N failed, N skipped" line. It exits 1 when
// anything failed, so a pipeline with pipefail keeps go test's verdict
// either way.
//
//	go test -json ./... 2>&1 | go run ./scripts/testprogress
//
// A line that is not a JSON event (go vet's or the linker's complaints on
// stderr) is printed as it comes.
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"
)

// event is one line of go test -json (cmd/test2json's TestEvent).
type event struct {
	Action     string
	Package    string
	ImportPath string // build-output and build-fail events
	Test       string
	Elapsed    float64
	Output     string
}

// pkg is what is kept of a package until it finishes.
type pkg struct {
	start   time.Time
	output  []string            // the package's own lines (Test == "")
	tests   map[string][]string // each test's lines, until it passes
	failed  []string            // failed tests, in order
	running []string            // tests started and not yet ended
}

type progress struct {
	out                     io.Writer
	pkgs                    map[string]*pkg
	builds                  map[string][]string // build output by import path
	passed, failed, skipped int
	failedPkgs              []string
	now                     func() time.Time
}

func main() {
	os.Exit(run(os.Stdin, os.Stdout, time.Minute))
}

// run reads go test -json from in, writes the log to out, says which
// packages are still running every interval, and returns the exit status.
func run(in io.Reader, out io.Writer, every time.Duration) int {
	p := &progress{out: out, pkgs: map[string]*pkg{}, builds: map[string][]string{}, now: time.Now}
	lines := make(chan string)
	go func() {
		sc := bufio.NewScanner(in)
		sc.Buffer(make([]byte, 1<<20), 16<<20)
		for sc.Scan() {
			lines <- sc.Text()
		}
		if err := sc.Err(); err != nil {
			fmt.Fprintln(os.Stderr, "testprogress: read go test's output:", err)
		}
		close(lines)
	}()
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		select {
		case l, ok := <-lines:
			if !ok {
				return p.summary()
			}
			p.line(l)
		case <-tick.C:
			p.stillRunning(every / 2)
		}
	}
}

func (p *progress) line(l string) {
	var e event
	if !strings.HasPrefix(l, "{") || json.Unmarshal([]byte(l), &e) != nil {
		fmt.Fprintln(p.out, l)
		return
	}
	switch e.Action {
	case "build-output":
		p.builds[e.ImportPath] = append(p.builds[e.ImportPath], e.Output)
		return
	case "build-fail":
		return // the package's own fail event follows
	}
	k := p.pkgs[e.Package]
	if k == nil {
		k = &pkg{start: p.now(), tests: map[string][]string{}}
		p.pkgs[e.Package] = k
	}
	if e.Test == "" {
		p.packageEvent(e, k)
		return
	}
	switch e.Action {
	case "run":
		k.running = append(k.running, e.Test)
	case "output":
		k.tests[e.Test] = append(k.tests[e.Test], e.Output)
	case "pass", "skip":
		if e.Action == "pass" {
			p.passed++
		} else {
			p.skipped++
		}
		k.running = slices.DeleteFunc(k.running, func(t string) bool { return t == e.Test })
		delete(k.tests, e.Test)
	case "fail":
		p.failed++
		k.running = slices.DeleteFunc(k.running, func(t string) bool { return t == e.Test })
		k.failed = append(k.failed, e.Test)
	}
}

// packageEvent handles a package's own event: its output, or its end.
func (p *progress) packageEvent(e event, k *pkg) {
	switch e.Action {
	case "output":
		k.output = append(k.output, e.Output)
	case "pass":
		fmt.Fprintf(p.out, "ok  \t%s\t%.3fs\n", e.Package, e.Elapsed)
		delete(p.pkgs, e.Package)
	case "skip":
		fmt.Fprintf(p.out, "?   \t%s\t[no test files]\n", e.Package)
		delete(p.pkgs, e.Package)
	case "fail":
		p.failedPkgs = append(p.failedPkgs, e.Package)
		fmt.Fprintf(p.out, "FAIL\t%s\t%.3fs\n", e.Package, e.Elapsed)
		p.failure(e.Package, k)
		delete(p.pkgs, e.Package)
	}
}

// failure prints, indented under the FAIL line, what go test without -json
// would have: the build's errors, each failed test's output, the output of
// tests still running when the package died (a panic or a timeout is
// theirs), and the package's own lines.
func (p *progress) failure(name string, k *pkg) {
	var b strings.Builder
	for _, l := range p.builds[name] {
		b.WriteString(l)
	}
	for _, t := range append(k.failed, k.running...) {
		for _, l := range k.tests[t] {
			b.WriteString(l)
		}
	}
	for _, l := range k.output {
		b.WriteString(l)
	}
	for _, l := range strings.SplitAfter(b.String(), "\n") {
		// -json runs tests verbosely; go test alone would not print the
		// === RUN, PAUSE and CONT lines.
		if l != "" && !strings.HasPrefix(l, "=== ") {
			fmt.Fprint(p.out, "    | ", l)
		}
	}
	if !strings.HasSuffix(b.String(), "\n") && b.Len() > 0 {
		fmt.Fprintln(p.out)
	}
}

// stillRunning says which packages have been running for a while, so a
// long one (cmd/heatsink: minutes) is not taken for a hung suite.
func (p *progress) stillRunning(after time.Duration) {
	var names []string
	for n, k := range p.pkgs {
		if d := p.now().Sub(k.start); d >= after {
			names = append(names, fmt.Sprintf("%s (%s)", n, d.Round(time.Second)))
		}
	}
	if len(names) > 0 {
		slices.Sort(names)
		fmt.Fprintf(p.out, "... running: %s\n", strings.Join(names, ", "))
	}
}

// summary prints the verdict and returns the exit status.
func (p *progress) summary() int {
	for n, k := range p.pkgs { // no end event: go test was killed
		p.failedPkgs = append(p.failedPkgs, n)
		fmt.Fprintf(p.out, "FAIL\t%s\t(no result: go test ended before it)\n", n)
		p.failure(n, k)
	}
	if len(p.failedPkgs) > 0 {
		fmt.Fprintf(p.out, "FAILED packages: %s\n", strings.Join(p.failedPkgs, " "))
	}
	fmt.Fprintf(p.out, "tests: %d passed, %d failed, %d skipped\n", p.passed, p.failed, p.skipped)
	if len(p.failedPkgs) > 0 || p.failed > 0 {
		return 1
	}
	return 0
}
