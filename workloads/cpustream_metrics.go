package workloads

import "github.com/heatsink-hpc/heatsink/point/schema"

// Metrics implements MetricDeclarer.
func (CPUStream) Metrics() []schema.Field {
	return schema.Fields(schema.FieldCopyBytesPerS, schema.FieldScaleBytesPerS, schema.FieldAddBytesPerS, schema.FieldTriadBytesPerS)
}
