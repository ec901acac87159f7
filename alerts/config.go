package alerts

import (
	"fmt"
	"math"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/heatsink-hpc/heatsink/configs/secret"
	"github.com/heatsink-hpc/heatsink/point/schema"
	"github.com/heatsink-hpc/heatsink/registry/keypath"
)

// Config is the alerts: section of the configuration.
type Config struct {
	// Webhooks are named HTTP endpoints that rules notify with "webhook:NAME".
	Webhooks map[string]Webhook `yaml:"webhooks"`
	// Commands are named programs that rules run with "command:NAME".
	Commands map[string]Command `yaml:"commands"`
	// Rules are evaluated on every tick's points, in order.
	Rules []Rule `yaml:"rules"`
}

// Webhook is an HTTP endpoint that receives a JSON POST on every firing and
// clearing of the rules naming it.
type Webhook struct {
	// URL is a secret because Slack's webhook URLs are credentials.
	URL secret.Value `yaml:"url"`
	// Format of the body: generic (default), slack or alertmanager.
	Format string `yaml:"format"`
	// Timeout of one attempt; default 5s.
	Timeout time.Duration `yaml:"timeout"`
	// Retries after a failed attempt (network error, 5xx, 429); default 3.
	Retries *int `yaml:"retries"`
	// Backoff is the wait before the first retry, doubled each time; default 1s.
	Backoff time.Duration `yaml:"backoff"`
	// Repeat resends a firing alert this often while it fires; default 0
	// (never), 1m for alertmanager, which resolves alerts it stops hearing of.
	Repeat time.Duration `yaml:"repeat"`
	// Headers are sent with every request (Authorization...).
	Headers map[string]secret.Value `yaml:"headers"`
}

// Command is a program run on every firing and clearing of the rules naming
// it, with the alert in HEATSINK_ALERT_* environment variables.
type Command struct {
	Argv []string `yaml:"argv"`
	// Timeout after which the command's process group is killed; default 10s.
	Timeout time.Duration `yaml:"timeout"`
}

// Rule watches the series its selector picks and fires when its condition
// has held for For. Exactly one condition key is set.
type Rule struct {
	Name string `yaml:"name"`
	// Summary is a human sentence put in front of the alert's message.
	Summary string `yaml:"summary"`
	// Severity is info, warning (default) or critical.
	Severity string `yaml:"severity"`
	Selector `yaml:",inline"`

	Threshold *Threshold     `yaml:"threshold"`
	Rate      *Rate          `yaml:"rate"`
	Forecast  *Forecast      `yaml:"forecast"`
	Is        *bool          `yaml:"is"`
	Equals    *string        `yaml:"equals"`
	NotEquals *string        `yaml:"not_equals"`
	AnyBits   *uint64        `yaml:"any_bits"`
	Silent    *time.Duration `yaml:"silent"`
	BlindSpot *BlindSpot     `yaml:"blind_spot"`

	// For is how long the condition must hold before the rule fires.
	For time.Duration `yaml:"for"`
	// Actions beyond the record every firing and clearing gets (a log line,
	// an alert point, an event): webhook:NAME, command:NAME, pause, stop.
	// log and point may be listed; they are always done.
	Actions []string `yaml:"actions"`
}

// Selector picks series: a measurement, the field watched, and tag filters.
type Selector struct {
	Measurement string `yaml:"measurement"`
	Field       string `yaml:"field"`
	// Tags must match exactly.
	Tags map[string]string `yaml:"tags"`
	// TagsRegexp must match the whole tag value.
	TagsRegexp map[string]string `yaml:"tags_regexp"`
}

// Threshold compares the field with an expression.
type Threshold struct {
	Op    string `yaml:"op"`
	Value string `yaml:"value"`
	// Clear is the expression the field must pass back over to clear;
	// default Value moved by Margin.
	Clear string `yaml:"clear"`
	// Margin moves the clearing point away from Value, against Op.
	Margin float64 `yaml:"margin"`
}

// Rate compares the field's rate of change, from a least-squares fit over
// Window, in field units per minute.
type Rate struct {
	Op     string   `yaml:"op"`
	PerMin *float64 `yaml:"per_min"`
	// Margin (per minute) the rate must pass back over to clear.
	Margin float64       `yaml:"margin"`
	Window time.Duration `yaml:"window"`
}

// Forecast fires when a straight line fitted over Window reaches Value
// within Within from now.
type Forecast struct {
	Op     string        `yaml:"op"`
	Value  string        `yaml:"value"`
	Within time.Duration `yaml:"within"`
	// ClearWithin is the forecast horizon beyond which it clears; default Within.
	ClearWithin time.Duration `yaml:"clear_within"`
	Window      time.Duration `yaml:"window"`
}

// BlindSpot watches a component (the rule's selector) against a reference
// series, the immersion tank's coolant: the tank's controller sees only the
// coolant, so a GPU can heat up fast while the coolant has not moved yet.
// It fires when the component rises faster than RisingPerMin while the
// reference changes by less than StillPerMin (either way), or when the
// component runs Difference or more above the reference.
type BlindSpot struct {
	Reference    Selector      `yaml:"reference"`
	Window       time.Duration `yaml:"window"`
	RisingPerMin *float64      `yaml:"rising_per_min"`
	StillPerMin  *float64      `yaml:"still_per_min"`
	Difference   *float64      `yaml:"difference"`
}

// Defaults and limits of the rule language.
const (
	DefaultWindow         = time.Minute
	defaultWebhookTimeout = 5 * time.Second
	defaultRetries        = 3
	defaultBackoff        = time.Second
	defaultAMRepeat       = time.Minute
	defaultCommandTimeout = 10 * time.Second
	// Per webhook or command: enough workers that a burst drains in a few
	// round trips, few enough that a hung receiver holds little.
	defaultMaxInFlight = 4
	// A receiver down for a quarter hour with a handful of alerts a second
	// still loses none; 1024 small alerts cost well under a MiB.
	defaultQueueSize = 1024

	minTempC, maxTempC = -50.0, 200.0
	// typicalLimitC is the device limit at which a threshold written on a
	// limit (slowdown_c - 5) is tried at load, to catch impossible ones.
	typicalLimitC = 90.0
)

// Error is a rule that makes no sense, located by the keys that lead to it
// inside the alerts section (["rules", "3", "threshold", "value"]). It
// implements configs.PathError, so the loader names the file and line.
type Error = keypath.Error

// Validate checks every rule, webhook and command. interval is the sampling
// interval the rules will see (windows must hold enough samples); zero means 1s.
func (c Config) Validate(interval time.Duration) error {
	_, err := compile(c, interval)
	return err
}

type condKind uint8

const (
	condThreshold condKind = iota + 1
	condRate
	condForecast
	condIs
	condEquals
	condNotEquals
	condAnyBits
	condSilent
	condBlindSpot
)

type cmpOp uint8

const (
	opGT cmpOp = iota + 1
	opGE
	opLT
	opLE
	opEQ
	opNE
)

var opNames = map[string]cmpOp{">": opGT, ">=": opGE, "<": opLT, "<=": opLE, "==": opEQ, "!=": opNE}

func (o cmpOp) holds(a, b float64) bool {
	switch o {
	case opGT:
		return a > b
	case opGE:
		return a >= b
	case opLT:
		return a < b
	case opLE:
		return a <= b
	case opEQ:
		return a == b
	case opNE:
		return a != b
	}
	return false
}

// upward reports whether the op fires on high values.
func (o cmpOp) upward() bool { return o == opGT || o == opGE }

// inverse is the comparison that holds once a firing condition has cleared.
func (o cmpOp) inverse() cmpOp {
	return map[cmpOp]cmpOp{opGT: opLE, opGE: opLT, opLT: opGE, opLE: opGT, opEQ: opNE, opNE: opEQ}[o]
}

// matcher is a compiled selector.
type matcher struct {
	measurement string // "" for every sensor measurement
	field       string
	exact       []tagFilter
	re          []tagFilter
}

type tagFilter struct {
	key, value string
	re         *regexp.Regexp
}

// rule is a validated, compiled Rule.
type rule struct {
	Rule
	index int
	kind  condKind
	sel   matcher
	ref   matcher // blind spot reference

	op           cmpOp
	value, clear *expr // threshold and forecast
	vars         []string
	margin       float64
	perMin       float64
	window       time.Duration
	within       time.Duration
	clearWithin  time.Duration
	silent       time.Duration
	rising       *float64
	still        float64
	difference   *float64

	webhooks []string
	commands []string
	pause    bool
	stop     bool
	holds    []string // hold:TARGET actions' targets
}

var (
	ruleName = regexp.MustCompile(`^[A-Za-z0-9_.:-]+$`)
	hookName = ruleName
)

func compile(c Config, interval time.Duration) ([]*rule, error) {
	if interval <= 0 {
		interval = time.Second
	}
	for _, name := range sortedKeys(c.Webhooks) {
		if err := checkWebhook(name, c.Webhooks[name]); err != nil {
			return nil, err
		}
	}
	for _, name := range sortedKeys(c.Commands) {
		cmd := c.Commands[name]
		p := []string{"commands", name}
		switch {
		case !hookName.MatchString(name):
			return nil, &Error{Path: p, Msg: fmt.Sprintf("command name %q may hold only letters, digits and _ . : -", name)}
		case len(cmd.Argv) == 0 || cmd.Argv[0] == "":
			return nil, &Error{Path: append(p, "argv"), Msg: "a command needs argv: [program, args...]"}
		case cmd.Timeout < 0:
			return nil, &Error{Path: append(p, "timeout"), Msg: fmt.Sprintf("%v is negative", cmd.Timeout)}
		}
	}
	rules := make([]*rule, 0, len(c.Rules))
	seen := map[string]int{}
	for i, r := range c.Rules {
		cr, err := compileRule(c, i, r, interval)
		if err != nil {
			return nil, err
		}
		if j, dup := seen[r.Name]; dup {
			return nil, &Error{Path: []string{"rules", strconv.Itoa(i), "name"}, Msg: fmt.Sprintf("%q is also the name of rule %d", r.Name, j)}
		}
		seen[r.Name] = i
		rules = append(rules, cr)
	}
	return rules, nil
}

func checkWebhook(name string, w Webhook) error {
	p := []string{"webhooks", name}
	if !hookName.MatchString(name) {
		return &Error{Path: p, Msg: fmt.Sprintf("webhook name %q may hold only letters, digits and _ . : -", name)}
	}
	if !w.URL.IsSet() {
		return &Error{Path: p, Msg: "a webhook needs url"}
	}
	if w.URL.Env == "" && w.URL.File == "" {
		if err := checkURL(w.URL.Reveal()); err != nil {
			// The URL may hold a token: name the problem, not the URL.
			return &Error{Path: append(p, "url"), Msg: err.Error()}
		}
	}
	switch w.Format {
	case "", "generic", "slack", "alertmanager":
	default:
		return &Error{Path: append(p, "format"), Msg: fmt.Sprintf("%q is not one of generic, slack, alertmanager", w.Format)}
	}
	if w.Timeout < 0 {
		return &Error{Path: append(p, "timeout"), Msg: fmt.Sprintf("%v is negative", w.Timeout)}
	}
	if w.Retries != nil && (*w.Retries < 0 || *w.Retries > 20) {
		return &Error{Path: append(p, "retries"), Msg: fmt.Sprintf("%d is outside 0..20", *w.Retries)}
	}
	if w.Backoff < 0 {
		return &Error{Path: append(p, "backoff"), Msg: fmt.Sprintf("%v is negative", w.Backoff)}
	}
	if w.Repeat < 0 {
		return &Error{Path: append(p, "repeat"), Msg: fmt.Sprintf("%v is negative", w.Repeat)}
	}
	return nil
}

func checkURL(s string) error {
	u, err := url.Parse(s)
	if err != nil {
		return fmt.Errorf("not a URL: %v", strings.ReplaceAll(err.Error(), s, "<url>"))
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return fmt.Errorf("URL scheme %q is not http or https", u.Scheme)
	}
	if u.Host == "" {
		return fmt.Errorf("URL has no host")
	}
	return nil
}

func compileRule(c Config, i int, r Rule, interval time.Duration) (*rule, error) {
	at := func(keys ...string) []string { return append([]string{"rules", strconv.Itoa(i)}, keys...) }
	bad := func(msg string, keys ...string) error { return &Error{Path: at(keys...), Msg: msg} }
	cr := &rule{Rule: r, index: i}
	if r.Name == "" {
		return nil, bad("a rule needs a name")
	}
	if !ruleName.MatchString(r.Name) {
		return nil, bad(fmt.Sprintf("%q may hold only letters, digits and _ . : -", r.Name), "name")
	}
	switch r.Severity {
	case "":
		cr.Severity = "warning"
	case "info", "warning", "critical":
	default:
		return nil, bad(fmt.Sprintf("%q is not one of info, warning, critical", r.Severity), "severity")
	}
	if r.For < 0 {
		return nil, bad(fmt.Sprintf("%v is negative", r.For), "for")
	}

	// Exactly one condition.
	var set []string
	for key, on := range map[string]bool{"threshold": r.Threshold != nil, "rate": r.Rate != nil,
		"forecast": r.Forecast != nil, "is": r.Is != nil, "equals": r.Equals != nil,
		"not_equals": r.NotEquals != nil, "any_bits": r.AnyBits != nil, "silent": r.Silent != nil,
		"blind_spot": r.BlindSpot != nil} {
		if on {
			set = append(set, key)
		}
	}
	slices.Sort(set)
	switch len(set) {
	case 0:
		return nil, bad("a rule needs one condition: threshold, rate, forecast, is, equals, not_equals, any_bits, silent or blind_spot")
	case 1:
	default:
		return nil, bad(fmt.Sprintf("a rule has one condition, this one has %s", strings.Join(set, ", ")), set[1])
	}

	silent := r.Silent != nil
	sel, sch, err := compileSelector(r.Selector, silent, func(msg string, keys ...string) error { return bad(msg, keys...) })
	if err != nil {
		return nil, err
	}
	cr.sel = sel
	need := func(k kind, cond string) error {
		if r.Field == "" {
			return bad(fmt.Sprintf("%s needs a field", cond))
		}
		if got, _ := sch.field(r.Field); got != k {
			return bad(fmt.Sprintf("%s needs %s field; %s.%s is %s", cond, kindName(k), r.Measurement, r.Field, kindName(got)), "field")
		}
		return nil
	}
	temp := sch.unit(r.Field) == schema.Celsius
	pct := sch.unit(r.Field) == schema.Percent

	switch set[0] {
	case "threshold":
		t := r.Threshold
		cr.kind = condThreshold
		if err := need(numeric, "threshold"); err != nil {
			return nil, err
		}
		if cr.op, err = parseOp(t.Op, true); err != nil {
			return nil, bad(err.Error(), "threshold", "op")
		}
		if cr.value, err = compileExpr(t.Value, r.Measurement, sch); err != nil {
			return nil, bad(err.Error(), "threshold", "value")
		}
		if err := plausible(cr.value, cr.op, temp, pct); err != nil {
			return nil, bad(err.Error(), "threshold", "value")
		}
		if t.Margin < 0 {
			return nil, bad(fmt.Sprintf("margin %v is negative", t.Margin), "threshold", "margin")
		}
		cr.margin = t.Margin
		if (t.Margin != 0 || t.Clear != "") && (cr.op == opEQ || cr.op == opNE) {
			return nil, bad("clear and margin apply to > >= < <=, not to "+t.Op, "threshold", "op")
		}
		if t.Clear != "" {
			if t.Margin != 0 {
				return nil, bad("give clear or margin, not both", "threshold", "clear")
			}
			if cr.clear, err = compileExpr(t.Clear, r.Measurement, sch); err != nil {
				return nil, bad(err.Error(), "threshold", "clear")
			}
			// The clearing point lies on the quiet side of the firing one.
			v, cl := cr.value.at(typicalLimitC), cr.clear.at(typicalLimitC)
			if cr.op.upward() && cl > v || !cr.op.upward() && cl < v {
				return nil, bad(fmt.Sprintf("clear %s lies beyond the threshold %s: the alert could never clear", cr.clear, cr.value), "threshold", "clear")
			}
		}
	case "rate":
		t := r.Rate
		cr.kind = condRate
		if err := need(numeric, "rate"); err != nil {
			return nil, err
		}
		if cr.op, err = parseOp(t.Op, false); err != nil {
			return nil, bad(err.Error(), "rate", "op")
		}
		if t.PerMin == nil {
			return nil, bad("rate needs per_min, the rate in field units per minute", "rate")
		}
		cr.perMin = *t.PerMin
		if t.Margin < 0 {
			return nil, bad(fmt.Sprintf("margin %v is negative", t.Margin), "rate", "margin")
		}
		cr.margin = t.Margin
		if cr.window, err = window(t.Window, interval); err != nil {
			return nil, bad(err.Error(), "rate", "window")
		}
	case "forecast":
		t := r.Forecast
		cr.kind = condForecast
		if err := need(numeric, "forecast"); err != nil {
			return nil, err
		}
		if cr.op, err = parseOp(t.Op, false); err != nil {
			return nil, bad(err.Error(), "forecast", "op")
		}
		if cr.value, err = compileExpr(t.Value, r.Measurement, sch); err != nil {
			return nil, bad(err.Error(), "forecast", "value")
		}
		if err := plausible(cr.value, cr.op, temp, pct); err != nil {
			return nil, bad(err.Error(), "forecast", "value")
		}
		if t.Within <= 0 {
			return nil, bad(fmt.Sprintf("within must be a positive horizon, not %v", t.Within), "forecast", "within")
		}
		cr.within, cr.clearWithin = t.Within, t.ClearWithin
		if cr.clearWithin == 0 {
			cr.clearWithin = t.Within
		}
		if cr.clearWithin < cr.within {
			return nil, bad(fmt.Sprintf("clear_within %v is shorter than within %v: the alert could clear while it still holds", t.ClearWithin, t.Within), "forecast", "clear_within")
		}
		if cr.window, err = window(t.Window, interval); err != nil {
			return nil, bad(err.Error(), "forecast", "window")
		}
	case "is":
		cr.kind = condIs
		if err := need(boolean, "is"); err != nil {
			return nil, err
		}
	case "equals", "not_equals":
		cr.kind = condEquals
		if set[0] == "not_equals" {
			cr.kind = condNotEquals
		}
		if err := need(text, set[0]); err != nil {
			return nil, err
		}
	case "any_bits":
		cr.kind = condAnyBits
		if err := need(numeric, "any_bits"); err != nil {
			return nil, err
		}
		if *r.AnyBits == 0 {
			return nil, bad("any_bits 0 has no bit to test", "any_bits")
		}
	case "silent":
		cr.kind = condSilent
		cr.silent = *r.Silent
		if cr.silent <= interval {
			return nil, bad(fmt.Sprintf("%v is not longer than the sampling interval (%v): every series would be silent between two samples", cr.silent, interval), "silent")
		}
	case "blind_spot":
		b := r.BlindSpot
		cr.kind = condBlindSpot
		if err := need(numeric, "blind_spot"); err != nil {
			return nil, err
		}
		ref, rsch, err := compileSelector(b.Reference, false, func(msg string, keys ...string) error {
			return bad(msg, append([]string{"blind_spot", "reference"}, keys...)...)
		})
		if err != nil {
			return nil, err
		}
		if b.Reference.Field == "" {
			return nil, bad("the reference needs a field", "blind_spot", "reference")
		}
		if k, _ := rsch.field(b.Reference.Field); k != numeric {
			return nil, bad(fmt.Sprintf("%s.%s is %s, not a number", b.Reference.Measurement, b.Reference.Field, kindName(k)), "blind_spot", "reference", "field")
		}
		cr.ref = ref
		if cr.window, err = window(b.Window, interval); err != nil {
			return nil, bad(err.Error(), "blind_spot", "window")
		}
		if b.RisingPerMin == nil && b.Difference == nil {
			return nil, bad("blind_spot needs rising_per_min (with still_per_min), difference, or both", "blind_spot")
		}
		if (b.RisingPerMin == nil) != (b.StillPerMin == nil) {
			return nil, bad("rising_per_min and still_per_min go together", "blind_spot")
		}
		if b.RisingPerMin != nil {
			if *b.RisingPerMin <= 0 {
				return nil, bad(fmt.Sprintf("%v is not a rise", *b.RisingPerMin), "blind_spot", "rising_per_min")
			}
			if *b.StillPerMin <= 0 {
				return nil, bad(fmt.Sprintf("%v must be positive: a reference is never exactly still", *b.StillPerMin), "blind_spot", "still_per_min")
			}
			cr.rising, cr.still = b.RisingPerMin, *b.StillPerMin
		}
		if d := b.Difference; d != nil {
			if *d <= 0 || temp && *d > maxTempC-minTempC {
				return nil, bad(fmt.Sprintf("difference %v is impossible", *d), "blind_spot", "difference")
			}
			cr.difference = d
		}
	}
	if cr.value != nil {
		cr.vars = cr.value.vars
		if cr.clear != nil {
			for _, v := range cr.clear.vars {
				if !slices.Contains(cr.vars, v) {
					cr.vars = append(cr.vars, v)
				}
			}
			// Clear shares the variable numbering of vars.
			cr.clear = renumber(cr.clear, cr.vars)
		}
	}

	for j, a := range r.Actions {
		name, arg, _ := strings.Cut(a, ":")
		switch name {
		case "log", "point":
		case "pause":
			cr.pause = true
		case "stop":
			cr.stop = true
		case "hold":
			// The target's own syntax is the hold's (heatsink run
			// --hold): checked where the hold is built, before the run.
			if !strings.Contains(arg, "<=") {
				return nil, bad(fmt.Sprintf("hold needs its target, as hold:gpu_core<=65 (got %q)", a), "actions", strconv.Itoa(j))
			}
			cr.holds = append(cr.holds, arg)
		case "webhook":
			if _, ok := c.Webhooks[arg]; !ok {
				return nil, bad(fmt.Sprintf("no webhook named %q under alerts.webhooks", arg), "actions", strconv.Itoa(j))
			}
			cr.webhooks = append(cr.webhooks, arg)
		case "command":
			if _, ok := c.Commands[arg]; !ok {
				return nil, bad(fmt.Sprintf("no command named %q under alerts.commands", arg), "actions", strconv.Itoa(j))
			}
			cr.commands = append(cr.commands, arg)
		default:
			return nil, bad(fmt.Sprintf("%q is not an action: log, point, webhook:NAME, command:NAME, pause, stop, hold:COMPONENT<=SET_C", a), "actions", strconv.Itoa(j))
		}
		if (name == "log" || name == "point" || name == "pause" || name == "stop") && arg != "" {
			return nil, bad(fmt.Sprintf("%s takes no argument", name), "actions", strconv.Itoa(j))
		}
	}
	if cr.pause && cr.stop {
		return nil, bad("pause and stop together: a stopped job cannot be resumed", "actions")
	}
	return cr, nil
}

// renumber rewrites e's variable indices into positions of vars.
func renumber(e *expr, vars []string) *expr {
	var walk func(n *node) *node
	walk = func(n *node) *node {
		if n == nil {
			return nil
		}
		c := *n
		if c.op == 'v' {
			c.v = slices.Index(vars, e.vars[n.v])
		}
		c.l, c.r = walk(n.l), walk(n.r)
		return &c
	}
	return &expr{src: e.src, root: walk(e.root), vars: vars}
}

func compileSelector(s Selector, silent bool, bad func(msg string, keys ...string) error) (matcher, measurementSchema, error) {
	m := matcher{measurement: s.Measurement, field: s.Field}
	var sch measurementSchema
	if s.Measurement == "" {
		if !silent {
			return m, sch, bad("a rule needs a measurement (only silent may leave it out, to watch every sensor)")
		}
		if s.Field != "" {
			return m, sch, bad("a field needs a measurement", "field")
		}
	} else {
		var ok bool
		if sch, ok = measurements[s.Measurement]; !ok {
			return m, sch, bad(fmt.Sprintf("no source writes measurement %q (docs/data-model.md)", s.Measurement), "measurement")
		}
		if s.Field != "" {
			if _, ok := sch.field(s.Field); !ok {
				return m, sch, bad(fmt.Sprintf("no source writes field %q in %s points (docs/data-model.md; its fields: %s)", s.Field, s.Measurement, strings.Join(sch.fieldNames(), ", ")), "field")
			}
		}
	}
	for _, k := range sortedKeys(s.Tags) {
		if s.Measurement != "" && !sch.hasTag(k) {
			return m, sch, bad(fmt.Sprintf("%s points have no tag %q (docs/data-model.md)", s.Measurement, k), "tags", k)
		}
		m.exact = append(m.exact, tagFilter{key: k, value: s.Tags[k]})
	}
	for _, k := range sortedKeys(s.TagsRegexp) {
		if s.Measurement != "" && !sch.hasTag(k) {
			return m, sch, bad(fmt.Sprintf("%s points have no tag %q (docs/data-model.md)", s.Measurement, k), "tags_regexp", k)
		}
		re, err := regexp.Compile("^(?:" + s.TagsRegexp[k] + ")$")
		if err != nil {
			return m, sch, bad(fmt.Sprintf("bad regular expression: %v", err), "tags_regexp", k)
		}
		m.re = append(m.re, tagFilter{key: k, re: re})
	}
	return m, sch, nil
}

func compileExpr(src, measurement string, sch measurementSchema) (*expr, error) {
	if src == "" {
		return nil, fmt.Errorf("missing: give a number or an expression on a device limit (slowdown_c - 5)")
	}
	e, err := parseExpr(src)
	if err != nil {
		return nil, err
	}
	for _, v := range e.vars {
		k, ok := sch.field(v)
		if !ok {
			return nil, fmt.Errorf("in %q: %q is not a field of %s points (docs/data-model.md)", e.src, v, measurement)
		}
		if k != numeric {
			return nil, fmt.Errorf("in %q: %s.%s is %s, not a number", e.src, measurement, v, kindName(k))
		}
	}
	return e, nil
}

// plausible rejects thresholds no reading can cross: temperatures outside
// -50..200 °C, percentages outside 0..100. A threshold on a device limit is
// tried with a limit of 90 °C.
func plausible(e *expr, op cmpOp, temp, pct bool) error {
	v, isConst := e.constant()
	how := ""
	if !isConst {
		v = e.at(typicalLimitC)
		how = fmt.Sprintf(" (%s with a limit of %g °C)", e, typicalLimitC)
	}
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return fmt.Errorf("threshold %s is not a finite number", e)
	}
	switch {
	case temp && (v < minTempC || v > maxTempC):
		return fmt.Errorf("threshold %g °C%s is impossible for a temperature (%g to %g °C)", v, how, minTempC, maxTempC)
	case pct && (v < 0 || v > 100):
		return fmt.Errorf("threshold %g%%%s is impossible for a percentage (0 to 100)", v, how)
	}
	return nil
}

func parseOp(s string, equality bool) (cmpOp, error) {
	op, ok := opNames[s]
	if !ok || !equality && (op == opEQ || op == opNE) {
		if equality {
			return 0, fmt.Errorf("op %q is not one of > >= < <= == !=", s)
		}
		return 0, fmt.Errorf("op %q is not one of > >= < <=", s)
	}
	return op, nil
}

func window(w, interval time.Duration) (time.Duration, error) {
	if w == 0 {
		w = DefaultWindow
	}
	if w < 2*interval {
		return 0, fmt.Errorf("window %v holds fewer than 2 samples at the %v interval: a fit needs at least %v", w, interval, 2*interval)
	}
	return w, nil
}

func kindName(k kind) string {
	switch k {
	case boolean:
		return "a boolean"
	case text:
		return "a string"
	}
	return "a number"
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// String describes the rule in one line, as `heatsink alerts --check` prints it.
func (r Rule) String() string {
	var b strings.Builder
	sev := r.Severity
	if sev == "" {
		sev = "warning"
	}
	fmt.Fprintf(&b, "%s [%s] ", r.Name, sev)
	series := r.Measurement
	if series == "" {
		series = "every sensor"
	}
	if r.Field != "" {
		series += "." + r.Field
	}
	var filters []string
	for _, k := range sortedKeys(r.Tags) {
		filters = append(filters, k+"="+r.Tags[k])
	}
	for _, k := range sortedKeys(r.TagsRegexp) {
		filters = append(filters, k+"=~"+r.TagsRegexp[k])
	}
	if len(filters) > 0 {
		series += "{" + strings.Join(filters, ",") + "}"
	}
	b.WriteString(series)
	switch {
	case r.Threshold != nil:
		t := r.Threshold
		fmt.Fprintf(&b, " %s %s", t.Op, t.Value)
		if t.Clear != "" {
			fmt.Fprintf(&b, " (clears past %s)", t.Clear)
		} else if t.Margin != 0 {
			fmt.Fprintf(&b, " (clears %g back)", t.Margin)
		}
	case r.Rate != nil:
		w := r.Rate.Window
		if w == 0 {
			w = DefaultWindow
		}
		if r.Rate.PerMin != nil {
			fmt.Fprintf(&b, " rate over %v %s %g/min", w, r.Rate.Op, *r.Rate.PerMin)
		}
	case r.Forecast != nil:
		fmt.Fprintf(&b, " forecast %s %s within %v", r.Forecast.Op, r.Forecast.Value, r.Forecast.Within)
	case r.Is != nil:
		fmt.Fprintf(&b, " is %v", *r.Is)
	case r.Equals != nil:
		fmt.Fprintf(&b, " == %q", *r.Equals)
	case r.NotEquals != nil:
		fmt.Fprintf(&b, " != %q", *r.NotEquals)
	case r.AnyBits != nil:
		fmt.Fprintf(&b, " has any bit of %#x", *r.AnyBits)
	case r.Silent != nil:
		fmt.Fprintf(&b, " silent for more than %v", *r.Silent)
	case r.BlindSpot != nil:
		s := r.BlindSpot
		ref := s.Reference.Measurement + "." + s.Reference.Field
		var parts []string
		if s.RisingPerMin != nil && s.StillPerMin != nil {
			parts = append(parts, fmt.Sprintf("rises > %g/min while %s moves < %g/min", *s.RisingPerMin, ref, *s.StillPerMin))
		}
		if s.Difference != nil {
			parts = append(parts, fmt.Sprintf("runs > %g above %s", *s.Difference, ref))
		}
		b.WriteString(" " + strings.Join(parts, " or "))
	}
	if r.For > 0 {
		fmt.Fprintf(&b, " for %v", r.For)
	}
	if len(r.Actions) > 0 {
		b.WriteString(" -> " + strings.Join(r.Actions, ", "))
	}
	return b.String()
}
