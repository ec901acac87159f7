package stream

import "github.com/heatsink-hpc/heatsink/point/schema"

// Metrics implements workloads.MetricDeclarer: the fields an iteration may
// report (some only on a GPU or when a stage ran), in point/schema's terms.
func (Workload) Metrics() []schema.Field {
	return schema.Fields(
		schema.FieldCopyBytesPerS,
		schema.FieldMulBytesPerS,
		schema.FieldAddBytesPerS,
		schema.FieldTriadBytesPerS,
		schema.FieldDotBytesPerS,
		schema.FieldBytesPerS,
		schema.FieldMaxRelErr,
		schema.FieldDotRelErr,
		schema.FieldArraySize,
		schema.FieldPasses,
	)
}
