// Package tune is heatsink's autotuner: few-shot transfer-learning tuning with
// a Gaussian copula (the reference dissertation's chapter 5, "GC_TLA"), with
// random search and TPE as baselines in one harness, and evaluations that
// are fair to a node's thermal state.
//
// A tuning space (space.go) is read from YAML: integer ranges, ordinal lists,
// categoricals and booleans to tune, task features that say which problem is
// being tuned (the input scale), and constraints between them. Source data
// are earlier evaluations of other tasks of the same space. The copula
// (copula.go) is fitted on the best share of them (30 % by default), then
// sampled conditionally on the target task's features, so that every sample
// is for the target task; duplicates and infeasible configurations are
// rejected, the task never is. Before any evaluation, the budget (budget.go)
// says how many of the copula's samples contain a top-1 % configuration with
// a given confidence (eq. 5.1 of the chapter).
package tune
