// Command nvmlcalls times, on a GPU node, each NVML call heatsink's nvml
// source makes per tick (sensors/nvml), so that the agent's CPU per second
// can be laid against nvidia-smi's call by call: wall and CPU time per
// call, over N calls on GPU 0.
//
//	nvmlcalls [-n 200]
package main

import (
	"flag"
	"fmt"
	"log"
	"os"
	"runtime"
	"syscall"
	"text/tabwriter"
	"time"

	gonvml "github.com/NVIDIA/go-nvml/pkg/nvml"
)

// threadCPU is the calling thread's CPU time (user and system).
func threadCPU() time.Duration {
	var ru syscall.Rusage
	const rusageThread = 1 // RUSAGE_THREAD
	if err := syscall.Getrusage(rusageThread, &ru); err != nil {
		log.Fatalf("getrusage: %v", err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func main() {
	n := flag.Int("n", 200, "calls of each kind")
	flag.Parse()
	// One thread for the whole run, so RUSAGE_THREAD counts every call.
	runtime.LockOSThread()
	lib := gonvml.New()
	t0, c0 := time.Now(), threadCPU()
	if ret := lib.Init(); ret != gonvml.SUCCESS {
		log.Fatalf("nvmlInit: %v", ret)
	}
	fmt.Printf("nvmlInit: %v wall, %v CPU\n", time.Since(t0), threadCPU()-c0)
	dev, ret := lib.DeviceGetHandleByIndex(0)
	if ret != gonvml.SUCCESS {
		log.Fatalf("DeviceGetHandleByIndex(0): %v", ret)
	}
	calls := []struct {
		name string
		fn   func() gonvml.Return
	}{
		{"GetTemperature(GPU)", func() gonvml.Return { _, r := dev.GetTemperature(gonvml.TEMPERATURE_GPU); return r }},
		{"GetFieldValues(MEMORY_TEMP)", func() gonvml.Return {
			return dev.GetFieldValues([]gonvml.FieldValue{{FieldId: gonvml.FI_DEV_MEMORY_TEMP}})
		}},
		{"GetPowerUsage", func() gonvml.Return { _, r := dev.GetPowerUsage(); return r }},
		{"GetTotalEnergyConsumption", func() gonvml.Return { _, r := dev.GetTotalEnergyConsumption(); return r }},
		{"GetEnforcedPowerLimit", func() gonvml.Return { _, r := dev.GetEnforcedPowerLimit(); return r }},
		{"GetUtilizationRates", func() gonvml.Return { _, r := dev.GetUtilizationRates(); return r }},
		{"GetMemoryInfo", func() gonvml.Return { _, r := dev.GetMemoryInfo(); return r }},
		{"GetPerformanceState", func() gonvml.Return { _, r := dev.GetPerformanceState(); return r }},
		{"GetClockInfo(SM)", func() gonvml.Return { _, r := dev.GetClockInfo(gonvml.CLOCK_SM); return r }},
		{"GetClockInfo(MEM)", func() gonvml.Return { _, r := dev.GetClockInfo(gonvml.CLOCK_MEM); return r }},
		{"GetCurrentClocksEventReasons", func() gonvml.Return { _, r := dev.GetCurrentClocksEventReasons(); return r }},
	}
	tw := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "call\twall_us\tcpu_us\tresult\t\n")
	var sumWall, sumCPU time.Duration
	for _, c := range calls {
		c.fn() // first call outside the timing
		t0, c0 := time.Now(), threadCPU()
		var ret gonvml.Return
		for i := 0; i < *n; i++ {
			ret = c.fn()
		}
		wall, cpu := time.Since(t0)/time.Duration(*n), (threadCPU()-c0)/time.Duration(*n)
		sumWall, sumCPU = sumWall+wall, sumCPU+cpu
		fmt.Fprintf(tw, "%s\t%.1f\t%.1f\t%v\t\n", c.name, float64(wall)/1e3, float64(cpu)/1e3, ret)
	}
	fmt.Fprintf(tw, "one tick's calls\t%.1f\t%.1f\t\t\n", float64(sumWall)/1e3, float64(sumCPU)/1e3)
	tw.Flush()
	lib.Shutdown()
}
