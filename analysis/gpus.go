package analysis

// compareGPUs fills the comparison's verdicts across every run's GPUs and
// gathers the runs' coupling matrices, each entry labelled by its run.
func (cmp *Comparison) compareGPUs() {
	cmp.Verdicts = Verdicts(cmp.Runs, cmp.Labels)
	for i, r := range cmp.Runs {
		for _, c := range r.Coupling {
			c.Run = cmp.Labels[i]
			cmp.Coupling = append(cmp.Coupling, c)
		}
	}
}
