package promhistory

import (
	"maps"
	"slices"
	"strings"

	"github.com/prometheus/common/model"

	"github.com/heatsink-hpc/heatsink/point"
)

// cpuModes are node_cpu_seconds_total's modes, the /proc/stat columns
// heatsink's host source reads (guest is already counted in user).
var cpuModes = map[string]int{"user": 0, "nice": 1, "system": 2, "idle": 3, "iowait": 4, "irq": 5, "softirq": 6, "steal": 7}

type cpuTimes struct {
	s    [8]float64
	seen uint8 // bit per mode
}

// cpuDeriver turns node_cpu_seconds_total into the cpu measurement's
// percentages, computed from two consecutive readings of the same counters
// exactly as heatsink's host source computes them from /proc/stat (user
// includes nice, system irq and softirq, usage is everything but idle and
// iowait). A step at which the counters did not move has no percentages,
// as a tick with no elapsed time has none. Per-CPU series become cpuN; the
// sum over a host's CPUs becomes cpu=total.
type cpuDeriver struct {
	last map[string]cpuTimes    // host \x00 cpu: the last complete reading
	cur  map[string][]cpuTimes  // host \x00 cpu: this window's, by slot
	cpus map[string]map[int]int // host: the modes' bitmask each CPU reports
}

func newCPUDeriver() *cpuDeriver {
	return &cpuDeriver{last: map[string]cpuTimes{}, cur: map[string][]cpuTimes{}, cpus: map[string]map[int]int{}}
}

func (d *cpuDeriver) add(host, cpu, mode string, values []model.SamplePair, fromMs, step int64, slots int) {
	i, ok := cpuModes[mode]
	if !ok || cpu == "" {
		return
	}
	key := host + "\x00" + cpu
	ts := d.cur[key]
	if ts == nil {
		ts = make([]cpuTimes, slots)
		d.cur[key] = ts
	}
	for _, sp := range values {
		slot := (int64(sp.Timestamp) - fromMs) / step
		if slot < 0 || slot >= int64(slots) {
			continue
		}
		ts[slot].s[i] = float64(sp.Value)
		ts[slot].seen |= 1 << i
	}
}

// emit adds this window's percentages to asm and keeps each CPU's last
// reading for the next window.
func (d *cpuDeriver) emit(asm *assembler, slots int) {
	byHost := map[string][]string{}
	for key := range d.cur {
		host, _, _ := strings.Cut(key, "\x00")
		byHost[host] = append(byHost[host], key)
	}
	for _, host := range slices.Sorted(maps.Keys(byHost)) {
		keys := byHost[host]
		slices.Sort(keys)
		totalKey := host + "\x00total"
		series := map[string]*assembled{}
		out := func(key, cpu string, c cpuTimes, slot int) {
			fs, ok := d.step(key, c)
			if !ok {
				return
			}
			s := series[cpu]
			if s == nil {
				s = asm.of("cpu", tags("cpu", cpu, "host", host))
				if s.fields == nil {
					s.width = len(fs)
					asm.alloc(s)
				}
				series[cpu] = s
			}
			s.fields[slot] = append(s.fields[slot], fs...)
		}
		for slot := 0; slot < slots; slot++ {
			var sum cpuTimes
			complete := true
			for _, key := range keys {
				c := d.cur[key][slot]
				if c.seen != 0xff {
					complete = false
					continue
				}
				for i := range sum.s {
					sum.s[i] += c.s[i]
				}
				_, cpu, _ := strings.Cut(key, "\x00")
				out(key, "cpu"+cpu, c, slot)
			}
			if complete {
				sum.seen = 0xff
				out(totalKey, "total", sum, slot)
			}
		}
	}
	clear(d.cur)
}

// step compares a reading with the last one of the same CPU.
func (d *cpuDeriver) step(key string, c cpuTimes) ([]point.Field, bool) {
	prev, ok := d.last[key]
	d.last[key] = c
	if !ok {
		return nil, false
	}
	delta := func(i int) float64 {
		if c.s[i] < prev.s[i] {
			return 0
		}
		return c.s[i] - prev.s[i]
	}
	user := delta(0) + delta(1)
	system := delta(2) + delta(5) + delta(6)
	idle, iowait, steal := delta(3), delta(4), delta(7)
	total := user + system + idle + iowait + steal
	if total <= 0 {
		return nil, false
	}
	pct := 100 / total
	var p point.Point
	p.AddFloat("usage_pct", (user+system+steal)*pct).AddFloat("user_pct", user*pct).
		AddFloat("system_pct", system*pct).AddFloat("iowait_pct", iowait*pct).AddFloat("idle_pct", idle*pct)
	return p.Fields, true
}
