package w2v

import "github.com/heatsink-hpc/heatsink/point/schema"

// Metrics implements workloads.MetricDeclarer: the fields an iteration may
// report (some only on a GPU or when a stage ran), in point/schema's terms.
func (Workload) Metrics() []schema.Field {
	return schema.Fields(
		schema.FieldWords,
		schema.FieldWordsPerS,
		schema.FieldKeptFraction,
		schema.FieldTrainS,
		schema.FieldVocab,
		schema.FieldEpochs,
		schema.FieldKernelS,
		schema.FieldKernelWordsPerS,
		schema.FieldHostWaitS,
		schema.FieldLaunches,
		schema.FieldStarvedLaunches,
		schema.FieldClusterPurity,
		schema.FieldPlantedAnalogyAdd,
		schema.FieldPlantedAnalogyMul,
		schema.FieldWS353Spearman,
		schema.FieldWS353SimilaritySpearman,
		schema.FieldWS353RelatednessSpearman,
		schema.FieldSimLex999Spearman,
		schema.FieldGoogleAnalogyAdd,
		schema.FieldGoogleAnalogyMul,
	)
}
