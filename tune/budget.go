package tune

import (
	"fmt"
	"math"
)

// Budget is the chapter's estimate (eq. 5.1) of how many of the copula's
// samples to evaluate for one or more top-1 % configurations with a given
// confidence.
type Budget struct {
	Space      int     // |C|: feasible configurations of the space
	Reachable  int     // |C_GC|: distinct configurations the copula generates
	Ideal      int     // |I|: the top TopShare of the space
	IdealGC    int     // |I_GC|: ideal configurations assumed within the copula's reach
	Confidence float64 // the requested probability of one or more ideal samples
	// K is the budget: the fewest unique samples whose probability of
	// holding an ideal configuration reaches Confidence; 0 when Determinate
	// is false.
	K           int
	P           float64 // that probability at K
	Determinate bool
}

// BudgetOptions are the assumptions of the estimate; zero values take the
// chapter's.
type BudgetOptions struct {
	TopShare   float64 // the share of the space that is ideal (0.01)
	KeptShare  float64 // the share of the space assumed ideal-equivalent within the copula's reach (0.05)
	Confidence float64 // 0.95
}

// EstimateBudget computes the budget from the space's size and the
// copula's reachable space.
//
// The chapter's words for |I_GC| ("reduce |I_GC| by the ratio of |C| and
// |C_GC|", "assume 5 % of the eliminated configurations are members of I")
// do not pin one formula down. The one implemented, |I_GC| = ⌈0.05·|C|⌉, with
// the budget indeterminate when that exceeds |C_GC|, is the reading that
// reproduces the chapter's Table 5.3: the three indeterminate budgets (3mm,
// Covariance, LU) and Syr2k 3, Heat3d 8 and XSBench 7 exactly, the other
// four within a factor of 1.5 (their |C_GC| are printed rounded); see
// TestBudgetReproducesTable5_3.
func EstimateBudget(space, reachable int, o BudgetOptions) (Budget, error) {
	if o.TopShare == 0 {
		o.TopShare = 0.01
	}
	if o.KeptShare == 0 {
		o.KeptShare = 0.05
	}
	if o.Confidence == 0 {
		o.Confidence = 0.95
	}
	if space <= 0 || reachable < 0 || reachable > space {
		return Budget{}, fmt.Errorf("budget: reachable %d of a space of %d", reachable, space)
	}
	if o.Confidence <= 0 || o.Confidence >= 1 {
		return Budget{}, fmt.Errorf("budget: confidence %g is not in (0, 1)", o.Confidence)
	}
	b := Budget{
		Space:      space,
		Reachable:  reachable,
		Ideal:      int(math.Ceil(o.TopShare * float64(space))),
		IdealGC:    int(math.Ceil(o.KeptShare * float64(space))),
		Confidence: o.Confidence,
	}
	if b.IdealGC > b.Reachable || b.IdealGC == 0 {
		return b, nil
	}
	for k := 1; k <= b.Reachable; k++ {
		if p := AtLeastOne(b.Reachable, b.IdealGC, k); p >= o.Confidence {
			b.K, b.P, b.Determinate = k, p, true
			break
		}
	}
	return b, nil
}

// AtLeastOne is eq. 5.1: the probability that k draws without replacement
// from n configurations, ideal of them ideal, hold at least one ideal one
// (1 - C(n-ideal, k) / C(n, k)).
func AtLeastOne(n, ideal, k int) float64 {
	if k > n-ideal {
		return 1
	}
	return 1 - math.Exp(lchoose(n-ideal, k)-lchoose(n, k))
}

func lchoose(n, k int) float64 {
	a, _ := math.Lgamma(float64(n + 1))
	b, _ := math.Lgamma(float64(k + 1))
	c, _ := math.Lgamma(float64(n - k + 1))
	return a - b - c
}

// String is the budget as heatsink tune prints it before spending it.
func (b Budget) String() string {
	if !b.Determinate {
		return fmt.Sprintf("budget: indeterminate (the copula reaches %d of %d configurations, fewer than the %d assumed ideal within its reach)",
			b.Reachable, b.Space, b.IdealGC)
	}
	return fmt.Sprintf("budget: %d evaluations for a top-1%% configuration with probability %.3f (copula reaches %d of %d configurations; %d assumed ideal within reach)",
		b.K, b.P, b.Reachable, b.Space, b.IdealGC)
}
