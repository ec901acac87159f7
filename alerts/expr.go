package alerts

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// expr is a compiled threshold expression: numbers, field names, + - * and
// parentheses, such as "slowdown_c - 5" or "setpoint_c + 3". A field name
// stands for the device-reported value of that field on the same series
// (from the point being checked, or the series' latest point that had it),
// so one rule follows each GPU's own limits.
type expr struct {
	src  string
	root *node
	vars []string // field names, in order of first use; node.v indexes it
}

type node struct {
	op   byte // 'n' number, 'v' variable, '+', '-', '*', '~' (negation)
	num  float64
	v    int
	l, r *node
}

// Limits on what a threshold expression may be, so a hostile or mistyped one
// cannot exhaust the stack.
const (
	maxExprLen   = 256
	maxExprDepth = 32
)

// parseExpr compiles src. Its errors name the column of the problem.
func parseExpr(src string) (*expr, error) {
	if strings.TrimSpace(src) == "" {
		return nil, fmt.Errorf("empty expression")
	}
	if len(src) > maxExprLen {
		return nil, fmt.Errorf("expression longer than %d characters", maxExprLen)
	}
	p := &exprParser{src: src, e: &expr{src: strings.TrimSpace(src)}}
	p.next()
	n, err := p.sum(0)
	if err != nil {
		return nil, err
	}
	if p.tok != tokEOF {
		return nil, p.errorf("unexpected %s", p.describe())
	}
	p.e.root = n
	return p.e, nil
}

// eval computes the expression; lookup returns the value of variable i and
// whether it is known. A missing variable makes the result unknown.
func (e *expr) eval(lookup func(i int) (float64, bool)) (float64, bool) {
	return e.root.eval(lookup)
}

func (n *node) eval(lookup func(i int) (float64, bool)) (float64, bool) {
	switch n.op {
	case 'n':
		return n.num, true
	case 'v':
		return lookup(n.v)
	case '~':
		x, ok := n.l.eval(lookup)
		return -x, ok
	}
	a, ok := n.l.eval(lookup)
	if !ok {
		return 0, false
	}
	b, ok := n.r.eval(lookup)
	if !ok {
		return 0, false
	}
	switch n.op {
	case '+':
		return a + b, true
	case '-':
		return a - b, true
	default:
		return a * b, true
	}
}

// constant reports the value of an expression that names no field.
func (e *expr) constant() (float64, bool) {
	if len(e.vars) > 0 {
		return 0, false
	}
	return e.eval(nil)
}

// at evaluates the expression with every field set to x: how a threshold on
// a device limit turns out for a typical limit, to catch impossible ones.
func (e *expr) at(x float64) float64 {
	v, _ := e.eval(func(int) (float64, bool) { return x, true })
	return v
}

func (e *expr) String() string { return e.src }

type token int

const (
	tokEOF token = iota
	tokNum
	tokName
	tokOp // + - * ( )
	tokBad
)

type exprParser struct {
	src   string
	pos   int // of the next unread byte
	start int // of the current token
	tok   token
	text  string
	e     *expr
}

func (p *exprParser) errorf(format string, args ...any) error {
	return fmt.Errorf("in %q at column %d: %s", strings.TrimSpace(p.src), p.start+1, fmt.Sprintf(format, args...))
}

func (p *exprParser) describe() string {
	switch p.tok {
	case tokEOF:
		return "end of expression"
	case tokBad:
		return fmt.Sprintf("character %q", p.text)
	}
	return fmt.Sprintf("%q", p.text)
}

func (p *exprParser) next() {
	for p.pos < len(p.src) && (p.src[p.pos] == ' ' || p.src[p.pos] == '\t') {
		p.pos++
	}
	p.start = p.pos
	if p.pos >= len(p.src) {
		p.tok, p.text = tokEOF, ""
		return
	}
	c := p.src[p.pos]
	switch {
	case c >= '0' && c <= '9' || c == '.':
		for p.pos < len(p.src) && (isDigit(p.src[p.pos]) || p.src[p.pos] == '.') {
			p.pos++
		}
		p.tok = tokNum
	case c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_':
		for p.pos < len(p.src) && (isDigit(p.src[p.pos]) || p.src[p.pos] == '_' ||
			p.src[p.pos] >= 'a' && p.src[p.pos] <= 'z' || p.src[p.pos] >= 'A' && p.src[p.pos] <= 'Z') {
			p.pos++
		}
		p.tok = tokName
	case strings.IndexByte("+-*()", c) >= 0:
		p.pos++
		p.tok = tokOp
	default:
		// One rune, whole, so the message shows it as typed (a byte of
		// invalid UTF-8 counts as one).
		_, size := utf8.DecodeRuneInString(p.src[p.pos:])
		p.pos += size
		p.tok = tokBad
	}
	p.text = p.src[p.start:p.pos]
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// sum := product (('+' | '-') product)*
func (p *exprParser) sum(depth int) (*node, error) {
	l, err := p.product(depth)
	if err != nil {
		return nil, err
	}
	for p.tok == tokOp && (p.text == "+" || p.text == "-") {
		op := p.text[0]
		p.next()
		r, err := p.product(depth)
		if err != nil {
			return nil, err
		}
		l = &node{op: op, l: l, r: r}
	}
	return l, nil
}

// product := unary ('*' unary)*
func (p *exprParser) product(depth int) (*node, error) {
	l, err := p.unary(depth)
	if err != nil {
		return nil, err
	}
	for p.tok == tokOp && p.text == "*" {
		p.next()
		r, err := p.unary(depth)
		if err != nil {
			return nil, err
		}
		l = &node{op: '*', l: l, r: r}
	}
	return l, nil
}

// unary := '-' unary | number | name | '(' sum ')'
func (p *exprParser) unary(depth int) (*node, error) {
	if depth > maxExprDepth {
		return nil, p.errorf("nested deeper than %d", maxExprDepth)
	}
	switch p.tok {
	case tokNum:
		v, err := strconv.ParseFloat(p.text, 64)
		if err != nil {
			return nil, p.errorf("bad number %q", p.text)
		}
		p.next()
		return &node{op: 'n', num: v}, nil
	case tokName:
		i := -1
		for j, v := range p.e.vars {
			if v == p.text {
				i = j
			}
		}
		if i < 0 {
			i = len(p.e.vars)
			p.e.vars = append(p.e.vars, p.text)
		}
		p.next()
		return &node{op: 'v', v: i}, nil
	case tokOp:
		switch p.text {
		case "-":
			p.next()
			x, err := p.unary(depth + 1)
			if err != nil {
				return nil, err
			}
			return &node{op: '~', l: x}, nil
		case "(":
			p.next()
			x, err := p.sum(depth + 1)
			if err != nil {
				return nil, err
			}
			if p.tok != tokOp || p.text != ")" {
				return nil, p.errorf("expected \")\", found %s", p.describe())
			}
			p.next()
			return x, nil
		}
	}
	return nil, p.errorf("expected a number or a field name, found %s", p.describe())
}
