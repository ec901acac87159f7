// Package nvml samples NVIDIA GPUs through NVML (libnvidia-ml.so.1): core and
// memory-junction temperatures, power and the energy counter, utilisation,
// memory, clocks and the clock event (throttle) reasons, with the
// temperature thresholds the driver enforces.
//
// The library is opened at run time, so a machine without the NVIDIA driver
// builds and runs heatsink; there the source reports itself unavailable.
// Every NVML return code is checked: a call a GPU does not support is learnt
// once and skipped from then on (its fields are left out, never zeroed), and
// no NVML call is made unless Init succeeded, since calling into an
// uninitialised library crashes the process.
package nvml

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/bits"
	"strconv"
	"strings"
	"sync"
	"time"

	gonvml "github.com/NVIDIA/go-nvml/pkg/nvml"

	"github.com/heatsink-hpc/heatsink/point"
	"github.com/heatsink-hpc/heatsink/point/schema"
	"github.com/heatsink-hpc/heatsink/sensors/filter"
)

// Library is the part of NVML's top-level API the source uses. The system
// library (gonvml.New()) and go-nvml's mock.Interface both satisfy it.
type Library interface {
	Init() gonvml.Return
	Shutdown() gonvml.Return
	SystemGetDriverVersion() (string, gonvml.Return)
	DeviceGetCount() (int, gonvml.Return)
	DeviceGetHandleByIndex(int) (gonvml.Device, gonvml.Return)
	// Extensions gives LookupSymbol, which tells whether the installed
	// driver has a function: calling one it lacks crashes the process.
	Extensions() gonvml.ExtendedInterface
}

// Device is the part of an NVML device handle the source uses.
type Device interface {
	GetUUID() (string, gonvml.Return)
	GetName() (string, gonvml.Return)
	GetTemperature(gonvml.TemperatureSensors) (uint32, gonvml.Return)
	GetTemperatureThreshold(gonvml.TemperatureThresholds) (uint32, gonvml.Return)
	GetFieldValues([]gonvml.FieldValue) gonvml.Return
	GetPowerUsage() (uint32, gonvml.Return)
	GetTotalEnergyConsumption() (uint64, gonvml.Return)
	GetEnforcedPowerLimit() (uint32, gonvml.Return)
	GetUtilizationRates() (gonvml.Utilization, gonvml.Return)
	GetMemoryInfo() (gonvml.Memory, gonvml.Return)
	GetPerformanceState() (gonvml.Pstates, gonvml.Return)
	GetClockInfo(gonvml.ClockType) (uint32, gonvml.Return)
	GetCurrentClocksEventReasons() (uint64, gonvml.Return)
	GetCurrentClocksThrottleReasons() (uint64, gonvml.Return)
}

// DefaultLimitRefresh is how often the enforced power limit is re-read: it
// changes only when an administrator or a power manager sets it.
const DefaultLimitRefresh = 60 * time.Second

// Options configure the source. The zero value samples every GPU of the
// system's NVML library.
type Options struct {
	// Library is the NVML to use; nil opens the system's libnvidia-ml.so.1.
	Library Library
	// Filter selects GPUs by index ("0") or UUID ("GPU-...") and fields by
	// name ("mem_temp_c"); a call whose fields are all excluded is not made.
	Filter filter.Filter
	// LimitRefresh is how often the enforced power limit is re-read
	// (DefaultLimitRefresh when zero).
	LimitRefresh time.Duration
}

// Source samples every NVIDIA GPU NVML reports. It is safe for use by
// several goroutines; calls are serialised.
type Source struct {
	opts Options
	lib  Library

	mu       sync.Mutex
	inited   bool // Init succeeded and Shutdown is owed; gates every other call
	driver   string
	gpus     []*gpu
	discErrs []error // per-device discovery errors, reported with the next sample
}

// New returns an NVML source. It opens nothing until Discover.
func New(opts Options) *Source {
	lib := opts.Library
	if lib == nil {
		lib = gonvml.New()
	}
	if opts.LimitRefresh <= 0 {
		opts.LimitRefresh = DefaultLimitRefresh
	}
	return &Source{opts: opts, lib: lib}
}

// Name identifies the source.
func (s *Source) Name() string { return "nvml" }

// call is one NVML reading, as a bit so a GPU can record which calls it
// supports and which fields the configuration wants.
type call uint32

const (
	callTemp call = 1 << iota
	callMemTemp
	callPower
	callEnergy
	callPowerLimit
	callUtil
	callMemory
	callPstate
	callSMClock
	callMemClock
	callClockReasons
)

var callNames = map[call]string{
	callTemp:         "GetTemperature",
	callMemTemp:      "GetFieldValues(FI_DEV_MEMORY_TEMP)",
	callPower:        "GetPowerUsage",
	callEnergy:       "GetTotalEnergyConsumption",
	callPowerLimit:   "GetEnforcedPowerLimit",
	callUtil:         "GetUtilizationRates",
	callMemory:       "GetMemoryInfo",
	callPstate:       "GetPerformanceState",
	callSMClock:      "GetClockInfo(CLOCK_SM)",
	callMemClock:     "GetClockInfo(CLOCK_MEM)",
	callClockReasons: "GetCurrentClocks{Event,Throttle}Reasons",
}

func (c call) String() string {
	if n, ok := callNames[c]; ok {
		return n
	}
	return "call" + strconv.Itoa(bits.TrailingZeros32(uint32(c)))
}

// callFields lists the fields each call produces, for the sensor filter.
var callFields = map[call][]string{
	callTemp:         {schema.FieldTempC},
	callMemTemp:      {schema.FieldMemTempC},
	callPower:        {schema.FieldPowerW},
	callEnergy:       {schema.FieldEnergyJ},
	callPowerLimit:   {schema.FieldPowerLimitW},
	callUtil:         {schema.FieldUtilPct, schema.FieldMemUtilPct},
	callMemory:       {schema.FieldMemUsedBytes, schema.FieldMemTotalBytes},
	callPstate:       {"pstate"},
	callSMClock:      {schema.FieldSMClockMHz},
	callMemClock:     {schema.FieldMemClockMHz},
	callClockReasons: {schema.FieldClockEventReasons, schema.FieldThrottleThermal, schema.FieldThrottlePower},
}

// thresholds are read once at discovery, in field order.
var thresholds = []struct {
	field string
	kind  gonvml.TemperatureThresholds
}{
	{schema.FieldSlowdownC, gonvml.TEMPERATURE_THRESHOLD_SLOWDOWN},
	{schema.FieldShutdownC, gonvml.TEMPERATURE_THRESHOLD_SHUTDOWN},
	{schema.FieldGPUMaxC, gonvml.TEMPERATURE_THRESHOLD_GPU_MAX},
	{schema.FieldMemMaxC, gonvml.TEMPERATURE_THRESHOLD_MEM_MAX},
}

type threshold struct {
	field string
	c     float64
}

// gpu is one discovered device with what was learnt about it.
type gpu struct {
	index       int
	dev         Device
	uuid, model string
	thresholds  []threshold // supported ones only
	wanted      call        // calls whose fields pass the sensor filter
	unsupported call        // calls that answered ERROR_NOT_SUPPORTED
	eventCall   bool        // driver has nvmlDeviceGetCurrentClocksEventReasons

	limitW     float64
	limitValid bool
	limitAt    time.Time
}

// Discover opens NVML and finds the GPUs, reading what does not change
// (UUID, name, thresholds) and the enforced power limit. Called again after
// a failure, it shuts the library down and starts afresh, so a reloaded
// driver or a reset GPU is picked up. With no library, a failed Init or no
// GPU, the error wraps errors.ErrUnsupported with the reason.
func (s *Source) Discover(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	// A failed Shutdown (driver already gone) must not keep the source from
	// trying Init again; it is reported only if Init fails too.
	serr := s.shutdown()
	if ret := s.lib.Init(); ret != gonvml.SUCCESS {
		return errors.Join(&UnavailableError{Reason: initReason(ret), Return: ret}, serr)
	}
	s.inited = true
	if err := s.discover(ctx); err != nil {
		// Shut down now: the collector retries Discover later, and the
		// library must not stay open in between.
		return errors.Join(err, s.shutdown())
	}
	return nil
}

func (s *Source) discover(ctx context.Context) error {
	s.driver = ""
	if v, ret := s.lib.SystemGetDriverVersion(); ret == gonvml.SUCCESS {
		s.driver = v
	}
	n, ret := s.lib.DeviceGetCount()
	if ret != gonvml.SUCCESS {
		return fmt.Errorf("nvml: DeviceGetCount: %w", ret)
	}
	if n == 0 {
		return &UnavailableError{Reason: "no NVIDIA GPU found"}
	}
	eventCall := s.lib.Extensions().LookupSymbol("nvmlDeviceGetCurrentClocksEventReasons") == nil
	wanted := s.wantedCalls()
	var errs []error
	failed := 0
	for i := range n {
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("nvml: discover: %w", err)
		}
		g, gerrs := s.discoverGPU(i, wanted, eventCall)
		errs = append(errs, gerrs...)
		switch {
		case g != nil:
			s.gpus = append(s.gpus, g)
		case len(gerrs) > 0:
			failed++
		}
	}
	if len(s.gpus) == 0 && failed > 0 {
		return errors.Join(errs...)
	}
	if len(s.gpus) == 0 {
		return &UnavailableError{Reason: fmt.Sprintf("none of the %d GPUs matches the device filter", n)}
	}
	// What failed on a GPU that was kept is reported with the first sample.
	s.discErrs = errs
	return nil
}

// discoverGPU reads what does not change on GPU i. It returns nil and the
// errors when the GPU cannot be used, nil and no error when the device
// filter leaves it out, and the GPU with any errors of readings it lacks.
func (s *Source) discoverGPU(i int, wanted call, eventCall bool) (*gpu, []error) {
	h, ret := s.lib.DeviceGetHandleByIndex(i)
	if ret != gonvml.SUCCESS {
		return nil, []error{fmt.Errorf("nvml: gpu %d: DeviceGetHandleByIndex: %w", i, ret)}
	}
	g := &gpu{index: i, dev: h, wanted: wanted, eventCall: eventCall}
	var errs []error
	// UUID and name are tags: a failure leaves the tag out but the GPU in.
	if u, ret := h.GetUUID(); ret == gonvml.SUCCESS {
		g.uuid = u
	} else if isLost(ret) {
		return nil, []error{fmt.Errorf("nvml: gpu %d lost: GetUUID: %w", i, ret)}
	} else if !unsupported(ret) {
		errs = append(errs, fmt.Errorf("nvml: gpu %d: GetUUID: %w", i, ret))
	}
	if !s.deviceWanted(i, g.uuid) {
		return nil, nil
	}
	if m, ret := h.GetName(); ret == gonvml.SUCCESS {
		g.model = m
	} else if !unsupported(ret) {
		errs = append(errs, fmt.Errorf("nvml: gpu %d: GetName: %w", i, ret))
	}
	for _, th := range thresholds {
		if !s.fieldWanted(th.field) {
			continue
		}
		v, ret := h.GetTemperatureThreshold(th.kind)
		switch {
		case ret == gonvml.SUCCESS:
			g.thresholds = append(g.thresholds, threshold{th.field, float64(v)})
		case unsupported(ret):
		default:
			errs = append(errs, fmt.Errorf("nvml: gpu %d: GetTemperatureThreshold(%s): %w", i, th.field, ret))
		}
	}
	r := reading{g: g}
	s.readPowerLimit(&r, time.Now())
	if r.lost != nil {
		return nil, []error{r.lost}
	}
	return g, append(errs, r.errs...)
}

// Sample appends one "gpu" point per GPU. Readings that fail are left out of
// their point and their errors joined into the returned error; a GPU that is
// lost (fallen off the bus, reset pending, driver gone) contributes no point
// and an error, and with every GPU lost the source returns no points, so the
// collector re-discovers it.
func (s *Source) Sample(ctx context.Context, t time.Time, buf []point.Point) ([]point.Point, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.inited {
		return buf, errors.New("nvml: not discovered")
	}
	errs := s.discErrs
	s.discErrs = nil
	for _, g := range s.gpus {
		if err := ctx.Err(); err != nil {
			errs = append(errs, fmt.Errorf("nvml: gpu %d: %w", g.index, err))
			break
		}
		p, gerrs, lost := s.sampleGPU(g, t)
		errs = append(errs, gerrs...)
		if lost != nil {
			errs = append(errs, lost)
			continue
		}
		buf = append(buf, p)
	}
	return buf, errors.Join(errs...)
}

// reading gathers one GPU's per-call outcomes during a sample.
type reading struct {
	g    *gpu
	errs []error
	lost error
}

// want reports whether c should be called: wanted, not known unsupported,
// and the GPU not lost earlier in this sample.
func (r *reading) want(c call) bool {
	return r.lost == nil && r.g.wanted&c != 0 && r.g.unsupported&c == 0
}

// ok classifies a return code: success; not supported (learnt, skipped from
// now on); lost (the GPU's sample is abandoned); or an error for this reading.
func (r *reading) ok(c call, ret gonvml.Return) bool {
	switch {
	case ret == gonvml.SUCCESS:
		return true
	case unsupported(ret):
		r.g.unsupported |= c
	case isLost(ret):
		r.lost = fmt.Errorf("nvml: gpu %d (%s) lost: %s: %w", r.g.index, r.g.uuid, c, ret)
	default:
		r.errs = append(r.errs, fmt.Errorf("nvml: gpu %d: %s: %w", r.g.index, c, ret))
	}
	return false
}

func (s *Source) sampleGPU(g *gpu, t time.Time) (point.Point, []error, error) {
	p := point.New(schema.GPU, t)
	p.Tags = make([]point.Tag, 0, 3)
	p.Fields = make([]point.Field, 0, 20)
	p.AddTag(schema.TagGPU, strconv.Itoa(g.index))
	p.AddTag(schema.TagUUID, g.uuid)
	p.AddTag(schema.TagModel, g.model)
	add := func(key string, v float64) {
		if s.fieldWanted(key) {
			p.AddFloat(key, v)
		}
	}
	addInt := func(key string, v int64) {
		if s.fieldWanted(key) {
			p.AddInt(key, v)
		}
	}
	addBool := func(key string, v bool) {
		if s.fieldWanted(key) {
			p.AddBool(key, v)
		}
	}
	d := g.dev
	r := reading{g: g}

	if r.want(callTemp) {
		v, ret := d.GetTemperature(gonvml.TEMPERATURE_GPU)
		if r.ok(callTemp, ret) {
			add(schema.FieldTempC, float64(v))
		}
	}
	if r.want(callMemTemp) {
		if v, ok := r.memTemp(d); ok {
			add(schema.FieldMemTempC, v)
		}
	}
	if r.want(callPower) {
		v, ret := d.GetPowerUsage()
		if r.ok(callPower, ret) {
			add(schema.FieldPowerW, float64(v)/1e3)
		}
	}
	if r.want(callEnergy) {
		v, ret := d.GetTotalEnergyConsumption()
		if r.ok(callEnergy, ret) {
			add(schema.FieldEnergyJ, float64(v)/1e3)
		}
	}
	if r.want(callPowerLimit) {
		s.readPowerLimit(&r, t)
		if g.limitValid {
			add(schema.FieldPowerLimitW, g.limitW)
		}
	}
	if r.want(callUtil) {
		u, ret := d.GetUtilizationRates()
		if r.ok(callUtil, ret) {
			add(schema.FieldUtilPct, float64(u.Gpu))
			add(schema.FieldMemUtilPct, float64(u.Memory))
		}
	}
	if r.want(callMemory) {
		m, ret := d.GetMemoryInfo()
		if r.ok(callMemory, ret) {
			addInt(schema.FieldMemUsedBytes, int64(m.Used))
			addInt(schema.FieldMemTotalBytes, int64(m.Total))
		}
	}
	if r.want(callPstate) {
		ps, ret := d.GetPerformanceState()
		// PSTATE_UNKNOWN is the driver saying it has no reading.
		if r.ok(callPstate, ret) && ps != gonvml.PSTATE_UNKNOWN {
			addInt("pstate", int64(ps))
		}
	}
	if r.want(callSMClock) {
		v, ret := d.GetClockInfo(gonvml.CLOCK_SM)
		if r.ok(callSMClock, ret) {
			add(schema.FieldSMClockMHz, float64(v))
		}
	}
	if r.want(callMemClock) {
		v, ret := d.GetClockInfo(gonvml.CLOCK_MEM)
		if r.ok(callMemClock, ret) {
			add(schema.FieldMemClockMHz, float64(v))
		}
	}
	if r.want(callClockReasons) {
		var v uint64
		var ret gonvml.Return
		if g.eventCall {
			v, ret = d.GetCurrentClocksEventReasons()
		} else {
			v, ret = d.GetCurrentClocksThrottleReasons()
		}
		if r.ok(callClockReasons, ret) {
			thermal, power := schema.DecodeClockEvents(v)
			addInt(schema.FieldClockEventReasons, int64(v))
			addBool(schema.FieldThrottleThermal, thermal)
			addBool(schema.FieldThrottlePower, power)
		}
	}
	if r.lost != nil {
		return point.Point{}, r.errs, r.lost
	}
	for _, th := range g.thresholds {
		p.AddFloat(th.field, th.c)
	}
	return p, r.errs, nil
}

// readPowerLimit refreshes the cached enforced power limit when it is older
// than the refresh period. A failed read drops the cached value, so a stale
// limit is never reported past an error, and is retried on the next sample.
func (s *Source) readPowerLimit(r *reading, t time.Time) {
	g := r.g
	if !r.want(callPowerLimit) {
		return
	}
	if g.limitValid && t.Sub(g.limitAt) < s.opts.LimitRefresh && !t.Before(g.limitAt) {
		return
	}
	v, ret := g.dev.GetEnforcedPowerLimit()
	if !r.ok(callPowerLimit, ret) {
		g.limitValid = false
		return
	}
	g.limitW, g.limitValid, g.limitAt = float64(v)/1e3, true, t
}

// memTemp reads the memory-junction temperature, which NVML exposes only as
// a field value. The call can succeed while the field itself fails, so both
// return codes are checked.
func (r *reading) memTemp(d Device) (float64, bool) {
	fv := []gonvml.FieldValue{{FieldId: gonvml.FI_DEV_MEMORY_TEMP}}
	if !r.ok(callMemTemp, d.GetFieldValues(fv)) {
		return 0, false
	}
	if !r.ok(callMemTemp, gonvml.Return(fv[0].NvmlReturn)) {
		return 0, false
	}
	v, err := FieldFloat(fv[0])
	if err != nil {
		r.errs = append(r.errs, fmt.Errorf("nvml: gpu %d: %s: %w", r.g.index, callMemTemp, err))
		return 0, false
	}
	return v, true
}

// FieldFloat decodes an NVML field value by its declared type. The value is
// a C union, stored in the machine's byte order.
func FieldFloat(fv gonvml.FieldValue) (float64, error) {
	b := fv.Value[:]
	switch gonvml.ValueType(fv.ValueType) {
	case gonvml.VALUE_TYPE_DOUBLE:
		v := math.Float64frombits(binary.NativeEndian.Uint64(b))
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return 0, fmt.Errorf("field %d: not a number: %v", fv.FieldId, v)
		}
		return v, nil
	case gonvml.VALUE_TYPE_UNSIGNED_INT:
		return float64(binary.NativeEndian.Uint32(b)), nil
	case gonvml.VALUE_TYPE_UNSIGNED_LONG, gonvml.VALUE_TYPE_UNSIGNED_LONG_LONG:
		return float64(binary.NativeEndian.Uint64(b)), nil
	case gonvml.VALUE_TYPE_SIGNED_LONG_LONG:
		return float64(int64(binary.NativeEndian.Uint64(b))), nil
	case gonvml.VALUE_TYPE_SIGNED_INT:
		return float64(int32(binary.NativeEndian.Uint32(b))), nil
	case gonvml.VALUE_TYPE_UNSIGNED_SHORT:
		return float64(binary.NativeEndian.Uint16(b)), nil
	}
	return 0, fmt.Errorf("field %d: unknown value type %d", fv.FieldId, fv.ValueType)
}

// unsupported reports a return code that means the call will never work on
// this device or driver: learnt once, then the call is skipped.
func unsupported(ret gonvml.Return) bool {
	return ret == gonvml.ERROR_NOT_SUPPORTED || ret == gonvml.ERROR_FUNCTION_NOT_FOUND
}

// isLost reports a return code that means the GPU, or the driver behind it,
// is gone: nothing more can be read from it until it is re-discovered.
func isLost(ret gonvml.Return) bool {
	switch ret {
	case gonvml.ERROR_GPU_IS_LOST, gonvml.ERROR_GPU_NOT_FOUND, gonvml.ERROR_RESET_REQUIRED,
		gonvml.ERROR_DRIVER_NOT_LOADED, gonvml.ERROR_UNINITIALIZED, gonvml.ERROR_LIB_RM_VERSION_MISMATCH:
		return true
	}
	return false
}

func (s *Source) fieldWanted(field string) bool { return s.opts.Filter.Sensor(field) }

func (s *Source) wantedCalls() call {
	var w call
	for c, fields := range callFields {
		for _, f := range fields {
			if s.fieldWanted(f) {
				w |= c
				break
			}
		}
	}
	return w
}

func (s *Source) deviceWanted(index int, uuid string) bool {
	return s.opts.Filter.Device(strconv.Itoa(index), uuid)
}

// Describe lists the driver and each GPU with its limits, for
// `heatsink sensors` and run.json.
func (s *Source) Describe() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	if s.driver != "" {
		out = append(out, "driver "+s.driver)
	}
	for _, g := range s.gpus {
		var b strings.Builder
		fmt.Fprintf(&b, "gpu%d %s %s", g.index, g.model, g.uuid)
		var limits []string
		for _, th := range g.thresholds {
			limits = append(limits, fmt.Sprintf("%s=%g", th.field, th.c))
		}
		if g.limitValid {
			limits = append(limits, fmt.Sprintf("power_limit_w=%g", g.limitW))
		}
		if len(limits) > 0 {
			b.WriteString(": " + strings.Join(limits, " "))
		}
		out = append(out, b.String())
	}
	return out
}

// Close shuts NVML down. It is safe to call more than once.
func (s *Source) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.shutdown()
}

// shutdown releases the library if Init succeeded and forgets the device
// handles, which are invalid once it is shut down.
func (s *Source) shutdown() error {
	s.gpus, s.discErrs = nil, nil
	if !s.inited {
		return nil
	}
	s.inited = false
	if ret := s.lib.Shutdown(); ret != gonvml.SUCCESS {
		return fmt.Errorf("nvml: Shutdown: %w", ret)
	}
	return nil
}

// UnavailableError says why NVML cannot be used on this machine. It wraps
// errors.ErrUnsupported, so the collector retries it at its longest backoff,
// and the NVML return code.
type UnavailableError struct {
	Reason string
	Return gonvml.Return
}

func (e *UnavailableError) Error() string { return "nvml: " + e.Reason }

// Unwrap gives errors.ErrUnsupported and the return code (when not SUCCESS).
func (e *UnavailableError) Unwrap() []error {
	if e.Return == gonvml.SUCCESS {
		return []error{errors.ErrUnsupported}
	}
	return []error{errors.ErrUnsupported, e.Return}
}

// initReason turns Init's return code into what a site engineer would check.
func initReason(ret gonvml.Return) string {
	switch ret {
	case gonvml.ERROR_LIBRARY_NOT_FOUND:
		return "libnvidia-ml.so.1 not found (is the NVIDIA driver installed?)"
	case gonvml.ERROR_DRIVER_NOT_LOADED:
		return "the NVIDIA kernel driver is not loaded"
	case gonvml.ERROR_NO_PERMISSION:
		return "no permission to open the NVIDIA device files"
	case gonvml.ERROR_LIB_RM_VERSION_MISMATCH:
		return "libnvidia-ml and the kernel driver versions differ (driver updated without reboot?)"
	}
	return "Init: " + ret.Error()
}
