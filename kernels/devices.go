package kernels

import (
	"errors"
	"fmt"
	"io"
	"runtime"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/heatsink-hpc/heatsink/kernels/cublas"
	"github.com/heatsink-hpc/heatsink/kernels/cuda"
)

// Inventory is what GPU work this machine can do: the driver, its GPUs and
// whether cuBLAS is there. Absent parts carry the reason instead.
type Inventory struct {
	DriverVersion string // "13.0"; empty without a driver
	DriverPath    string
	DriverErr     error // why there is no driver, or why listing failed
	Devices       []cuda.DeviceInfo

	CublasVersion string // "13.0.2"; empty without cuBLAS
	CublasPath    string
	CublasErr     error
}

// Discover takes the inventory. It never fails: what is missing is recorded.
func Discover() Inventory {
	var inv Inventory
	drv, err := cuda.Load()
	if err != nil {
		inv.DriverErr = err
	} else {
		inv.DriverVersion, inv.DriverPath = drv.VersionString(), drv.Path()
		inv.Devices, inv.DriverErr = drv.Devices()
	}
	lib, err := cublas.Open()
	if err != nil {
		inv.CublasErr = err
		return inv
	}
	inv.CublasPath = lib.Path()
	v, err := lib.Version()
	if err != nil {
		inv.CublasErr = err
		return inv
	}
	inv.CublasVersion = cublas.VersionString(v)
	return inv
}

// WriteTable prints the inventory for `heatsink gpus` and `heatsink
// workloads`: one line per GPU with what --set device=N selects.
func (inv Inventory) WriteTable(w io.Writer) error {
	if inv.DriverVersion == "" {
		_, err := fmt.Fprintf(w, "GPUs: none usable (%v); GPU workloads take --set device=cpu\n", inv.DriverErr)
		return err
	}
	fmt.Fprintf(w, "CUDA driver %s (%s)\n", inv.DriverVersion, inv.DriverPath)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "DEVICE\tNAME\tCOMPUTE\tSMS\tMEMORY\tMAX CLOCK\tUUID")
	for _, d := range inv.Devices {
		fmt.Fprintf(tw, "%d\t%s\t%s\t%d\t%.1f GiB\t%d MHz\t%s\n", d.Ordinal, d.Name, d.ComputeCapability(),
			d.SMs, float64(d.MemoryBytes)/(1<<30), d.ClockMHz, d.UUID)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if len(inv.Devices) == 0 {
		fmt.Fprintln(w, "(no GPUs)")
	}
	if inv.DriverErr != nil {
		fmt.Fprintf(w, "listing stopped: %v\n", inv.DriverErr)
	}
	if inv.CublasVersion != "" {
		_, err := fmt.Fprintf(w, "cuBLAS %s (%s): dgemm uses it\n", inv.CublasVersion, inv.CublasPath)
		return err
	}
	reason := inv.CublasErr
	if reason == nil {
		reason = errors.New("unknown")
	}
	_, err := fmt.Fprintf(w, "cuBLAS: not available (%v): dgemm uses its built-in kernel\n", reason)
	return err
}

// ListDevices describes the CPU and every GPU for `heatsink workloads` (a
// workload's Devices): withBLAS adds whether cuBLAS is there. The error says
// why there are no GPUs.
func ListDevices(withBLAS bool) ([]string, error) {
	out := []string{fmt.Sprintf("cpu: %d cores", runtime.NumCPU())}
	inv := Discover()
	for _, d := range inv.Devices {
		s := fmt.Sprintf("%d: %s (compute %s, %d SMs, %.1f GiB)", d.Ordinal, d.Name, d.ComputeCapability(),
			d.SMs, float64(d.MemoryBytes)/(1<<30))
		if withBLAS {
			if inv.CublasVersion != "" {
				s += ", cuBLAS " + inv.CublasVersion
			} else {
				s += ", built-in kernel (no cuBLAS)"
			}
		}
		out = append(out, s)
	}
	return out, inv.DriverErr
}

// ParseDevice reads a device parameter: a GPU index, or "cpu" (returned as
// -1).
func ParseDevice(s string) (int, error) {
	if strings.EqualFold(s, "cpu") {
		return -1, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("parameter device=%q: want a GPU index (0, 1, ...; see heatsink gpus) or cpu", s)
	}
	return n, nil
}
