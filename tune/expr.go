package tune

import (
	"fmt"
	"strconv"
	"strings"
	"unicode"
)

// expr is a parsed constraint: arithmetic, comparisons and logic over the
// names of parameters and task features. Booleans are 1 and 0; categorical
// values compare as strings.
type expr interface {
	eval(env map[string]value) (value, error)
}

// value is a number or a string; an expression's result is true when it is a
// non-zero number.
type value struct {
	num   float64
	str   string
	isStr bool
}

func (v value) String() string {
	if v.isStr {
		return strconv.Quote(v.str)
	}
	return strconv.FormatFloat(v.num, 'g', -1, 64)
}

type numLit float64
type strLit string
type ident string
type unary struct {
	op string
	x  expr
}
type binary struct {
	op   string
	l, r expr
}

func (n numLit) eval(map[string]value) (value, error) { return value{num: float64(n)}, nil }
func (s strLit) eval(map[string]value) (value, error) { return value{str: string(s), isStr: true}, nil }
func (id ident) eval(env map[string]value) (value, error) {
	v, ok := env[string(id)]
	if !ok {
		return value{}, fmt.Errorf("unknown name %q", string(id))
	}
	return v, nil
}

func (u unary) eval(env map[string]value) (value, error) {
	x, err := u.x.eval(env)
	if err != nil {
		return value{}, err
	}
	if x.isStr {
		return value{}, fmt.Errorf("%s applied to the string %s", u.op, x)
	}
	if u.op == "!" {
		return boolValue(x.num == 0), nil
	}
	return value{num: -x.num}, nil
}

func boolValue(b bool) value {
	if b {
		return value{num: 1}
	}
	return value{num: 0}
}

func (b binary) eval(env map[string]value) (value, error) {
	l, err := b.l.eval(env)
	if err != nil {
		return value{}, err
	}
	// && and || short-circuit, so a guard can protect the term after it.
	switch b.op {
	case "&&":
		if l.isStr || l.num == 0 {
			return boolValue(false), nil
		}
	case "||":
		if !l.isStr && l.num != 0 {
			return boolValue(true), nil
		}
	}
	r, err := b.r.eval(env)
	if err != nil {
		return value{}, err
	}
	if b.op == "&&" || b.op == "||" {
		return boolValue(!r.isStr && r.num != 0), nil
	}
	if l.isStr || r.isStr {
		if !l.isStr || !r.isStr || (b.op != "==" && b.op != "!=") {
			return value{}, fmt.Errorf("%s %s %s: strings only compare with == and != to strings", l, b.op, r)
		}
		return boolValue((l.str == r.str) == (b.op == "==")), nil
	}
	x, y := l.num, r.num
	switch b.op {
	case "+":
		return value{num: x + y}, nil
	case "-":
		return value{num: x - y}, nil
	case "*":
		return value{num: x * y}, nil
	case "/":
		if y == 0 {
			return value{}, fmt.Errorf("division by zero in %s / %s", l, r)
		}
		return value{num: x / y}, nil
	case "%":
		if y == 0 {
			return value{}, fmt.Errorf("modulo by zero in %s %% %s", l, r)
		}
		return value{num: float64(int64(x) % int64(y))}, nil
	case "==":
		return boolValue(x == y), nil
	case "!=":
		return boolValue(x != y), nil
	case "<":
		return boolValue(x < y), nil
	case "<=":
		return boolValue(x <= y), nil
	case ">":
		return boolValue(x > y), nil
	case ">=":
		return boolValue(x >= y), nil
	}
	return value{}, fmt.Errorf("unknown operator %q", b.op)
}

// parseExpr parses a constraint. Precedence, lowest first: ||, &&,
// comparisons, + -, * / %, unary ! -.
func parseExpr(s string) (expr, error) {
	toks, err := lex(s)
	if err != nil {
		return nil, err
	}
	p := &parser{toks: toks}
	e, err := p.binary(0)
	if err != nil {
		return nil, err
	}
	if p.pos < len(p.toks) {
		return nil, fmt.Errorf("unexpected %q at column %d", p.toks[p.pos].text, p.toks[p.pos].col)
	}
	return e, nil
}

var levels = [][]string{{"||"}, {"&&"}, {"==", "!=", "<=", ">=", "<", ">"}, {"+", "-"}, {"*", "/", "%"}}

type token struct {
	text string
	kind byte // 'n' number, 's' string, 'i' identifier, 'o' operator or parenthesis
	col  int
}

type parser struct {
	toks []token
	pos  int
}

func (p *parser) peek() (token, bool) {
	if p.pos < len(p.toks) {
		return p.toks[p.pos], true
	}
	return token{}, false
}

func (p *parser) binary(level int) (expr, error) {
	if level == len(levels) {
		return p.unary()
	}
	l, err := p.binary(level + 1)
	if err != nil {
		return nil, err
	}
	for {
		t, ok := p.peek()
		if !ok || t.kind != 'o' || !contains(levels[level], t.text) {
			return l, nil
		}
		p.pos++
		r, err := p.binary(level + 1)
		if err != nil {
			return nil, err
		}
		l = binary{op: t.text, l: l, r: r}
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func (p *parser) unary() (expr, error) {
	t, ok := p.peek()
	if !ok {
		return nil, fmt.Errorf("expression ends where a value was expected")
	}
	p.pos++
	switch {
	case t.kind == 'o' && (t.text == "!" || t.text == "-"):
		x, err := p.unary()
		if err != nil {
			return nil, err
		}
		return unary{op: t.text, x: x}, nil
	case t.kind == 'o' && t.text == "(":
		e, err := p.binary(0)
		if err != nil {
			return nil, err
		}
		if c, ok := p.peek(); !ok || c.text != ")" {
			return nil, fmt.Errorf("missing ) for the ( at column %d", t.col)
		}
		p.pos++
		return e, nil
	case t.kind == 'n':
		f, err := strconv.ParseFloat(t.text, 64)
		if err != nil {
			return nil, fmt.Errorf("bad number %q at column %d", t.text, t.col)
		}
		return numLit(f), nil
	case t.kind == 's':
		return strLit(t.text), nil
	case t.kind == 'i':
		switch t.text {
		case "true":
			return numLit(1), nil
		case "false":
			return numLit(0), nil
		}
		return ident(t.text), nil
	}
	return nil, fmt.Errorf("unexpected %q at column %d", t.text, t.col)
}

func lex(s string) ([]token, error) {
	var toks []token
	for i := 0; i < len(s); {
		c := rune(s[i])
		switch {
		case unicode.IsSpace(c):
			i++
		case unicode.IsDigit(c) || c == '.':
			j := i
			for j < len(s) && (unicode.IsDigit(rune(s[j])) || s[j] == '.' || s[j] == 'e' ||
				((s[j] == '+' || s[j] == '-') && j > i && s[j-1] == 'e')) {
				j++
			}
			toks = append(toks, token{s[i:j], 'n', i + 1})
			i = j
		case unicode.IsLetter(c) || c == '_':
			j := i
			for j < len(s) && (unicode.IsLetter(rune(s[j])) || unicode.IsDigit(rune(s[j])) || s[j] == '_') {
				j++
			}
			toks = append(toks, token{s[i:j], 'i', i + 1})
			i = j
		case c == '"' || c == '\'':
			j := strings.IndexByte(s[i+1:], s[i])
			if j < 0 {
				return nil, fmt.Errorf("unterminated string at column %d", i+1)
			}
			toks = append(toks, token{s[i+1 : i+1+j], 's', i + 1})
			i += j + 2
		default:
			if i+1 < len(s) && contains([]string{"==", "!=", "<=", ">=", "&&", "||"}, s[i:i+2]) {
				toks = append(toks, token{s[i : i+2], 'o', i + 1})
				i += 2
			} else if strings.ContainsRune("+-*/%<>!()", c) {
				toks = append(toks, token{s[i : i+1], 'o', i + 1})
				i++
			} else {
				return nil, fmt.Errorf("unexpected character %q at column %d", c, i+1)
			}
		}
	}
	return toks, nil
}

// names lists the identifiers an expression reads.
func names(e expr, into map[string]bool) {
	switch x := e.(type) {
	case ident:
		into[string(x)] = true
	case unary:
		names(x.x, into)
	case binary:
		names(x.l, into)
		names(x.r, into)
	}
}
