package ri

import "github.com/heatsink-hpc/heatsink/point/schema"

// Metrics implements workloads.MetricDeclarer: the fields an iteration may
// report (some only on a GPU or when a stage ran), in point/schema's terms.
func (Workload) Metrics() []schema.Field {
	return schema.Fields(
		schema.FieldTokens,
		schema.FieldVocab,
		schema.FieldPairs,
		schema.FieldIndexS,
		schema.FieldTermVectorsS,
		schema.FieldRetrainS,
		schema.FieldNormaliseS,
		schema.FieldIndexVectorsPerS,
		schema.FieldTermVectorsTokensPerS,
		schema.FieldTermVectorsPairsPerS,
		schema.FieldRetrainTokensPerS,
		schema.FieldRetrainBytesPerS,
		schema.FieldNormaliseVectorsPerS,
		schema.FieldNormaliseBytesPerS,
		schema.FieldReferenceAgreement,
		schema.FieldMaxRelErr,
	)
}
