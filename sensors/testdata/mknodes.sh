#!/usr/bin/env bash
# Writes the fixture machines the sensor sources are tested and benchmarked
# against: sysfs and procfs trees laid out as Linux lays them out (class
# directories of relative symlinks into /sys/devices, hwmon glue
# directories, cpufreq policy links), with values taken from real machines
# of each kind. The trees are committed; rerun this after editing it:
#
#   sensors/testdata/mknodes.sh
#
#   intel-node  a 6-core Intel desktop: acpitz, coretemp (Package id 0,
#               Core 0-5), a Nuvoton Super I/O with fans, an NVMe drive
#               (Composite, Sensor 1, Sensor 2) with its hwmon under the
#               controller, intel_pstate, RAPL package/core/uncore/psys.
#   amd-node    an 8-core AMD desktop: k10temp (Tctl, Tccd1, Tccd2) under
#               its PCI device, an amdgpu card (edge, junction, mem, fan,
#               power), an NVMe drive in the older layout (hwmon under the
#               PCI device), an it87 Super I/O in the old-driver layout
#               (sensor files in hwmonN/device/), acpi-cpufreq, RAPL.
#   bench-node  a 2-socket, 2x32-core, 128-thread Xeon server, ~200 readings
#               a tick: coretemp per core, cpufreq per thread, RAPL
#               package/dram per socket, one NVMe drive.
set -euo pipefail
cd "$(dirname "$0")"

# attr FILE VALUE: a sysfs attribute, as the kernel formats it (value, newline).
attr() { mkdir -p "$(dirname "$1")"; printf '%s\n' "$2" >"$1"; }
# link TARGET NAME: a relative symlink, as kernfs makes them.
link() { mkdir -p "$(dirname "$2")"; ln -sfn "$1" "$2"; }
# up DIR: the "../" chain from DIR (relative to the sysfs root) to the root.
up() { local d=$1 s=""; while [ "$d" != . ]; do s="../$s"; d=$(dirname "$d"); done; printf '%s' "$s"; }

# hwmon SYS N PARENT GLUE NAME: registers hwmonN under the device PARENT
# (relative to SYS). GLUE=1 for a parent that is not a class device (platform,
# PCI): the kernel then puts hwmonN in a PARENT/hwmon/ glue directory.
# Prints the hwmon directory (relative to SYS).
hwmon() {
	local sys=$1 n=$2 parent=$3 glue=$4 name=$5 dir devlink
	if [ "$glue" = 1 ]; then
		dir=$parent/hwmon/hwmon$n
		devlink=../../../$(basename "$parent")
	else
		dir=$parent/hwmon$n
		devlink=../../$(basename "$parent")
	fi
	link "../../$dir" "$sys/class/hwmon/hwmon$n"
	link "$devlink" "$sys/$dir/device"
	link "$(up "$dir")class/hwmon" "$sys/$dir/subsystem"
	[ -z "$name" ] || attr "$sys/$dir/name" "$name"
	printf '%s' "$dir"
}

# temp DIR N INPUT [LABEL [MAX [CRIT]]]: a temperature channel (millidegrees).
temp() {
	local d=$1 n=$2
	attr "$d/temp${n}_input" "$3"
	[ -z "${4:-}" ] || attr "$d/temp${n}_label" "$4"
	[ -z "${5:-}" ] || attr "$d/temp${n}_max" "$5"
	[ -z "${6:-}" ] || attr "$d/temp${n}_crit" "$6"
}

# coretemp SYS N SOCKET CORES: Intel coretemp for one package: temp1 is the
# package, tempK the core with core_id K-2.
coretemp() {
	local sys=$1 n=$2 sock=$3 cores=$4 d c
	d=$sys/$(hwmon "$sys" "$n" devices/platform/coretemp.$sock 1 coretemp)
	temp "$d" 1 $((46000 + sock * 1000)) "Package id $sock" 84000 94000
	attr "$d/temp1_crit_alarm" 0
	for ((c = 0; c < cores; c++)); do
		temp "$d" $((c + 2)) $((38000 + (c * 7 % 11) * 1000 + sock * 1000)) "Core $c" 84000 94000
		attr "$d/temp$((c + 2))_crit_alarm" 0
	done
}

# nvme_ctrl SYS CTRL PCIPATH MODEL SERIAL: /sys/class/nvme/nvmeX and its device.
nvme_ctrl() {
	local sys=$1 ctrl=$2 pci=$3 dir
	dir=$pci/nvme/$ctrl
	link "../../$dir" "$sys/class/nvme/$ctrl"
	link "../../../$(basename "$pci")" "$sys/$dir/device"
	link "$(up "$dir")class/nvme" "$sys/$dir/subsystem"
	attr "$sys/$dir/model" "$4"
	attr "$sys/$dir/serial" "$5"
	attr "$sys/$dir/firmware_rev" "2B2QEXM7"
	attr "$sys/$dir/state" live
	attr "$sys/$dir/transport" pcie
	printf '%s' "$dir"
}

# nvme_temps DIR: a drive reporting Composite and two sensors; the unset
# thresholds of the sensors read as 65535 K and 0 K, as real drives show.
nvme_temps() {
	local d=$1
	temp "$d" 1 38850 Composite 81850 84850
	attr "$d/temp1_min" -273150
	attr "$d/temp1_alarm" 0
	temp "$d" 2 38850 "Sensor 1" 65261850
	attr "$d/temp2_min" -273150
	temp "$d" 3 41850 "Sensor 2" 65261850
	attr "$d/temp3_min" -273150
}

# cpufreq SYS CPU DRIVER CUR MIN MAX HWMIN HWMAX: cpuN/cpufreq -> ../cpufreq/policyN.
cpufreq() {
	local sys=$1 cpu=$2 p
	p=$sys/devices/system/cpu/cpufreq/policy$cpu
	link "../cpufreq/policy$cpu" "$sys/devices/system/cpu/cpu$cpu/cpufreq"
	attr "$p/scaling_driver" "$3"
	attr "$p/scaling_governor" performance
	attr "$p/scaling_cur_freq" "$4"
	attr "$p/scaling_min_freq" "$5"
	attr "$p/scaling_max_freq" "$6"
	attr "$p/cpuinfo_min_freq" "$7"
	attr "$p/cpuinfo_max_freq" "$8"
	attr "$p/affected_cpus" "$cpu"
	attr "$p/related_cpus" "$cpu"
}

# cpus SYS N: cpu0..cpuN-1 with the files beside cpufreq that every kernel has.
cpus() {
	local sys=$1 n=$2 c
	attr "$sys/devices/system/cpu/online" "0-$((n - 1))"
	attr "$sys/devices/system/cpu/possible" "0-$((n - 1))"
	attr "$sys/devices/system/cpu/present" "0-$((n - 1))"
	for ((c = 1; c < n; c++)); do attr "$sys/devices/system/cpu/cpu$c/online" 1; done
}

# rapl_zone SYS ID NAME ENERGY RANGE: a powercap zone; ID is intel-rapl:P or intel-rapl:P:S.
rapl_zone() {
	local sys=$1 id=$2 dir
	if [[ $id == intel-rapl:*:* ]]; then
		dir=devices/virtual/powercap/intel-rapl/${id%:*}/$id
	else
		dir=devices/virtual/powercap/intel-rapl/$id
	fi
	link "../../$dir" "$sys/class/powercap/$id"
	link "$(up "$dir")class/powercap" "$sys/$dir/subsystem"
	attr "$sys/$dir/name" "$3"
	attr "$sys/$dir/energy_uj" "$4"
	attr "$sys/$dir/max_energy_range_uj" "$5"
	attr "$sys/$dir/enabled" 1
	attr "$sys/$dir/constraint_0_name" long_term
}

rapl_control() {
	local sys=$1 dir=devices/virtual/powercap/intel-rapl
	link "../../$dir" "$sys/class/powercap/intel-rapl"
	attr "$sys/$dir/enabled" 1
}

# proc ROOT NCPU MEMKB: /proc/stat, /proc/meminfo and /proc/loadavg.
proc() {
	local p=$1/proc n=$2 mem=$3 c
	mkdir -p "$p"
	local lines="" u=0 s=0 i=0
	for ((c = 0; c < n; c++)); do
		lines+=$(printf 'cpu%d %d 112 %d %d 2301 0 803 0 0 0' "$c" $((84113 + c * 31)) $((21077 + c * 7)) $((1730442 - c * 38)))$'\n'
		u=$((u + 84113 + c * 31)) s=$((s + 21077 + c * 7)) i=$((i + 1730442 - c * 38))
	done
	{
		printf 'cpu  %d %d %d %d %d 0 %d 0 0 0\n' "$u" $((n * 112)) "$s" "$i" $((n * 2301)) $((n * 803))
		printf '%s' "$lines"
		printf 'intr 181093720 9 0 0 0 0 0 0 0 1 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0\n'
		printf 'ctxt 316422970\nbtime 1732150011\nprocesses 391102\nprocs_running 2\nprocs_blocked 0\n'
		printf 'softirq 72391044 4 20143312 12 1290833 201944 0 310284 31001390 0 19443265\n'
	} >"$p/stat"
	cat >"$p/meminfo" <<EOF
MemTotal:       $mem kB
MemFree:        $((mem * 6 / 10)) kB
MemAvailable:   $((mem * 8 / 10)) kB
Buffers:          412388 kB
Cached:         $((mem / 5)) kB
SwapCached:            0 kB
Active:          4122328 kB
Inactive:        3300116 kB
Active(anon):    2150024 kB
Inactive(anon):     2004 kB
Active(file):    1972304 kB
Inactive(file):  3298112 kB
Unevictable:       20456 kB
Mlocked:           19456 kB
SwapTotal:       8388604 kB
SwapFree:        8126460 kB
Zswap:                 0 kB
Zswapped:              0 kB
Dirty:               256 kB
Writeback:             0 kB
AnonPages:       2151212 kB
Mapped:           612860 kB
Shmem:             58856 kB
KReclaimable:     402976 kB
Slab:             627980 kB
SReclaimable:     402976 kB
SUnreclaim:       225004 kB
KernelStack:       21544 kB
PageTables:        32388 kB
CommitLimit:    $((mem / 2 + 8388604)) kB
Committed_AS:    9844372 kB
VmallocTotal:   34359738367 kB
VmallocUsed:      140032 kB
VmallocChunk:          0 kB
Percpu:            $((n * 1024)) kB
HardwareCorrupted:     0 kB
AnonHugePages:     43008 kB
HugePages_Total:       0
HugePages_Free:        0
HugePages_Rsvd:        0
HugePages_Surp:        0
Hugepagesize:       2048 kB
Hugetlb:               0 kB
DirectMap4k:      603968 kB
DirectMap2M:    15028224 kB
DirectMap1G:    $((mem / 1048576 * 1048576)) kB
EOF
	printf '0.52 0.61 0.58 2/1183 391102\n' >"$p/loadavg"
}

intel_node() {
	local root=intel-node sys=intel-node/sys d c
	rm -rf "$root"
	d=$sys/$(hwmon "$sys" 0 devices/virtual/thermal/thermal_zone0 0 acpitz)
	temp "$d" 1 27800 "" "" 119000
	coretemp "$sys" 1 0 6
	d=$sys/$(hwmon "$sys" 2 "$(nvme_ctrl "$sys" nvme0 devices/pci0000:00/0000:00:1d.0/0000:3d:00.0 \
		"Samsung SSD 970 EVO Plus 1TB" S4EWNX0N812345A)" 0 nvme)
	nvme_temps "$d"
	d=$sys/$(hwmon "$sys" 3 devices/platform/nct6775.656 1 nct6798)
	temp "$d" 1 34000 SYSTIN 80000
	temp "$d" 2 38500 CPUTIN 80000
	attr "$d/fan1_input" 0
	attr "$d/fan2_input" 1176
	attr "$d/fan2_min" 0
	attr "$d/in0_input" 1000
	attr "$d/in1_input" 1016
	cpus "$sys" 12
	for ((c = 0; c < 12; c++)); do
		cpufreq "$sys" "$c" intel_pstate $((4300000 + c * 12345)) 800000 4600000 800000 4600000
	done
	rapl_control "$sys"
	rapl_zone "$sys" intel-rapl:0 package-0 72509836719 262143328850
	rapl_zone "$sys" intel-rapl:0:0 core 30091826145 262143328850
	rapl_zone "$sys" intel-rapl:0:1 uncore 1045711282 262143328850
	rapl_zone "$sys" intel-rapl:1 psys 91850236412 262143328850
	proc "$root" 12 32657080
}

amd_node() {
	local root=amd-node sys=amd-node/sys d c nv
	rm -rf "$root"
	d=$sys/$(hwmon "$sys" 2 devices/pci0000:00/0000:00:18.3 1 k10temp)
	temp "$d" 1 48875 Tctl
	temp "$d" 3 41000 Tccd1
	temp "$d" 4 40250 Tccd2
	d=$sys/$(hwmon "$sys" 3 devices/pci0000:00/0000:00:03.1/0000:0a:00.0/0000:0b:00.0/0000:0c:00.0 1 amdgpu)
	temp "$d" 1 41000 edge "" 100000
	temp "$d" 2 43000 junction "" 110000
	temp "$d" 3 48000 mem "" 100000
	attr "$d/fan1_input" 0
	attr "$d/fan1_max" 3300
	attr "$d/power1_input" 11000000
	attr "$d/power1_cap" 263000000
	attr "$d/in0_input" 18
	# NVMe before the hwmon node moved under the controller: hwmon1 is a
	# child of the PCI function, and /sys/class/nvme/nvme0 has none.
	nv=devices/pci0000:00/0000:00:01.1/0000:01:00.0
	nvme_ctrl "$sys" nvme0 "$nv" WDS100T3X0C-00SJG0 20412K801234 >/dev/null
	d=$sys/$(hwmon "$sys" 1 "$nv" 1 nvme)
	temp "$d" 1 35850 Composite 80850 84850
	attr "$d/temp1_min" -273150
	# it87 in the old driver layout: hwmon4 holds only its links; the name
	# and the sensor files are attributes of the platform device.
	hwmon "$sys" 4 devices/platform/it87.2608 1 "" >/dev/null
	d=$sys/devices/platform/it87.2608
	attr "$d/name" it8688
	temp "$d" 1 36000
	temp "$d" 2 45000
	attr "$d/fan1_input" 1350
	attr "$d/fan2_input" 0
	cpus "$sys" 16
	for ((c = 0; c < 16; c++)); do
		cpufreq "$sys" "$c" acpi-cpufreq $((3593000 + (c % 3) * 100000)) 2200000 3800000 2200000 3800000
	done
	rapl_control "$sys"
	rapl_zone "$sys" intel-rapl:0 package-0 48102334101 65532610987
	rapl_zone "$sys" intel-rapl:0:0 core 22310044332 65532610987
	proc "$root" 16 65768316
}

bench_node() {
	local root=bench-node sys=bench-node/sys c nv
	rm -rf "$root"
	coretemp "$sys" 0 0 32
	coretemp "$sys" 1 1 32
	nv=$(nvme_ctrl "$sys" nvme0 devices/pci0000:00/0000:00:1b.0/0000:5e:00.0 \
		"SAMSUNG MZQL23T8HCLS-00A07" S64HNE0R901234)
	nvme_temps "$sys/$(hwmon "$sys" 2 "$nv" 0 nvme)"
	cpus "$sys" 128
	for ((c = 0; c < 128; c++)); do
		cpufreq "$sys" "$c" intel_pstate $((2800000 + (c % 9) * 25000)) 800000 3800000 800000 3800000
	done
	rapl_control "$sys"
	rapl_zone "$sys" intel-rapl:0 package-0 130512003311 262143328850
	rapl_zone "$sys" intel-rapl:0:0 dram 21003387112 65712999613
	rapl_zone "$sys" intel-rapl:1 package-1 127880412984 262143328850
	rapl_zone "$sys" intel-rapl:1:0 dram 20871230048 65712999613
	proc "$root" 128 527988144
}

intel_node
amd_node
bench_node
