package tank

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/heatsink-hpc/heatsink/point"
	"github.com/heatsink-hpc/heatsink/sensors/units"
)

// jsonField is a compiled Field: its path split and its conversion ready.
type jsonField struct {
	spec  Field
	steps []string
	conv  func(float64) float64
}

// splitPath splits "data.pumps.0.rpm" into its steps.
func splitPath(path string) ([]string, error) {
	if path == "" {
		return nil, errors.New("missing: a dotted path into the JSON answer (data.temperature)")
	}
	steps := strings.Split(path, ".")
	for _, s := range steps {
		if s == "" {
			return nil, fmt.Errorf("%q has an empty step", path)
		}
	}
	return steps, nil
}

func jsonDecoder(fields []Field) (decoder, error) {
	compiled := make([]jsonField, len(fields))
	for i, f := range fields {
		steps, err := splitPath(f.Path)
		if err != nil {
			return nil, err
		}
		compiled[i] = jsonField{spec: f, steps: steps}
		if f.Type == "" || f.Type == "number" {
			if compiled[i].conv, err = units.Converter(f.Unit, f.Field, f.Scale); err != nil {
				return nil, fmt.Errorf("field %s: %w", f.Field, err)
			}
		}
	}
	return func(body []byte, p *point.Point) error {
		var doc any
		if err := strictUnmarshal(body, &doc, true); err != nil {
			return err
		}
		var tmp point.Point
		var missing []string
		for _, c := range compiled {
			f := c.spec
			raw, err := walk(doc, c.steps)
			if errors.Is(err, errMissing) {
				if !f.Optional {
					missing = append(missing, f.Path)
				}
				continue
			}
			if err != nil {
				return fmt.Errorf("%s: %w", f.Path, err)
			}
			if raw == nil { // JSON null: the device has no value for it
				continue
			}
			switch f.Type {
			case "", "number":
				n, ok := raw.(json.Number)
				if !ok {
					return fmt.Errorf("%s: %s is not a number", f.Path, describe(raw))
				}
				v, err := n.Float64()
				if err != nil {
					return fmt.Errorf("%s: %s is not a representable number", f.Path, n)
				}
				v = c.conv(v)
				if err := checkPhysical(f.Field, v); err != nil {
					return fmt.Errorf("%s: %w", f.Path, err)
				}
				tmp.AddFloat(f.Field, v)
			case "bool":
				switch v := raw.(type) {
				case bool:
					tmp.AddBool(f.Field, v)
				case json.Number:
					if v != "0" && v != "1" {
						return fmt.Errorf("%s: %s is not a boolean (true/false or 0/1)", f.Path, v)
					}
					tmp.AddBool(f.Field, v == "1")
				default:
					return fmt.Errorf("%s: %s is not a boolean", f.Path, describe(raw))
				}
			case "string":
				v, ok := raw.(string)
				if !ok {
					return fmt.Errorf("%s: %s is not a string", f.Path, describe(raw))
				}
				tmp.AddString(f.Field, v)
			}
		}
		if len(missing) > 0 {
			return fmt.Errorf("partial answer: no %s", strings.Join(missing, ", "))
		}
		p.Fields = append(p.Fields, tmp.Fields...)
		return nil
	}, nil
}

var errMissing = errors.New("missing")

// walk follows steps through decoded JSON (decoded with UseNumber semantics:
// numbers are json.Number).
func walk(doc any, steps []string) (any, error) {
	cur := doc
	where := func(i int) string {
		if i == 0 {
			return "the answer"
		}
		return strings.Join(steps[:i], ".")
	}
	for i, s := range steps {
		switch v := cur.(type) {
		case map[string]any:
			next, ok := v[s]
			if !ok {
				return nil, errMissing
			}
			cur = next
		case []any:
			k, err := strconv.Atoi(s)
			if err != nil {
				return nil, fmt.Errorf("%s is a list, indexed by number, not %q", where(i), s)
			}
			if k < 0 || k >= len(v) {
				return nil, errMissing
			}
			cur = v[k]
		case nil:
			return nil, errMissing
		default:
			return nil, fmt.Errorf("%s is %s, not an object or list", where(i), describe(v))
		}
	}
	return cur, nil
}

func describe(v any) string {
	switch x := v.(type) {
	case string:
		return "the string " + clip([]byte(strconv.Quote(x)))
	case json.Number:
		return "the number " + string(x)
	case bool:
		return "the boolean " + strconv.FormatBool(x)
	case map[string]any:
		return "an object"
	case []any:
		return "a list"
	case nil:
		return "null"
	}
	return fmt.Sprintf("%T", v)
}
