package tank

import (
	"fmt"
	"math"
	"strings"
)

// physical is the range a tank reading can have, by the unit its field
// name ends in: a value outside it (1e300 °C) is a broken answer, reported
// as an error like any other, never recorded. A tank holds a liquid, so its
// temperatures lie between freezing brines and boiling; its power, flows
// and pump speeds are those of a facility, not of a grid.
var physical = []struct {
	suffix string
	lo, hi float64
}{
	{"_c", -50, 150},
	{"_w", 0, 10e6},
	{"_kw", 0, 10e3},
	{"_lpm", 0, 100e3},
	{"_rpm", 0, 100e3},
	{"_pct", 0, 100},
}

// maxMagnitude bounds a reading of a unit not listed above (mpue, a
// pressure, a custom field).
const maxMagnitude = 1e12

// checkPhysical returns an error naming the field when v cannot be a
// reading of it.
func checkPhysical(field string, v float64) error {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return fmt.Errorf("%s: %v is not a finite number", field, v)
	}
	for _, r := range physical {
		if strings.HasSuffix(field, r.suffix) {
			if v < r.lo || v > r.hi {
				return fmt.Errorf("%s: %g is outside the physical range %g..%g", field, v, r.lo, r.hi)
			}
			return nil
		}
	}
	if math.Abs(v) > maxMagnitude {
		return fmt.Errorf("%s: %g is outside the physical range ±%g", field, v, maxMagnitude)
	}
	return nil
}
