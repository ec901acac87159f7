package tune

import (
	"compress/gzip"
	"context"
	"encoding/csv"
	"fmt"
	"io"
	"math"
	"os"
	"sort"
	"strconv"
	"strings"
)

// Table is a set of measured evaluations: per task, the objective of each
// configuration measured. A brute-forced table is a task's ground truth;
// replaying it evaluates a configuration without running it.
type Table struct {
	space *Space
	tasks map[string]Task
	obj   map[string]map[string]float64 // task key -> config key -> objective
}

// LoadTable reads a CSV with a header naming every parameter and task
// feature of the space and the objective column; other columns are ignored.
// Lines starting with '#' are comments (how and where the table was
// measured), and a path ending in .gz is read through gzip.
func LoadTable(path string, s *Space, objective string) (*Table, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("read table: %w", err)
	}
	defer f.Close()
	var in io.Reader = f
	if strings.HasSuffix(path, ".gz") {
		z, err := gzip.NewReader(f)
		if err != nil {
			return nil, fmt.Errorf("read table %s: %w", path, err)
		}
		defer z.Close()
		in = z
	}
	r := csv.NewReader(in)
	r.Comment = '#'
	head, err := r.Read()
	if err != nil {
		return nil, fmt.Errorf("%s: header: %w", path, err)
	}
	col := map[string]int{}
	for i, h := range head {
		col[h] = i
	}
	need := []string{objective}
	for _, p := range s.Params {
		need = append(need, p.Name)
	}
	for _, f := range s.Task {
		need = append(need, f.Name)
	}
	for _, n := range need {
		if _, ok := col[n]; !ok {
			return nil, fmt.Errorf("%s: no column %q in the header", path, n)
		}
	}
	t := &Table{space: s, tasks: map[string]Task{}, obj: map[string]map[string]float64{}}
	for {
		rec, err := r.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		line, _ := r.FieldPos(0) // the file's line, comments counted
		vals := map[string]string{}
		for _, p := range s.Params {
			vals[p.Name] = rec[col[p.Name]]
		}
		c, err := s.Parse(vals)
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %w", path, line, err)
		}
		task := Task{}
		for _, f := range s.Task {
			if task[f.Name], err = strconv.ParseFloat(rec[col[f.Name]], 64); err != nil {
				return nil, fmt.Errorf("%s:%d: task feature %s: %w", path, line, f.Name, err)
			}
		}
		y, err := strconv.ParseFloat(rec[col[objective]], 64)
		if err != nil || math.IsNaN(y) {
			return nil, fmt.Errorf("%s:%d: objective %s: %q is not a number", path, line, objective, rec[col[objective]])
		}
		t.Add(task, c, y)
	}
	return t, nil
}

// NewTable returns an empty table for a space.
func NewTable(s *Space) *Table {
	return &Table{space: s, tasks: map[string]Task{}, obj: map[string]map[string]float64{}}
}

// Add records a configuration's objective for a task.
func (t *Table) Add(task Task, c Config, y float64) {
	k := t.taskKey(task)
	if t.obj[k] == nil {
		t.obj[k] = map[string]float64{}
		t.tasks[k] = task
	}
	t.obj[k][c.Key()] = y
}

func (t *Table) taskKey(task Task) string {
	var k string
	for _, f := range t.space.Task {
		k += strconv.FormatFloat(task[f.Name], 'g', -1, 64) + ";"
	}
	return k
}

// Evaluate replays the table: the configuration's measured objective.
func (t *Table) Evaluate(_ context.Context, task Task, c Config) (Result, error) {
	y, ok := t.obj[t.taskKey(task)][c.Key()]
	if !ok {
		return Result{}, fmt.Errorf("replay: %v not measured for task %v", t.space.Values(c), task)
	}
	return Result{Objective: y}, nil
}

// Ranked returns a task's objectives, best first.
func (t *Table) Ranked(task Task, maximize bool) []float64 {
	var ys []float64
	for _, y := range t.obj[t.taskKey(task)] {
		ys = append(ys, y)
	}
	sort.Float64s(ys)
	if maximize {
		sort.Sort(sort.Reverse(sort.Float64Slice(ys)))
	}
	return ys
}

// Sample returns n observations of a task drawn at random without
// replacement (a random search replayed), seeded.
func (t *Table) Sample(task Task, n int, seed uint64) []Observation {
	m := t.obj[t.taskKey(task)]
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	r := rng(seed)
	r.Shuffle(len(keys), func(i, j int) { keys[i], keys[j] = keys[j], keys[i] })
	if n > len(keys) {
		n = len(keys)
	}
	obs := make([]Observation, n)
	for i, k := range keys[:n] {
		obs[i] = Observation{Task: task, Config: parseKey(k), Objective: m[k]}
	}
	return obs
}

func parseKey(k string) Config {
	var c Config
	n := 0
	for i := 0; i <= len(k); i++ {
		if i == len(k) || k[i] == ',' {
			c = append(c, n)
			n = 0
			continue
		}
		n = n*10 + int(k[i]-'0')
	}
	return c
}
