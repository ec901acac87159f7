package schema

import (
	"fmt"
	"math"

	"github.com/heatsink-hpc/heatsink/point"
	"github.com/influxdata/line-protocol/v2/lineprotocol"
)

func stringField(f point.Field) (string, error) {
	if f.Value.Kind() != lineprotocol.String {
		return "", fmt.Errorf("field %s is %v, not a string", f.Key, f.Value.Kind())
	}
	return f.Value.StringV(), nil
}

// intField accepts a float with an integral value as well, since a point
// that went through a JSON or Flux round trip may come back as one.
func intField(f point.Field) (int, error) {
	switch f.Value.Kind() {
	case lineprotocol.Int:
		return int(f.Value.IntV()), nil
	case lineprotocol.Uint:
		if v := f.Value.UintV(); v <= math.MaxInt64 {
			return int(v), nil
		}
	case lineprotocol.Float:
		if v := f.Value.FloatV(); v == math.Trunc(v) && math.Abs(v) < 1<<53 {
			return int(v), nil
		}
	}
	return 0, fmt.Errorf("field %s is %v, not an integer", f.Key, f.Value)
}

func floatField(f point.Field) (float64, error) {
	switch f.Value.Kind() {
	case lineprotocol.Float, lineprotocol.Int, lineprotocol.Uint:
		v, _ := point.Float(f.Value)
		return v, nil
	}
	return 0, fmt.Errorf("field %s is %v, not a number", f.Key, f.Value.Kind())
}
