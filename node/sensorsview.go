package node

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/heatsink-hpc/heatsink/point"
	"github.com/heatsink-hpc/heatsink/point/schema"
)

// ErrNoSensors is heatsink sensors' exit 1 when the machine shows no
// temperature, as lm-sensors' "No sensors found!".
var ErrNoSensors = errors.New("No sensors found! No source read a temperature on this machine (why: above, or heatsink sensors --raw)")

// limit is one limit a device reports beside a reading, as lm-sensors
// names it.
type limit struct{ field, name string }

// block is one chip or device: a title and its readings, one a line.
type block struct {
	title string
	rows  [][2]string // label, value with limits
}

// WriteSensors prints the compact view of a snapshot: one block per chip
// and device with its readings rounded, in their units, and their limits,
// as lm-sensors' sensors does; then the sources failing or absent here.
// NVMe drives are shown by the nvme source (model, serial), not again as
// hwmon chips. It returns ErrNoSensors when no temperature was read.
func WriteSensors(w io.Writer, snap []SourceSnapshot) error {
	v := sensorsView{byKey: map[string]*block{}}
	for _, s := range snap {
		if s.Name == "nvme" && len(s.Points) > 0 {
			v.nvmeShown = true
		}
	}
	for _, s := range snap {
		for i := range s.Points {
			v.add(&s.Points[i])
		}
	}
	for _, b := range v.blocks {
		width := 0
		for _, r := range b.rows {
			width = max(width, len(r[0])+1)
		}
		fmt.Fprintln(w, b.title)
		for _, r := range b.rows {
			fmt.Fprintf(w, "%-*s  %s\n", width, r[0]+":", r[1])
		}
		fmt.Fprintln(w)
	}
	var absent, failing []string
	for _, s := range snap {
		switch {
		case !s.Available:
			absent = append(absent, fmt.Sprintf("  %s: %s", s.Name, s.Error))
		case s.Error != "":
			failing = append(failing, fmt.Sprintf("  %s: %s", s.Name, s.Error))
		}
	}
	if len(failing) > 0 {
		fmt.Fprintf(w, "Failing:\n%s\n", strings.Join(failing, "\n"))
	}
	if len(absent) > 0 {
		fmt.Fprintf(w, "Not on this machine:\n%s\n", strings.Join(absent, "\n"))
	}
	if v.temps == 0 {
		return ErrNoSensors
	}
	return nil
}

// sensorsView gathers the blocks in the order their chips first appear.
type sensorsView struct {
	blocks    []*block
	byKey     map[string]*block
	nvmeShown bool
	temps     int // temperature readings seen
}

func (v *sensorsView) block(key, title string) *block {
	if b, ok := v.byKey[key]; ok {
		return b
	}
	b := &block{title: title}
	v.byKey[key] = b
	v.blocks = append(v.blocks, b)
	return b
}

// add puts one point's readings in its chip's or device's block.
func (v *sensorsView) add(p *point.Point) {
	if _, ok := p.Float(schema.FieldTempC); ok {
		v.temps++
	}
	switch p.Measurement {
	case schema.Hwmon:
		if v.nvmeShown && p.Tag(schema.TagClass) == "nvme" {
			return
		}
		v.hwmon(p)
	case schema.NVMe:
		b := v.block("nvme\x00"+p.Tag("device"), fmt.Sprintf("%s: %s (serial %s)", p.Tag("device"), p.Tag("model"), p.Tag("serial")))
		b.add(p.Tag("sensor"), celsius(p, "temp_c", limit{"warn_c", "warn"}, limit{"crit_c", "crit"}))
	case schema.GPU:
		v.gpu(p)
	case schema.RAPL:
		b := v.block("rapl", "RAPL (CPU energy counters)")
		w, _ := p.Float("power_w")
		b.add(cmp.Or(p.Tag("zone"), p.Tag("zone_id")), fmt.Sprintf("%.1f W", w))
	case schema.CPU, schema.Mem, schema.Load, schema.Cpufreq:
		// The host's load and clocks, not sensors: --raw shows them.
	default:
		// Facility devices (PDUs, tanks) and added sources: their fields
		// as the data model names and measures them.
		b := v.block(p.Measurement+"\x00"+tagKey(p), strings.TrimSpace(p.Measurement+" "+tagKey(p)))
		for _, f := range p.Fields {
			if d, ok := schema.Describe(f.Key); ok && d.Unit == schema.Celsius {
				v.temps++ // a tank's coolant, a probe's inlet
			}
			b.add(f.Key, formatReading(f))
		}
	}
}

func (v *sensorsView) hwmon(p *point.Point) {
	b := v.block("hwmon\x00"+p.Tag("chip"), fmt.Sprintf("%s (%s)", p.Tag("chip_name"), p.Tag("chip")))
	label := cmp.Or(p.Tag("label"), p.Tag("sensor"))
	switch {
	case has(p, "temp_c"):
		b.add(label, celsius(p, "temp_c", limit{"max_c", "high"}, limit{"crit_c", "crit"}))
	case has(p, "fan_rpm"):
		r, _ := p.Float("fan_rpm")
		b.add(label, fmt.Sprintf("%.0f RPM", r))
	case has(p, "power_w"):
		w, _ := p.Float("power_w")
		b.add(label, fmt.Sprintf("%.1f W", w))
	}
}

func (v *sensorsView) gpu(p *point.Point) {
	b := v.block("gpu\x00"+p.Tag("gpu"), fmt.Sprintf("GPU %s: %s (%s)", p.Tag("gpu"), p.Tag("model"), p.Tag("uuid")))
	if has(p, "temp_c") {
		b.add("GPU", celsius(p, "temp_c", limit{"slowdown_c", "slowdown"}, limit{"shutdown_c", "shutdown"}))
	}
	if has(p, "mem_temp_c") {
		b.add("Memory", celsius(p, "mem_temp_c", limit{"mem_max_c", "max"}))
	}
	if w, ok := p.Float("power_w"); ok {
		val := fmt.Sprintf("%.1f W", w)
		if l, ok := p.Float("power_limit_w"); ok {
			val += fmt.Sprintf("  (limit = %.1f W)", l)
		}
		b.add("Power", val)
	}
}

func (b *block) add(label, value string) { b.rows = append(b.rows, [2]string{label, value}) }

func has(p *point.Point, field string) bool { _, ok := p.Field(field); return ok }

// celsius is a temperature rounded to a tenth, with the limits the device
// reports: "+46.0°C  (high = +84.0°C, crit = +94.0°C)".
func celsius(p *point.Point, field string, limits ...limit) string {
	v, _ := p.Float(field)
	s := fmt.Sprintf("%+.1f°C", v)
	var ls []string
	for _, l := range limits {
		if x, ok := p.Float(l.field); ok {
			ls = append(ls, fmt.Sprintf("%s = %+.1f°C", l.name, x))
		}
	}
	if len(ls) > 0 {
		s += "  (" + strings.Join(ls, ", ") + ")"
	}
	return s
}

// tagKey is a point's tags but host, sorted: "outlet=3 pdu=a".
func tagKey(p *point.Point) string {
	var tags []string
	for _, t := range p.Tags {
		if t.Key != "host" && t.Value != "" {
			tags = append(tags, t.Key+"="+t.Value)
		}
	}
	slices.Sort(tags)
	return strings.Join(tags, " ")
}

// formatReading is a field's value rounded in its data-model unit.
func formatReading(f point.Field) string {
	var v float64
	switch x := f.Value.Interface().(type) {
	case string:
		return x
	case bool:
		if x {
			return "yes"
		}
		return "no"
	default:
		var ok bool
		if v, ok = point.Float(f.Value); !ok {
			return fmt.Sprint(x)
		}
	}
	d, ok := schema.Describe(f.Key)
	if !ok {
		d = schema.Infer(f.Key, schema.Float)
	}
	switch d.Unit {
	case schema.Celsius:
		return fmt.Sprintf("%+.1f°C", v)
	case schema.Watts:
		return fmt.Sprintf("%.1f W", v)
	case schema.Kilowatts:
		return fmt.Sprintf("%.2f kW", v)
	case schema.RPM:
		return fmt.Sprintf("%.0f RPM", v)
	case schema.LitresPerMinute:
		return fmt.Sprintf("%.1f L/min", v)
	case schema.CubicMetresPerHour:
		return fmt.Sprintf("%.2f m³/h", v)
	case schema.Amperes:
		return fmt.Sprintf("%.2f A", v)
	case schema.Volts:
		return fmt.Sprintf("%.1f V", v)
	case schema.Percent:
		return fmt.Sprintf("%.0f %%", v)
	case schema.Joules:
		return fmt.Sprintf("%.0f J", v)
	}
	return strconv.FormatFloat(v, 'g', 4, 64)
}
