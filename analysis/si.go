package analysis

import (
	"fmt"
	"math"
)

// SI writes v to three significant digits with an SI prefix (58.5 T,
// 3.03 T, 75.6 G): a GPU's flop/s, bytes/s and their per-watt values
// are read at a glance, which 7.561e+10 is not. The unit is the caller's.
func SI(v float64) string {
	for _, p := range []struct {
		scale float64
		sym   string
	}{{1e15, "P"}, {1e12, "T"}, {1e9, "G"}, {1e6, "M"}, {1e3, "k"}} {
		if math.Abs(v) >= p.scale {
			return fmt.Sprintf("%.3g %s", v/p.scale, p.sym)
		}
	}
	return fmt.Sprintf("%.3g", v)
}
