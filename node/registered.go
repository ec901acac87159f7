package node

// Every source, sink and configuration section compiled into heatsink:
// each package registers itself (its register.go), so adding a source or a
// sink is its package and one line here.
import (
	_ "github.com/heatsink-hpc/heatsink/alerts"
	_ "github.com/heatsink-hpc/heatsink/collectors" // the stdout sink
	_ "github.com/heatsink-hpc/heatsink/collectors/influx"
	_ "github.com/heatsink-hpc/heatsink/sensors/cpufreq"
	_ "github.com/heatsink-hpc/heatsink/sensors/host"
	_ "github.com/heatsink-hpc/heatsink/sensors/hwmon"
	_ "github.com/heatsink-hpc/heatsink/sensors/nvme"
	_ "github.com/heatsink-hpc/heatsink/sensors/nvml"
	_ "github.com/heatsink-hpc/heatsink/sensors/pdu"
	_ "github.com/heatsink-hpc/heatsink/sensors/rapl"
	_ "github.com/heatsink-hpc/heatsink/sensors/tank"
	_ "github.com/heatsink-hpc/heatsink/workloads"
)
