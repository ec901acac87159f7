package tune

import (
	"fmt"
	"math"
	"os"
	"sort"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// Kind is how a parameter's values are modelled.
type Kind string

// The kinds of parameter a space may hold.
const (
	// Int is an integer range min..max by step.
	Int Kind = "int"
	// Ordinal is an ordered list of numbers (tile sizes 4, 8, 16...).
	Ordinal Kind = "ordinal"
	// Categorical is an unordered list of names.
	Categorical Kind = "categorical"
	// Bool is false or true.
	Bool Kind = "bool"
)

// Param is one tunable parameter. Its values are Levels: a configuration
// holds a level index per parameter.
type Param struct {
	Name    string
	Kind    Kind
	Levels  []string  // the values as the target takes them
	Numbers []float64 // the numeric values of Int, Ordinal and Bool levels (1 for true)
	Default int       // level index of the untuned default
}

// TaskFeature is one feature of the task being tuned (an input scale). Min
// and Max are the range of tasks the space is meant for (a task outside it
// is an error); NaN where not given. They do not shape the copula: its
// marginal for a task feature is fitted on the sources alone.
type TaskFeature struct {
	Name     string
	Min, Max float64
}

// Constraint is a condition every evaluated configuration satisfies.
type Constraint struct {
	Text string
	Line int
	e    expr
}

// Space is a tuning space.
type Space struct {
	Name        string
	File        string
	Params      []Param
	Task        []TaskFeature
	Constraints []Constraint
	// Set are fixed workload parameters, with {name} placeholders for task
	// features and parameters ("corpus: zipf:tokens={tokens}"): how a task
	// reaches a workload whose input is not a number.
	Set map[string]string
}

// Config is a configuration: one level index per parameter of its space, in
// the space's order.
type Config []int

// Key is a configuration's identity, for duplicate checks.
func (c Config) Key() string {
	var b strings.Builder
	for i, l := range c {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.Itoa(l))
	}
	return b.String()
}

// Task is a task's feature values by name.
type Task map[string]float64

// LoadSpace reads a tuning space from a YAML file.
func LoadSpace(path string) (*Space, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read tuning space: %w", err)
	}
	return ParseSpace(path, b)
}

// ParseSpace parses a tuning space; name is the file name errors carry.
// Every error names the file and line and what was wrong.
func ParseSpace(name string, b []byte) (*Space, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(b, &doc); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if len(doc.Content) == 0 {
		return nil, fmt.Errorf("%s: empty tuning space", name)
	}
	root := doc.Content[0]
	s := &Space{File: name}
	errAt := func(n *yaml.Node, format string, a ...any) error {
		return fmt.Errorf("%s:%d: %s", name, n.Line, fmt.Sprintf(format, a...))
	}
	if root.Kind != yaml.MappingNode {
		return nil, errAt(root, "a tuning space is a mapping with name, task, params and constraints")
	}
	seen := map[string]bool{}
	for i := 0; i+1 < len(root.Content); i += 2 {
		k, v := root.Content[i], root.Content[i+1]
		if seen[k.Value] {
			return nil, errAt(k, "%s given twice", k.Value)
		}
		seen[k.Value] = true
		var err error
		switch k.Value {
		case "name":
			s.Name = v.Value
		case "task":
			err = s.parseTask(v, errAt)
		case "params":
			err = s.parseParams(v, errAt)
		case "constraints":
			err = s.parseConstraints(v, errAt)
		case "set":
			err = eachKey(v, errAt, "set", func(k, val *yaml.Node) error {
				if val.Kind != yaml.ScalarNode {
					return errAt(val, "set %s: want a value", k.Value)
				}
				if s.Set == nil {
					s.Set = map[string]string{}
				}
				s.Set[k.Value] = val.Value
				return nil
			})
		default:
			err = errAt(k, "unknown key %q (want name, task, params, constraints, set)", k.Value)
		}
		if err != nil {
			return nil, err
		}
	}
	if len(s.Params) == 0 {
		return nil, errAt(root, "no params: a tuning space needs at least one parameter")
	}
	return s, s.checkNames(errAt, root)
}

type errAtFunc func(n *yaml.Node, format string, a ...any) error

func (s *Space) parseTask(v *yaml.Node, errAt errAtFunc) error {
	if v.Kind != yaml.SequenceNode {
		return errAt(v, "task is a list of features ({name, min, max})")
	}
	for _, item := range v.Content {
		f := TaskFeature{Min: math.NaN(), Max: math.NaN()}
		err := eachKey(item, errAt, "task feature", func(k, val *yaml.Node) error {
			var err error
			switch k.Value {
			case "name":
				f.Name = val.Value
			case "min":
				f.Min, err = number(val, errAt, "task feature min")
			case "max":
				f.Max, err = number(val, errAt, "task feature max")
			default:
				err = errAt(k, "unknown task feature key %q (want name, min, max)", k.Value)
			}
			return err
		})
		if err != nil {
			return err
		}
		if f.Name == "" {
			return errAt(item, "task feature without a name")
		}
		if f.Min >= f.Max {
			return errAt(item, "task feature %s: min %g is not below max %g", f.Name, f.Min, f.Max)
		}
		s.Task = append(s.Task, f)
	}
	return nil
}

func (s *Space) parseParams(v *yaml.Node, errAt errAtFunc) error {
	if v.Kind != yaml.SequenceNode {
		return errAt(v, "params is a list of parameters ({name, type, ...})")
	}
	for _, item := range v.Content {
		p, err := parseParam(item, errAt)
		if err != nil {
			return err
		}
		s.Params = append(s.Params, p)
	}
	return nil
}

func parseParam(item *yaml.Node, errAt errAtFunc) (Param, error) {
	var p Param
	var values, def *yaml.Node
	min, max, step := math.NaN(), math.NaN(), 1.0
	err := eachKey(item, errAt, "parameter", func(k, val *yaml.Node) error {
		var err error
		switch k.Value {
		case "name":
			p.Name = val.Value
		case "type":
			p.Kind = Kind(val.Value)
		case "values":
			values = val
		case "default":
			def = val
		case "min":
			min, err = number(val, errAt, "min")
		case "max":
			max, err = number(val, errAt, "max")
		case "step":
			step, err = number(val, errAt, "step")
		default:
			err = errAt(k, "unknown parameter key %q (want name, type, values, min, max, step, default)", k.Value)
		}
		return err
	})
	if err != nil {
		return p, err
	}
	if p.Name == "" {
		return p, errAt(item, "parameter without a name")
	}
	switch p.Kind {
	case Int:
		if math.IsNaN(min) || math.IsNaN(max) || min > max || step <= 0 || min != math.Trunc(min) || step != math.Trunc(step) {
			return p, errAt(item, "int parameter %s needs integer min <= max and step > 0", p.Name)
		}
		if math.Abs(min) > 1<<53 || math.Abs(max) > 1<<53 {
			return p, errAt(item, "int parameter %s: bounds beyond ±2^53 are not exact integers", p.Name)
		}
		if (max-min)/step > 1e6 {
			return p, errAt(item, "int parameter %s has over a million values", p.Name)
		}
		for i := 0; min+float64(i)*step <= max; i++ {
			x := min + float64(i)*step
			p.Levels = append(p.Levels, strconv.FormatFloat(x, 'f', -1, 64))
			p.Numbers = append(p.Numbers, x)
		}
	case Ordinal, Categorical:
		if values == nil || values.Kind != yaml.SequenceNode || len(values.Content) == 0 {
			return p, errAt(item, "%s parameter %s needs a non-empty values list", p.Kind, p.Name)
		}
		seen := map[string]bool{}
		for _, n := range values.Content {
			if seen[n.Value] {
				return p, errAt(n, "parameter %s: value %q listed twice", p.Name, n.Value)
			}
			seen[n.Value] = true
			p.Levels = append(p.Levels, n.Value)
			if p.Kind == Ordinal {
				x, err := number(n, errAt, "ordinal value of "+p.Name)
				if err != nil {
					return p, err
				}
				if len(p.Numbers) > 0 && x <= p.Numbers[len(p.Numbers)-1] {
					return p, errAt(n, "ordinal parameter %s: values must increase (%g after %g)", p.Name, x, p.Numbers[len(p.Numbers)-1])
				}
				p.Numbers = append(p.Numbers, x)
			}
		}
	case Bool:
		p.Levels, p.Numbers = []string{"false", "true"}, []float64{0, 1}
	case "":
		return p, errAt(item, "parameter %s has no type (int, ordinal, categorical, bool)", p.Name)
	default:
		return p, errAt(item, "parameter %s: unknown type %q (want int, ordinal, categorical, bool)", p.Name, p.Kind)
	}
	if def != nil {
		p.Default = -1
		for i, l := range p.Levels {
			if l == def.Value {
				p.Default = i
			}
		}
		if p.Default < 0 {
			return p, errAt(def, "parameter %s: default %q is not one of its values", p.Name, def.Value)
		}
	}
	return p, nil
}

func (s *Space) parseConstraints(v *yaml.Node, errAt errAtFunc) error {
	if v.Kind != yaml.SequenceNode {
		return errAt(v, "constraints is a list of expressions such as \"tj >= ti\"")
	}
	for _, n := range v.Content {
		if n.Kind != yaml.ScalarNode {
			return errAt(n, "a constraint is one expression string")
		}
		e, err := parseExpr(n.Value)
		if err != nil {
			return errAt(n, "constraint %q: %v", n.Value, err)
		}
		s.Constraints = append(s.Constraints, Constraint{Text: n.Value, Line: n.Line, e: e})
	}
	return nil
}

// checkNames rejects duplicate names and constraints over unknown names.
func (s *Space) checkNames(errAt errAtFunc, root *yaml.Node) error {
	known := map[string]bool{}
	for _, p := range s.Params {
		if known[p.Name] {
			return errAt(root, "name %q used twice", p.Name)
		}
		known[p.Name] = true
	}
	for _, f := range s.Task {
		if known[f.Name] {
			return errAt(root, "name %q used twice", f.Name)
		}
		known[f.Name] = true
	}
	for _, c := range s.Constraints {
		used := map[string]bool{}
		names(c.e, used)
		for n := range used {
			if !known[n] {
				return fmt.Errorf("%s:%d: constraint %q: unknown name %q", s.File, c.Line, c.Text, n)
			}
		}
	}
	return nil
}

func eachKey(n *yaml.Node, errAt errAtFunc, what string, f func(k, v *yaml.Node) error) error {
	if n.Kind != yaml.MappingNode {
		return errAt(n, "a %s is a mapping", what)
	}
	seen := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if seen[n.Content[i].Value] {
			return errAt(n.Content[i], "%s: %s given twice", what, n.Content[i].Value)
		}
		seen[n.Content[i].Value] = true
		if err := f(n.Content[i], n.Content[i+1]); err != nil {
			return err
		}
	}
	return nil
}

func number(n *yaml.Node, errAt errAtFunc, what string) (float64, error) {
	x, err := strconv.ParseFloat(n.Value, 64)
	if n.Kind != yaml.ScalarNode || err != nil || math.IsNaN(x) || math.IsInf(x, 0) {
		return 0, errAt(n, "%s: %q is not a number", what, n.Value)
	}
	return x, nil
}

// Param returns the index of the named parameter, or -1.
func (s *Space) Param(name string) int {
	for i, p := range s.Params {
		if p.Name == name {
			return i
		}
	}
	return -1
}

// Default is the untuned default configuration.
func (s *Space) Default() Config {
	c := make(Config, len(s.Params))
	for i, p := range s.Params {
		c[i] = p.Default
	}
	return c
}

// Values renders a configuration as parameter name to value.
func (s *Space) Values(c Config) map[string]string {
	m := make(map[string]string, len(c))
	for i, l := range c {
		m[s.Params[i].Name] = s.Params[i].Levels[l]
	}
	return m
}

// Parse reads a configuration from parameter values by name.
func (s *Space) Parse(values map[string]string) (Config, error) {
	c := make(Config, len(s.Params))
	for i, p := range s.Params {
		v, ok := values[p.Name]
		if !ok {
			return nil, fmt.Errorf("configuration has no value for %s", p.Name)
		}
		c[i] = -1
		for l, lv := range p.Levels {
			if lv == v || (p.Numbers != nil && numEqual(v, p.Numbers[l])) {
				c[i] = l
			}
		}
		if c[i] < 0 {
			return nil, fmt.Errorf("parameter %s: %q is not one of its values", p.Name, v)
		}
	}
	return c, nil
}

func numEqual(s string, x float64) bool {
	switch s {
	case "true":
		return x == 1
	case "false":
		return x == 0
	}
	f, err := strconv.ParseFloat(s, 64)
	return err == nil && f == x
}

// Feasible says whether a configuration, for a task, satisfies every
// constraint; when not, the error says which.
func (s *Space) Feasible(c Config, t Task) error {
	if len(s.Constraints) == 0 {
		return nil
	}
	env := make(map[string]value, len(c)+len(t))
	for i, l := range c {
		p := s.Params[i]
		if p.Kind == Categorical {
			env[p.Name] = value{str: p.Levels[l], isStr: true}
		} else {
			env[p.Name] = value{num: p.Numbers[l]}
		}
	}
	for k, v := range t {
		env[k] = value{num: v}
	}
	for _, con := range s.Constraints {
		v, err := con.e.eval(env)
		if err != nil {
			return fmt.Errorf("constraint %q (%s:%d): %w", con.Text, s.File, con.Line, err)
		}
		if v.isStr || v.num == 0 {
			return fmt.Errorf("violates %q", con.Text)
		}
	}
	return nil
}

// Size is the number of configurations of the space, ignoring constraints.
func (s *Space) Size() float64 {
	n := 1.0
	for _, p := range s.Params {
		n *= float64(len(p.Levels))
	}
	return n
}

// Enumerate calls f with every feasible configuration for a task, in order,
// until f returns false. It is for spaces small enough to walk (a few
// million configurations).
func (s *Space) Enumerate(t Task, f func(Config) bool) {
	c := make(Config, len(s.Params))
	for {
		if s.Feasible(c, t) == nil && !f(append(Config(nil), c...)) {
			return
		}
		i := len(c) - 1
		for ; i >= 0; i-- {
			c[i]++
			if c[i] < len(s.Params[i].Levels) {
				break
			}
			c[i] = 0
		}
		if i < 0 {
			return
		}
	}
}

// Describe is a one-line summary of the space.
func (s *Space) Describe() string {
	var parts []string
	for _, p := range s.Params {
		parts = append(parts, fmt.Sprintf("%s(%s,%d)", p.Name, p.Kind, len(p.Levels)))
	}
	var task []string
	for _, f := range s.Task {
		task = append(task, f.Name)
	}
	sort.Strings(task)
	return fmt.Sprintf("%s: %s; task %s; %d constraints; %.0f configurations",
		s.Name, strings.Join(parts, " "), strings.Join(task, ","), len(s.Constraints), s.Size())
}
