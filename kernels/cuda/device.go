package cuda

/*
#include "trampolines.h"
*/
import "C"

import (
	"fmt"
	"unsafe"
)

// Device attributes (CUdevice_attribute) heatsink reads.
const (
	attrClockRateKHz           = 13
	attrMultiprocessorCount    = 16
	attrMemoryClockRateKHz     = 36
	attrGlobalMemoryBusWidth   = 37
	attrL2CacheSize            = 38
	attrComputeCapabilityMajor = 75
	attrComputeCapabilityMinor = 76
	attrMaxSharedPerBlockOptin = 97
)

// DeviceInfo describes one GPU as the driver sees it.
type DeviceInfo struct {
	Ordinal      int    // the index --set device=N takes
	Name         string // "NVIDIA H100 80GB HBM3"
	UUID         string // "GPU-..." as nvidia-smi and NVML print it
	Major, Minor int    // compute capability
	SMs          int    // multiprocessors
	MemoryBytes  int64
	// L2Bytes and SharedPerBlockBytes (the opt-in maximum) size kernels.
	L2Bytes             int
	SharedPerBlockBytes int
	// ClockMHz and MemoryClockMHz are the maximum clocks the driver reports
	// (absent, zero, where it reports none); MemoryBusBits is the bus width.
	ClockMHz, MemoryClockMHz, MemoryBusBits int
}

// ComputeCapability is "9.0".
func (i DeviceInfo) ComputeCapability() string { return fmt.Sprintf("%d.%d", i.Major, i.Minor) }

// DeviceCount is the number of GPUs the driver exposes.
func (d *Driver) DeviceCount() (int, error) {
	var n C.int
	if err := d.check("cuDeviceGetCount", C.hs_pint(d.cuDeviceGetCount, &n)); err != nil {
		return 0, err
	}
	return int(n), nil
}

func (d *Driver) device(ordinal int) (C.CUdevice, error) {
	n, err := d.DeviceCount()
	if err != nil {
		return 0, err
	}
	if ordinal < 0 || ordinal >= n {
		return 0, fmt.Errorf("no GPU %d: the driver sees %d GPU(s) (0..%d)", ordinal, n, n-1)
	}
	var dev C.CUdevice
	if err := d.check("cuDeviceGet", C.hs_deviceGet(d.cuDeviceGet, &dev, C.int(ordinal))); err != nil {
		return 0, err
	}
	return dev, nil
}

func (d *Driver) attr(dev C.CUdevice, a int) (int, error) {
	var v C.int
	err := d.check("cuDeviceGetAttribute", C.hs_deviceGetAttribute(d.cuDeviceGetAttribute, &v, C.int(a), dev))
	return int(v), err
}

// Device describes GPU ordinal.
func (d *Driver) Device(ordinal int) (DeviceInfo, error) {
	dev, err := d.device(ordinal)
	if err != nil {
		return DeviceInfo{}, err
	}
	info := DeviceInfo{Ordinal: ordinal}
	var name [256]byte
	if err := d.check("cuDeviceGetName", C.hs_deviceGetName(d.cuDeviceGetName, (*C.char)(unsafe.Pointer(&name[0])), C.int(len(name)), dev)); err != nil {
		return info, err
	}
	info.Name = C.GoString((*C.char)(unsafe.Pointer(&name[0])))
	var uuid [16]byte
	if err := d.check("cuDeviceGetUuid", C.hs_deviceGetUuid(d.cuDeviceGetUuid, (*C.uchar)(unsafe.Pointer(&uuid[0])), dev)); err != nil {
		return info, err
	}
	info.UUID = fmt.Sprintf("GPU-%x-%x-%x-%x-%x", uuid[0:4], uuid[4:6], uuid[6:8], uuid[8:10], uuid[10:16])
	var mem C.size_t
	if err := d.check("cuDeviceTotalMem", C.hs_deviceTotalMem(d.cuDeviceTotalMem, &mem, dev)); err != nil {
		return info, err
	}
	info.MemoryBytes = int64(mem)
	for _, a := range []struct {
		dst  *int
		attr int
		div  int
	}{
		{&info.Major, attrComputeCapabilityMajor, 1},
		{&info.Minor, attrComputeCapabilityMinor, 1},
		{&info.SMs, attrMultiprocessorCount, 1},
		{&info.L2Bytes, attrL2CacheSize, 1},
		{&info.SharedPerBlockBytes, attrMaxSharedPerBlockOptin, 1},
		{&info.ClockMHz, attrClockRateKHz, 1000},
		{&info.MemoryClockMHz, attrMemoryClockRateKHz, 1000},
		{&info.MemoryBusBits, attrGlobalMemoryBusWidth, 1},
	} {
		v, err := d.attr(dev, a.attr)
		if err != nil {
			return info, err
		}
		*a.dst = v / a.div
	}
	return info, nil
}

// Devices describes every GPU.
func (d *Driver) Devices() ([]DeviceInfo, error) {
	n, err := d.DeviceCount()
	if err != nil {
		return nil, err
	}
	out := make([]DeviceInfo, 0, n)
	for i := 0; i < n; i++ {
		info, err := d.Device(i)
		if err != nil {
			return out, fmt.Errorf("GPU %d: %w", i, err)
		}
		out = append(out, info)
	}
	return out, nil
}
