package dgemm

import "github.com/heatsink-hpc/heatsink/point/schema"

// Metrics implements workloads.MetricDeclarer: the fields an iteration may
// report (some only on a GPU or when a stage ran), in point/schema's terms.
func (Workload) Metrics() []schema.Field {
	return schema.Fields(
		schema.FieldFlopPerS,
		schema.FieldGemms,
		schema.FieldMatrixOrder,
		schema.FieldMaxRelErr,
		schema.FieldCuBLASVersion,
	)
}
