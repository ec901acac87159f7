package schema

// The names below are those of docs/data-model.md's table; names_test.go
// fails when they and the document diverge. Change the document first.

// Measurement names: the first column of the table.
const (
	CPU             = "cpu"
	Mem             = "mem"
	Load            = "load"
	Hwmon           = "hwmon"
	Cpufreq         = "cpufreq"
	RAPL            = "rapl"
	NVMe            = "nvme"
	GPU             = "gpu"
	PDU             = "pdu"
	Tank            = "tank"
	Event           = "event"
	Iteration       = "iteration"
	Alert           = "alert"
	JobSummary      = "job_summary"
	CollectorTick   = "collector_tick"
	CollectorSource = "collector_source"
	InfluxSink      = "influx_sink"
	TuneEvaluation  = "tune_evaluation"
	Hold            = "hold"
	SurveyGPU       = "survey_gpu"
)

// Tag keys.
const (
	TagBank        = "bank"
	TagChip        = "chip"
	TagChipName    = "chip_name"
	TagClass       = "class"
	TagComponent   = "component"
	TagCPU         = "cpu"
	TagDevice      = "device"
	TagGPU         = "gpu"
	TagHost        = "host"
	TagJob         = "job"
	TagJobs        = "jobs"
	TagKind        = "kind"
	TagLabel       = "label"
	TagMeasurement = "measurement"
	TagModel       = "model"
	TagOutlet      = "outlet"
	TagPDU         = "pdu"
	TagPhase       = "phase"
	TagRule        = "rule"
	TagRun         = "run"
	TagSensor      = "sensor"
	TagSerial      = "serial"
	TagSeverity    = "severity"
	TagSource      = "source"
	TagSpace       = "space"
	TagTank        = "tank"
	TagUUID        = "uuid"
	TagVendor      = "vendor"
	TagWorkload    = "workload"
	TagZone        = "zone"
	TagZoneID      = "zone_id"
)

// Field keys, with their unit as a suffix.
const (
	FieldAddBytesPerS          = "add_bytes_per_s"
	FieldAlarmC                = "alarm_c"
	FieldArraySize             = "array_size"
	FieldAvailableBytes        = "available_bytes"
	FieldBytesPerS             = "bytes_per_s"
	FieldClockEventReasons     = "clock_event_reasons"
	FieldClusterPurity         = "cluster_purity"
	FieldConsumptionW          = "consumption_w"
	FieldControllerCPU0C       = "controller_cpu0_c"
	FieldControllerCPU1C       = "controller_cpu1_c"
	FieldCoolantFlowLPM        = "coolant_flow_lpm"
	FieldCoolantInC            = "coolant_in_c"
	FieldCoolantOutC           = "coolant_out_c"
	FieldCoolantTempC          = "coolant_temp_c"
	FieldCopyBytesPerS         = "copy_bytes_per_s"
	FieldCPUEnergyJ            = "cpu_energy_j"
	FieldCritC                 = "crit_c"
	FieldCuBLASVersion         = "cublas_version"
	FieldCurrentA              = "current_a"
	FieldDemo                  = "demo"
	FieldDeviceBytes           = "device_bytes"
	FieldDirectPointsTotal     = "direct_points_total"
	FieldDissipationC          = "dissipation_c"
	FieldDissipationKW         = "dissipation_kw"
	FieldDissipationW          = "dissipation_w"
	FieldDotBytesPerS          = "dot_bytes_per_s"
	FieldDotRelErr             = "dot_rel_err"
	FieldDroppedPointsTotal    = "dropped_points_total"
	FieldEnergyJ               = "energy_j"
	FieldEpochs                = "epochs"
	FieldErrors                = "errors"
	FieldErrorsText            = "errors_text"
	FieldErrorsTotal           = "errors_total"
	FieldExitStatus            = "exit_status"
	FieldFactory               = "factory"
	FieldFanRPM                = "fan_rpm"
	FieldFlopPerS              = "flop_per_s"
	FieldFreqMHz               = "freq_mhz"
	FieldGemms                 = "gemms"
	FieldGPUEnergyJ            = "gpu_energy_j"
	FieldGPUMaxC               = "gpu_max_c"
	FieldHeatIntervalSPerC     = "heat_interval_s_per_c"
	FieldHostWaitS             = "host_wait_s"
	FieldIdleMeanC             = "idle_mean_c"
	FieldIdlePct               = "idle_pct"
	FieldIndexS                = "index_s"
	FieldIndexVectorsPerS      = "index_vectors_per_s"
	FieldIowaitPct             = "iowait_pct"
	FieldIteration             = "iteration"
	FieldKeptFraction          = "kept_fraction"
	FieldKernelS               = "kernel_s"
	FieldKernelWordsPerS       = "kernel_words_per_s"
	FieldLaunches              = "launches"
	FieldLagS                  = "lag_s"
	FieldLatencyS              = "latency_s"
	FieldLoad1                 = "load1"
	FieldLoad15                = "load15"
	FieldLoad5                 = "load5"
	FieldLoglikNatsPerToken    = "loglik_nats_per_token"
	FieldMaintenance           = "maintenance"
	FieldMaxC                  = "max_c"
	FieldMaxMHz                = "max_mhz"
	FieldMaxRelErr             = "max_rel_err"
	FieldMaxTopicPct           = "max_topic_pct"
	FieldMatrixOrder           = "matrix_order"
	FieldMemClockMHz           = "mem_clock_mhz"
	FieldMemMaxC               = "mem_max_c"
	FieldMemTempC              = "mem_temp_c"
	FieldMemTotalBytes         = "mem_total_bytes"
	FieldMemUsedBytes          = "mem_used_bytes"
	FieldMemUtilPct            = "mem_util_pct"
	FieldMessage               = "message"
	FieldMinMHz                = "min_mhz"
	FieldMissedTicksTotal      = "missed_ticks_total"
	FieldMode                  = "mode"
	FieldMPUE                  = "mpue"
	FieldMulBytesPerS          = "mul_bytes_per_s"
	FieldN                     = "n"
	FieldNormaliseBytesPerS    = "normalise_bytes_per_s"
	FieldNormaliseS            = "normalise_s"
	FieldNormaliseVectorsPerS  = "normalise_vectors_per_s"
	FieldOK                    = "ok"
	FieldAvailable             = "available"
	FieldOldestUnsentS         = "oldest_unsent_s"
	FieldPairs                 = "pairs"
	FieldPasses                = "passes"
	FieldPausedS               = "paused_s"
	FieldPeakAtS               = "peak_at_s"
	FieldPeakC                 = "peak_c"
	FieldDuty                  = "duty"
	FieldPredictedC            = "predicted_c"
	FieldGain                  = "gain"
	FieldPeriodS               = "period_s"
	FieldPlantedAnalogyAdd     = "planted_analogy_add"
	FieldPlantedAnalogyMul     = "planted_analogy_mul"
	FieldPoints                = "points"
	FieldPowerDerived          = "power_derived"
	FieldPowerLimitW           = "power_limit_w"
	FieldPowerW                = "power_w"
	FieldPowerThrottleS        = "power_throttle_s"
	FieldProcsRunning          = "procs_running"
	FieldPState                = "pstate"
	FieldPump1On               = "pump1_on"
	FieldPump1RPM              = "pump1_rpm"
	FieldPump2On               = "pump2_on"
	FieldPump2RPM              = "pump2_rpm"
	FieldRebuildS              = "rebuild_s"
	FieldRecord                = "record"
	FieldRejectedPointsTotal   = "rejected_points_total"
	FieldRetrainBytesPerS      = "retrain_bytes_per_s"
	FieldRetrainS              = "retrain_s"
	FieldRetrainTokensPerS     = "retrain_tokens_per_s"
	FieldRetriesTotal          = "retries_total"
	FieldRuntimeS              = "runtime_s"
	FieldSampleS               = "sample_s"
	FieldScaleBytesPerS        = "scale_bytes_per_s"
	FieldSentPointsTotal       = "sent_points_total"
	FieldSetpointC             = "setpoint_c"
	FieldShutdownC             = "shutdown_c"
	FieldSlowdownC             = "slowdown_c"
	FieldSMClockMHz            = "sm_clock_mhz"
	FieldSpoolBytes            = "spool_bytes"
	FieldSpoolPoints           = "spool_points"
	FieldStalledReads          = "stalled_reads"
	FieldStarvedLaunches       = "starved_launches"
	FieldState                 = "state"
	FieldSwapUsedBytes         = "swap_used_bytes"
	FieldSweeps                = "sweeps"
	FieldSystemPct             = "system_pct"
	FieldTempC                 = "temp_c"
	FieldTermVectorsPairsPerS  = "term_vectors_pairs_per_s"
	FieldTermVectorsS          = "term_vectors_s"
	FieldTermVectorsTokensPerS = "term_vectors_tokens_per_s"
	FieldTest                  = "test"
	FieldThermalThrottleS      = "thermal_throttle_s"
	FieldThreshold             = "threshold"
	FieldThrottlePower         = "throttle_power"
	FieldThrottleThermal       = "throttle_thermal"
	FieldTimeoutsTotal         = "timeouts_total"
	FieldTokens                = "tokens"
	FieldTokensPerS            = "tokens_per_s"
	FieldTopics                = "topics"
	FieldTotalBytes            = "total_bytes"
	FieldTrainS                = "train_s"
	FieldTriadBytesPerS        = "triad_bytes_per_s"
	FieldUsagePct              = "usage_pct"
	FieldUsedBytes             = "used_bytes"
	FieldUserPct               = "user_pct"
	FieldUtilPct               = "util_pct"
	FieldValue                 = "value"
	FieldVocab                 = "vocab"
	FieldWarnC                 = "warn_c"
	FieldWarnings              = "warnings"
	FieldWarningsText          = "warnings_text"
	FieldWaterFlowLPM          = "water_flow_lpm"
	FieldWaterInC              = "water_in_c"
	FieldWaterOutC             = "water_out_c"
	FieldWords                 = "words"
	FieldWordsPerS             = "words_per_s"
)

// The real-text evaluation sets' scores (full-w2v's sets parameter):
// Spearman's rank correlation of cosine and human score on each similarity
// set, 3CosAdd's and 3CosMul's accuracy on Google's analogies.
const (
	FieldWS353Spearman            = "ws353_spearman"
	FieldWS353SimilaritySpearman  = "ws353_similarity_spearman"
	FieldWS353RelatednessSpearman = "ws353_relatedness_spearman"
	FieldSimLex999Spearman        = "simlex999_spearman"
	FieldGoogleAnalogyAdd         = "google_analogy_add"
	FieldGoogleAnalogyMul         = "google_analogy_mul"
)

// FieldReferenceAgreement is the share of ri's vectors within 1e-6
// relative of its exact CPU reference (ri's check parameter).
const FieldReferenceAgreement = "reference_agreement"

func table() []Measurement {
	return []Measurement{
		{Name: CPU,
			Tags:   []string{TagCPU},
			Fields: []string{FieldUsagePct, FieldUserPct, FieldSystemPct, FieldIowaitPct, FieldIdlePct}},
		{Name: Mem,
			Tags:   nil,
			Fields: []string{FieldTotalBytes, FieldAvailableBytes, FieldUsedBytes, FieldSwapUsedBytes}},
		{Name: Load,
			Tags:   nil,
			Fields: []string{FieldLoad1, FieldLoad5, FieldLoad15, FieldProcsRunning}},
		{Name: Hwmon,
			Tags:   []string{TagChip, TagChipName, TagSensor, TagLabel, TagClass},
			Fields: []string{FieldTempC, FieldMaxC, FieldCritC, FieldFanRPM, FieldPowerW}},
		{Name: Cpufreq,
			Tags:   []string{TagCPU},
			Fields: []string{FieldFreqMHz, FieldMinMHz, FieldMaxMHz}},
		{Name: RAPL,
			Tags:   []string{TagZone, TagZoneID},
			Fields: []string{FieldEnergyJ, FieldPowerW}},
		{Name: NVMe,
			Tags:   []string{TagDevice, TagModel, TagSerial, TagSensor},
			Fields: []string{FieldTempC, FieldWarnC, FieldCritC}},
		{Name: GPU,
			Tags:   []string{TagGPU, TagUUID, TagModel},
			Fields: []string{FieldTempC, FieldMemTempC, FieldPowerW, FieldEnergyJ, FieldPowerLimitW, FieldUtilPct, FieldMemUtilPct, FieldMemUsedBytes, FieldMemTotalBytes, FieldPState, FieldSMClockMHz, FieldMemClockMHz, FieldClockEventReasons, FieldThrottleThermal, FieldThrottlePower, FieldSlowdownC, FieldShutdownC, FieldGPUMaxC, FieldMemMaxC}},
		{Name: PDU,
			Tags:   []string{TagPDU, TagPhase, TagBank, TagOutlet},
			Fields: []string{FieldCurrentA, FieldPowerW, FieldEnergyJ, FieldPowerDerived}},
		{Name: Tank,
			Tags:   []string{TagTank, TagVendor},
			Fields: []string{FieldCoolantTempC, FieldSetpointC, FieldConsumptionW, FieldDissipationKW, FieldDissipationC, FieldDissipationW, FieldMPUE, FieldPump1On, FieldPump2On, FieldPump1RPM, FieldPump2RPM, FieldCoolantInC, FieldCoolantOutC, FieldCoolantFlowLPM, FieldWaterInC, FieldWaterOutC, FieldWaterFlowLPM, FieldAlarmC, FieldControllerCPU0C, FieldControllerCPU1C, FieldMode, FieldDemo, FieldFactory, FieldTest, FieldMaintenance, FieldErrors, FieldWarnings, FieldErrorsText, FieldWarningsText}},
		{Name: Event,
			Tags:   []string{TagRun, TagKind, TagPhase, TagJob},
			Fields: []string{FieldMessage, FieldIteration, FieldExitStatus, FieldRuntimeS}},
		{Name: Iteration,
			Tags:   []string{TagRun, TagWorkload},
			Fields: []string{FieldN, FieldRuntimeS, FieldExitStatus, FieldPausedS, FieldCopyBytesPerS, FieldScaleBytesPerS, FieldAddBytesPerS, FieldTriadBytesPerS, FieldMulBytesPerS, FieldDotBytesPerS, FieldBytesPerS, FieldMaxRelErr, FieldDotRelErr, FieldArraySize, FieldPasses, FieldFlopPerS, FieldGemms, FieldMatrixOrder, FieldCuBLASVersion, FieldTokens, FieldVocab, FieldPairs, FieldIndexS, FieldTermVectorsS, FieldRetrainS, FieldNormaliseS, FieldIndexVectorsPerS, FieldTermVectorsTokensPerS, FieldTermVectorsPairsPerS, FieldRetrainTokensPerS, FieldRetrainBytesPerS, FieldNormaliseVectorsPerS, FieldNormaliseBytesPerS, FieldTokensPerS, FieldSampleS, FieldRebuildS, FieldMaxTopicPct, FieldLoglikNatsPerToken, FieldSweeps, FieldTopics, FieldDeviceBytes, FieldWords, FieldWordsPerS, FieldKeptFraction, FieldTrainS, FieldEpochs, FieldKernelS, FieldKernelWordsPerS, FieldHostWaitS, FieldLaunches, FieldStarvedLaunches, FieldClusterPurity, FieldPlantedAnalogyAdd, FieldPlantedAnalogyMul, FieldWS353Spearman, FieldWS353SimilaritySpearman, FieldWS353RelatednessSpearman, FieldSimLex999Spearman, FieldGoogleAnalogyAdd, FieldGoogleAnalogyMul, FieldReferenceAgreement}},
		{Name: Alert,
			Tags:   []string{TagRule, TagSeverity, TagMeasurement},
			Fields: []string{FieldState, FieldValue, FieldThreshold, FieldMessage}},
		{Name: JobSummary,
			Tags:   []string{TagJob, TagRun, TagHost, TagComponent, TagKind},
			Fields: []string{FieldRuntimeS, FieldPeakC, FieldPeakAtS, FieldIdleMeanC, FieldHeatIntervalSPerC, FieldEnergyJ, FieldGPUEnergyJ, FieldCPUEnergyJ, FieldThermalThrottleS, FieldPowerThrottleS}},
		{Name: CollectorTick,
			Tags:   nil,
			Fields: []string{FieldLagS, FieldMissedTicksTotal, FieldPoints}},
		{Name: CollectorSource,
			Tags:   []string{TagSource},
			Fields: []string{FieldLatencyS, FieldPoints, FieldAvailable, FieldOK, FieldErrorsTotal, FieldTimeoutsTotal, FieldStalledReads}},
		{Name: InfluxSink,
			Tags:   nil,
			Fields: []string{FieldSpoolBytes, FieldSpoolPoints, FieldOldestUnsentS, FieldSentPointsTotal, FieldRetriesTotal, FieldDirectPointsTotal, FieldDroppedPointsTotal, FieldRejectedPointsTotal, FieldOK}},
		{Name: TuneEvaluation,
			Tags:   []string{TagRun, TagSpace},
			Fields: []string{FieldRecord}},
		{Name: Hold,
			Tags:   []string{TagRun, TagComponent},
			Fields: []string{FieldSetpointC, FieldTempC, FieldUtilPct, FieldDuty, FieldPredictedC, FieldGain, FieldMode, FieldPeriodS}},
		{Name: SurveyGPU,
			Tags:   []string{TagRun, TagHost, TagGPU, TagUUID, TagModel},
			Fields: []string{FieldRecord}},
	}
}
