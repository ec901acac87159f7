package nvml

import (
	"encoding/binary"
	"fmt"

	gonvml "github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock"
)

// go-nvml v0.13.0-1 ships only a DGX A100 preset (mock/dgxa100), and that
// sets up MIG and identity calls, not telemetry. dgxH100 is the H100
// counterpart built on the same generated mocks: eight H100 80GB HBM3 GPUs
// under load, with the thresholds and limits an H100 SXM5 reports (the
// device machine read slowdown 89 °C, shutdown 95 °C, memory max 95 °C and a
// 700 W cap).
type dgxH100 struct {
	mock.Interface
	mock.ExtendedInterface
	Devices []*mock.Device
	// Symbols the driver lacks, for LookupSymbol.
	Missing map[string]bool
}

// h100 holds one GPU's readings; the mock's functions read them, so a test
// can change a value between samples.
type h100 struct {
	UUID, Name          string
	TempC, MemTempC     uint32
	PowerMW, LimitMW    uint32
	EnergyMJ            uint64
	Util                gonvml.Utilization
	Mem                 gonvml.Memory
	Pstate              gonvml.Pstates
	SMClock, MemClock   uint32
	Reasons             uint64
	Thresholds          map[gonvml.TemperatureThresholds]uint32
	MemTempType         gonvml.ValueType
	MemTempFieldReturns gonvml.Return
}

const h100Total = 85520809984 // 81559 MiB, what an H100 80GB HBM3 reports

func newH100State(i int) *h100 {
	return &h100{
		UUID:     fmt.Sprintf("GPU-5b1c3f2e-9a4d-4c1e-8f00-00000000000%d", i),
		Name:     "NVIDIA H100 80GB HBM3",
		TempC:    70 + uint32(i),
		MemTempC: 78 + uint32(i),
		PowerMW:  699512,
		LimitMW:  700000,
		EnergyMJ: 123456789012 + uint64(i),
		Util:     gonvml.Utilization{Gpu: 100, Memory: 45},
		Mem:      gonvml.Memory{Total: h100Total, Used: 10 << 30, Free: h100Total - 10<<30},
		Pstate:   gonvml.PSTATE_0,
		SMClock:  1755,
		MemClock: 2619,
		Reasons:  gonvml.ClocksEventReasonSwPowerCap,
		Thresholds: map[gonvml.TemperatureThresholds]uint32{
			gonvml.TEMPERATURE_THRESHOLD_SLOWDOWN: 89,
			gonvml.TEMPERATURE_THRESHOLD_SHUTDOWN: 95,
			gonvml.TEMPERATURE_THRESHOLD_GPU_MAX:  87,
			gonvml.TEMPERATURE_THRESHOLD_MEM_MAX:  95,
		},
		MemTempType: gonvml.VALUE_TYPE_UNSIGNED_INT,
	}
}

// newDGXH100 returns a server with n H100s and their states.
func newDGXH100(n int) (*dgxH100, []*h100) {
	s := &dgxH100{Missing: map[string]bool{}}
	states := make([]*h100, n)
	for i := range n {
		states[i] = newH100State(i)
		s.Devices = append(s.Devices, newH100Device(i, states[i]))
	}
	s.ExtensionsFunc = func() gonvml.ExtendedInterface { return &s.ExtendedInterface }
	s.LookupSymbolFunc = func(name string) error {
		if s.Missing[name] {
			return fmt.Errorf("undefined symbol: %s", name)
		}
		return nil
	}
	s.InitFunc = func() gonvml.Return { return gonvml.SUCCESS }
	s.ShutdownFunc = func() gonvml.Return { return gonvml.SUCCESS }
	s.SystemGetDriverVersionFunc = func() (string, gonvml.Return) { return "580.65.06", gonvml.SUCCESS }
	s.DeviceGetCountFunc = func() (int, gonvml.Return) { return len(s.Devices), gonvml.SUCCESS }
	s.DeviceGetHandleByIndexFunc = func(i int) (gonvml.Device, gonvml.Return) {
		if i < 0 || i >= len(s.Devices) {
			return nil, gonvml.ERROR_INVALID_ARGUMENT
		}
		return s.Devices[i], gonvml.SUCCESS
	}
	return s, states
}

func newH100Device(i int, st *h100) *mock.Device {
	d := &mock.Device{}
	d.GetIndexFunc = func() (int, gonvml.Return) { return i, gonvml.SUCCESS }
	d.GetUUIDFunc = func() (string, gonvml.Return) { return st.UUID, gonvml.SUCCESS }
	d.GetNameFunc = func() (string, gonvml.Return) { return st.Name, gonvml.SUCCESS }
	d.GetTemperatureFunc = func(s gonvml.TemperatureSensors) (uint32, gonvml.Return) {
		if s != gonvml.TEMPERATURE_GPU {
			return 0, gonvml.ERROR_INVALID_ARGUMENT
		}
		return st.TempC, gonvml.SUCCESS
	}
	d.GetTemperatureThresholdFunc = func(k gonvml.TemperatureThresholds) (uint32, gonvml.Return) {
		v, ok := st.Thresholds[k]
		if !ok {
			return 0, gonvml.ERROR_NOT_SUPPORTED
		}
		return v, gonvml.SUCCESS
	}
	d.GetFieldValuesFunc = func(fvs []gonvml.FieldValue) gonvml.Return {
		for j := range fvs {
			if fvs[j].FieldId != gonvml.FI_DEV_MEMORY_TEMP {
				fvs[j].NvmlReturn = uint32(gonvml.ERROR_NOT_SUPPORTED)
				continue
			}
			fvs[j].NvmlReturn = uint32(st.MemTempFieldReturns)
			fvs[j].ValueType = uint32(st.MemTempType)
			binary.NativeEndian.PutUint32(fvs[j].Value[:], st.MemTempC)
		}
		return gonvml.SUCCESS
	}
	d.GetPowerUsageFunc = func() (uint32, gonvml.Return) { return st.PowerMW, gonvml.SUCCESS }
	d.GetTotalEnergyConsumptionFunc = func() (uint64, gonvml.Return) { return st.EnergyMJ, gonvml.SUCCESS }
	d.GetEnforcedPowerLimitFunc = func() (uint32, gonvml.Return) { return st.LimitMW, gonvml.SUCCESS }
	d.GetUtilizationRatesFunc = func() (gonvml.Utilization, gonvml.Return) { return st.Util, gonvml.SUCCESS }
	d.GetMemoryInfoFunc = func() (gonvml.Memory, gonvml.Return) { return st.Mem, gonvml.SUCCESS }
	d.GetPerformanceStateFunc = func() (gonvml.Pstates, gonvml.Return) { return st.Pstate, gonvml.SUCCESS }
	d.GetClockInfoFunc = func(c gonvml.ClockType) (uint32, gonvml.Return) {
		switch c {
		case gonvml.CLOCK_SM:
			return st.SMClock, gonvml.SUCCESS
		case gonvml.CLOCK_MEM:
			return st.MemClock, gonvml.SUCCESS
		}
		return 0, gonvml.ERROR_INVALID_ARGUMENT
	}
	d.GetCurrentClocksEventReasonsFunc = func() (uint64, gonvml.Return) { return st.Reasons, gonvml.SUCCESS }
	d.GetCurrentClocksThrottleReasonsFunc = func() (uint64, gonvml.Return) { return st.Reasons, gonvml.SUCCESS }
	return d
}
