package schema

import (
	"fmt"
	"strings"
	"sync"
)

// Kind is the line-protocol type a field is written as. InfluxDB fixes a
// field's type by the first point it stores in a shard, so a field written
// as an integer by one source and a float by another loses points; the
// table below is the one place that says which.
type Kind uint8

// The kinds of a field; the zero Kind is no kind, what Describe returns for
// a name the schema does not know.
const (
	Float Kind = iota + 1
	Int
	Uint
	Bool
	String
)

var kindNames = [...]string{"", "float", "int", "uint", "bool", "string"}

func (k Kind) String() string {
	if int(k) < len(kindNames) && k != 0 {
		return kindNames[k]
	}
	return fmt.Sprintf("Kind(%d)", k)
}

// Numeric reports whether values of the kind are numbers a threshold can
// compare; a boolean is not, though the wire could carry it as 0 or 1.
func (k Kind) Numeric() bool { return k == Float || k == Int || k == Uint }

// Unit is the physical unit of a field, spelt in its name as a suffix.
type Unit uint8

// The units of docs/data-model.md. None is a dimensionless number or a
// count (load1, gemms, mpue) or a value that is not a quantity.
const (
	None Unit = iota
	Celsius
	Watts
	Kilowatts
	Joules
	Percent
	MHz
	Bytes
	RPM
	LitresPerMinute
	CubicMetresPerHour
	Amperes
	Volts
	Seconds
	BytesPerSecond
	FlopPerSecond
	TokensPerSecond
	PairsPerSecond
	VectorsPerSecond
	WordsPerSecond
	NatsPerToken
	SecondsPerCelsius
)

// unitSpelling is each unit's name and its suffix in a field name.
var unitSpelling = [...]struct{ name, suffix string }{
	None:               {"none", ""},
	Celsius:            {"celsius", "c"},
	Watts:              {"watts", "w"},
	Kilowatts:          {"kilowatts", "kw"},
	Joules:             {"joules", "j"},
	Percent:            {"percent", "pct"},
	MHz:                {"MHz", "mhz"},
	Bytes:              {"bytes", "bytes"},
	RPM:                {"rpm", "rpm"},
	LitresPerMinute:    {"litres/minute", "lpm"},
	CubicMetresPerHour: {"m³/hour", "m3h"},
	Amperes:            {"amperes", "a"},
	Volts:              {"volts", "v"},
	Seconds:            {"seconds", "s"},
	BytesPerSecond:     {"bytes/second", "bytes_per_s"},
	FlopPerSecond:      {"flop/second", "flop_per_s"},
	TokensPerSecond:    {"tokens/second", "tokens_per_s"},
	PairsPerSecond:     {"pairs/second", "pairs_per_s"},
	VectorsPerSecond:   {"vectors/second", "vectors_per_s"},
	WordsPerSecond:     {"words/second", "words_per_s"},
	NatsPerToken:       {"nats/token", "nats_per_token"},
	SecondsPerCelsius:  {"seconds/°C", "s_per_c"},
}

func (u Unit) String() string {
	if int(u) < len(unitSpelling) {
		return unitSpelling[u].name
	}
	return fmt.Sprintf("Unit(%d)", u)
}

// Suffix is how a field name ends when it holds the unit ("c" for
// temp_c), empty for None.
func (u Unit) Suffix() string {
	if int(u) < len(unitSpelling) {
		return unitSpelling[u].suffix
	}
	return ""
}

// Units lists every unit, None first.
func Units() []Unit {
	out := make([]Unit, len(unitSpelling))
	for i := range out {
		out[i] = Unit(i)
	}
	return out
}

// Field is one field of the data model, declared once whatever the
// measurements that carry it, so that every measurement writes it as the
// same kind in the same unit.
type Field struct {
	Name string
	Kind Kind
	Unit Unit
	// Counter marks a monotonic counter (a _total field, or energy_j):
	// readers take its rate, never its value.
	Counter bool
	// Text marks a string of unbounded values (free text), which must not
	// become a label or a series per value.
	Text bool
}

// fields declares every field of table(); names_test.go checks that each
// unit agrees with the name's suffix and that docs/data-model.md's field
// table is this one.
func fields() []Field {
	return []Field{
		{Name: FieldAddBytesPerS, Kind: Float, Unit: BytesPerSecond},
		{Name: FieldAlarmC, Kind: Float, Unit: Celsius},
		{Name: FieldArraySize, Kind: Float},
		{Name: FieldAvailableBytes, Kind: Uint, Unit: Bytes},
		{Name: FieldBytesPerS, Kind: Float, Unit: BytesPerSecond},
		{Name: FieldClockEventReasons, Kind: Int},
		{Name: FieldClusterPurity, Kind: Float},
		{Name: FieldConsumptionW, Kind: Float, Unit: Watts},
		{Name: FieldControllerCPU0C, Kind: Float, Unit: Celsius},
		{Name: FieldControllerCPU1C, Kind: Float, Unit: Celsius},
		{Name: FieldCoolantFlowLPM, Kind: Float, Unit: LitresPerMinute},
		{Name: FieldCoolantInC, Kind: Float, Unit: Celsius},
		{Name: FieldCoolantOutC, Kind: Float, Unit: Celsius},
		{Name: FieldCoolantTempC, Kind: Float, Unit: Celsius},
		{Name: FieldCopyBytesPerS, Kind: Float, Unit: BytesPerSecond},
		{Name: FieldCPUEnergyJ, Kind: Float, Unit: Joules},
		{Name: FieldCritC, Kind: Float, Unit: Celsius},
		{Name: FieldCuBLASVersion, Kind: Float},
		{Name: FieldCurrentA, Kind: Float, Unit: Amperes},
		{Name: FieldDemo, Kind: Bool},
		{Name: FieldDeviceBytes, Kind: Float, Unit: Bytes},
		{Name: FieldDirectPointsTotal, Kind: Uint, Counter: true},
		{Name: FieldDissipationC, Kind: Float, Unit: Celsius},
		{Name: FieldDissipationKW, Kind: Float, Unit: Kilowatts},
		{Name: FieldDissipationW, Kind: Float, Unit: Watts},
		{Name: FieldDotBytesPerS, Kind: Float, Unit: BytesPerSecond},
		{Name: FieldDotRelErr, Kind: Float},
		{Name: FieldDroppedPointsTotal, Kind: Uint, Counter: true},
		{Name: FieldEnergyJ, Kind: Float, Unit: Joules, Counter: true},
		{Name: FieldEpochs, Kind: Float},
		{Name: FieldErrors, Kind: Int},
		{Name: FieldErrorsText, Kind: String, Text: true},
		{Name: FieldErrorsTotal, Kind: Uint, Counter: true},
		{Name: FieldExitStatus, Kind: Int},
		{Name: FieldFactory, Kind: Bool},
		{Name: FieldFanRPM, Kind: Float, Unit: RPM},
		{Name: FieldFlopPerS, Kind: Float, Unit: FlopPerSecond},
		{Name: FieldFreqMHz, Kind: Float, Unit: MHz},
		{Name: FieldGemms, Kind: Float},
		{Name: FieldGPUEnergyJ, Kind: Float, Unit: Joules},
		{Name: FieldGPUMaxC, Kind: Float, Unit: Celsius},
		{Name: FieldHeatIntervalSPerC, Kind: Float, Unit: SecondsPerCelsius},
		{Name: FieldHostWaitS, Kind: Float, Unit: Seconds},
		{Name: FieldIdleMeanC, Kind: Float, Unit: Celsius},
		{Name: FieldIdlePct, Kind: Float, Unit: Percent},
		{Name: FieldIndexS, Kind: Float, Unit: Seconds},
		{Name: FieldIndexVectorsPerS, Kind: Float, Unit: VectorsPerSecond},
		{Name: FieldIowaitPct, Kind: Float, Unit: Percent},
		{Name: FieldIteration, Kind: Int},
		{Name: FieldKeptFraction, Kind: Float},
		{Name: FieldKernelS, Kind: Float, Unit: Seconds},
		{Name: FieldKernelWordsPerS, Kind: Float, Unit: WordsPerSecond},
		{Name: FieldLagS, Kind: Float, Unit: Seconds},
		{Name: FieldLatencyS, Kind: Float, Unit: Seconds},
		{Name: FieldLaunches, Kind: Float},
		{Name: FieldLoad1, Kind: Float},
		{Name: FieldLoad15, Kind: Float},
		{Name: FieldLoad5, Kind: Float},
		{Name: FieldLoglikNatsPerToken, Kind: Float, Unit: NatsPerToken},
		{Name: FieldMaintenance, Kind: Bool},
		{Name: FieldMatrixOrder, Kind: Float},
		{Name: FieldMaxC, Kind: Float, Unit: Celsius},
		{Name: FieldMaxMHz, Kind: Float, Unit: MHz},
		{Name: FieldMaxRelErr, Kind: Float},
		{Name: FieldMaxTopicPct, Kind: Float, Unit: Percent},
		{Name: FieldMemClockMHz, Kind: Float, Unit: MHz},
		{Name: FieldMemMaxC, Kind: Float, Unit: Celsius},
		{Name: FieldMemTempC, Kind: Float, Unit: Celsius},
		{Name: FieldMemTotalBytes, Kind: Int, Unit: Bytes},
		{Name: FieldMemUsedBytes, Kind: Int, Unit: Bytes},
		{Name: FieldMemUtilPct, Kind: Float, Unit: Percent},
		{Name: FieldMessage, Kind: String, Text: true},
		{Name: FieldMinMHz, Kind: Float, Unit: MHz},
		{Name: FieldMissedTicksTotal, Kind: Uint, Counter: true},
		{Name: FieldMode, Kind: String},
		{Name: FieldMPUE, Kind: Float},
		{Name: FieldMulBytesPerS, Kind: Float, Unit: BytesPerSecond},
		{Name: FieldN, Kind: Int},
		{Name: FieldNormaliseBytesPerS, Kind: Float, Unit: BytesPerSecond},
		{Name: FieldNormaliseS, Kind: Float, Unit: Seconds},
		{Name: FieldNormaliseVectorsPerS, Kind: Float, Unit: VectorsPerSecond},
		{Name: FieldOK, Kind: Bool},
		{Name: FieldAvailable, Kind: Bool},
		{Name: FieldOldestUnsentS, Kind: Float, Unit: Seconds},
		{Name: FieldPairs, Kind: Float},
		{Name: FieldPasses, Kind: Float},
		{Name: FieldPausedS, Kind: Float, Unit: Seconds},
		{Name: FieldPeakAtS, Kind: Float, Unit: Seconds},
		{Name: FieldPeakC, Kind: Float, Unit: Celsius},
		{Name: FieldPlantedAnalogyAdd, Kind: Float},
		{Name: FieldPlantedAnalogyMul, Kind: Float},
		{Name: FieldWS353Spearman, Kind: Float},
		{Name: FieldWS353SimilaritySpearman, Kind: Float},
		{Name: FieldWS353RelatednessSpearman, Kind: Float},
		{Name: FieldSimLex999Spearman, Kind: Float},
		{Name: FieldGoogleAnalogyAdd, Kind: Float},
		{Name: FieldGoogleAnalogyMul, Kind: Float},
		{Name: FieldReferenceAgreement, Kind: Float},
		{Name: FieldPoints, Kind: Int},
		{Name: FieldPowerDerived, Kind: Bool},
		{Name: FieldPowerLimitW, Kind: Float, Unit: Watts},
		{Name: FieldPowerThrottleS, Kind: Float, Unit: Seconds},
		{Name: FieldPowerW, Kind: Float, Unit: Watts},
		{Name: FieldProcsRunning, Kind: Int},
		{Name: FieldPState, Kind: Int},
		{Name: FieldPump1On, Kind: Bool},
		{Name: FieldPump1RPM, Kind: Float, Unit: RPM},
		{Name: FieldPump2On, Kind: Bool},
		{Name: FieldPump2RPM, Kind: Float, Unit: RPM},
		{Name: FieldRebuildS, Kind: Float, Unit: Seconds},
		{Name: FieldRecord, Kind: String},
		{Name: FieldRejectedPointsTotal, Kind: Uint, Counter: true},
		{Name: FieldRetrainBytesPerS, Kind: Float, Unit: BytesPerSecond},
		{Name: FieldRetrainS, Kind: Float, Unit: Seconds},
		{Name: FieldRetrainTokensPerS, Kind: Float, Unit: TokensPerSecond},
		{Name: FieldRetriesTotal, Kind: Uint, Counter: true},
		{Name: FieldRuntimeS, Kind: Float, Unit: Seconds},
		{Name: FieldSampleS, Kind: Float, Unit: Seconds},
		{Name: FieldScaleBytesPerS, Kind: Float, Unit: BytesPerSecond},
		{Name: FieldSentPointsTotal, Kind: Uint, Counter: true},
		{Name: FieldSetpointC, Kind: Float, Unit: Celsius},
		{Name: FieldShutdownC, Kind: Float, Unit: Celsius},
		{Name: FieldSlowdownC, Kind: Float, Unit: Celsius},
		{Name: FieldSMClockMHz, Kind: Float, Unit: MHz},
		{Name: FieldSpoolBytes, Kind: Int, Unit: Bytes},
		{Name: FieldSpoolPoints, Kind: Int},
		{Name: FieldStalledReads, Kind: Int},
		{Name: FieldStarvedLaunches, Kind: Float},
		{Name: FieldState, Kind: String},
		{Name: FieldSwapUsedBytes, Kind: Uint, Unit: Bytes},
		{Name: FieldSweeps, Kind: Float},
		{Name: FieldSystemPct, Kind: Float, Unit: Percent},
		{Name: FieldTempC, Kind: Float, Unit: Celsius},
		{Name: FieldTermVectorsPairsPerS, Kind: Float, Unit: PairsPerSecond},
		{Name: FieldTermVectorsS, Kind: Float, Unit: Seconds},
		{Name: FieldTermVectorsTokensPerS, Kind: Float, Unit: TokensPerSecond},
		{Name: FieldTest, Kind: Bool},
		{Name: FieldThermalThrottleS, Kind: Float, Unit: Seconds},
		{Name: FieldThreshold, Kind: Float},
		{Name: FieldThrottlePower, Kind: Bool},
		{Name: FieldThrottleThermal, Kind: Bool},
		{Name: FieldTimeoutsTotal, Kind: Uint, Counter: true},
		{Name: FieldTokens, Kind: Float},
		{Name: FieldTokensPerS, Kind: Float, Unit: TokensPerSecond},
		{Name: FieldTopics, Kind: Float},
		{Name: FieldTotalBytes, Kind: Uint, Unit: Bytes},
		{Name: FieldTrainS, Kind: Float, Unit: Seconds},
		{Name: FieldTriadBytesPerS, Kind: Float, Unit: BytesPerSecond},
		{Name: FieldUsagePct, Kind: Float, Unit: Percent},
		{Name: FieldUsedBytes, Kind: Uint, Unit: Bytes},
		{Name: FieldUserPct, Kind: Float, Unit: Percent},
		{Name: FieldUtilPct, Kind: Float, Unit: Percent},
		{Name: FieldValue, Kind: Float},
		{Name: FieldVocab, Kind: Float},
		{Name: FieldWarnC, Kind: Float, Unit: Celsius},
		{Name: FieldWarnings, Kind: Int},
		{Name: FieldWarningsText, Kind: String, Text: true},
		{Name: FieldWaterFlowLPM, Kind: Float, Unit: LitresPerMinute},
		{Name: FieldWaterInC, Kind: Float, Unit: Celsius},
		{Name: FieldWaterOutC, Kind: Float, Unit: Celsius},
		{Name: FieldWords, Kind: Float},
		{Name: FieldWordsPerS, Kind: Float, Unit: WordsPerSecond},
	}
}

// declared is the vocabulary by name, built once on first use and never
// written after: Describe is called for every field a Prometheus scrape
// or an alert rule names, and fields() builds its table anew each call.
var declared = sync.OnceValue(func() map[string]Field {
	all := fields()
	m := make(map[string]Field, len(all))
	for _, f := range all {
		m[f.Name] = f
	}
	return m
})

// Describe returns the declaration of a field name; ok is false for a name
// no measurement of the data model has.
func Describe(name string) (Field, bool) {
	f, ok := declared()[name]
	return f, ok
}

// Fields returns the declarations of names, in their order; a name the
// schema does not know comes back with no Kind, so that a caller's test,
// not its init, reports it.
func Fields(names ...string) []Field {
	out := make([]Field, len(names))
	for i, n := range names {
		f, ok := Describe(n)
		if !ok {
			f = Field{Name: n}
		}
		out[i] = f
	}
	return out
}

// Field returns the declaration of one of the measurement's fields.
func (m Measurement) Field(name string) (Field, bool) {
	if !m.HasField(name) {
		return Field{}, false
	}
	return Describe(name)
}

// Infer reads what a field name outside the table says of itself: the unit
// its suffix spells, whether it is a counter (_total, or energy in joules)
// and whether a string is free text (_text). Open measurements (a PDU's
// generic OIDs, a generic tank's mapped fields, a workload's metrics) write
// such names; kind is what the value on the wire is. A declared field is
// returned as declared.
func Infer(name string, kind Kind) Field {
	if f, ok := Describe(name); ok {
		return f
	}
	f := Field{Name: name, Kind: kind, Unit: UnitOf(name)}
	f.Counter = strings.HasSuffix(name, "_total") || f.Unit == Joules
	f.Text = kind == String && strings.HasSuffix(name, "_text")
	return f
}

// UnitOf returns the unit a field name's suffix spells (the longest that
// matches, so bytes_per_s is a rate and not seconds), None when it spells
// none. A counter's _total is not part of the unit. A one-word name is no
// unit (a field named w or j is not watts or joules), but a rate may be
// named by its unit alone (bytes_per_s).
func UnitOf(name string) Unit {
	base := strings.TrimSuffix(name, "_total")
	best := None
	for _, u := range Units()[1:] {
		s := u.Suffix()
		whole := base == s && strings.Contains(s, "_")
		if (whole || strings.HasSuffix(base, "_"+s)) && len(s) > len(best.Suffix()) {
			best = u
		}
	}
	return best
}
