package lda

import "github.com/heatsink-hpc/heatsink/point/schema"

// Metrics implements workloads.MetricDeclarer: the fields an iteration may
// report (some only on a GPU or when a stage ran), in point/schema's terms.
func (Workload) Metrics() []schema.Field {
	return schema.Fields(
		schema.FieldTokensPerS,
		schema.FieldSampleS,
		schema.FieldRebuildS,
		schema.FieldMaxTopicPct,
		schema.FieldLoglikNatsPerToken,
		schema.FieldSweeps,
		schema.FieldTokens,
		schema.FieldTopics,
		schema.FieldDeviceBytes,
	)
}
