package hwmon

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/heatsink-hpc/heatsink/point"
	"github.com/heatsink-hpc/heatsink/point/schema"
	"github.com/heatsink-hpc/heatsink/sensors/sysfs"
)

// Kind is what a channel measures.
type Kind int

// The kinds heatsink records (the data model has no fields for voltages or currents).
const (
	Temp  Kind = iota // tempN_input, millidegrees Celsius
	Fan               // fanN_input, rpm
	Power             // powerN_input (or powerN_average), microwatts
)

func (k Kind) String() string {
	switch k {
	case Temp:
		return "temp"
	case Fan:
		return "fan"
	case Power:
		return "power"
	}
	return "kind" + strconv.Itoa(int(k))
}

// Channel is one hwmon sensor of a chip: where its reading is and what the
// driver calls it.
type Channel struct {
	Kind  Kind
	Name  string // "temp1", "fan2", "power1"
	Label string // tempN_label ("Package id 0", "Tctl", "Composite"); "" when none
	Input string // path of the reading
	Max   string // path of tempN_max; "" when absent
	Crit  string // path of tempN_crit; "" when absent

	in *sysfs.Attr // Input, kept open once read
}

var channelFile = regexp.MustCompile(`^(temp|fan|power)([0-9]+)_(input|average)$`)

// Channels lists the temperature, fan and power channels of the chip whose
// hwmon directory is dir, sorted by kind and number. Drivers older than the
// hwmon device-attribute API keep their files in dir/device, so both places
// are read; dir wins where both have a channel. A label that cannot be read
// is left empty.
func Channels(dir string) ([]Channel, error) {
	found := map[string]*Channel{}
	var order []string
	for i, d := range []string{dir, filepath.Join(dir, "device")} {
		entries, err := os.ReadDir(d)
		if err != nil {
			if i == 0 {
				return nil, fmt.Errorf("list hwmon chip: %w", err)
			}
			continue
		}
		for _, e := range entries {
			m := channelFile.FindStringSubmatch(e.Name())
			if m == nil || (m[3] == "average" && m[1] != "power") {
				continue
			}
			name := m[1] + m[2]
			c := found[name]
			if c != nil && (filepath.Dir(c.Input) != d || m[3] == "average") {
				continue // already found in dir, or powerN_input beside powerN_average
			}
			if c == nil {
				c = &Channel{Name: name}
				found[name] = c
				order = append(order, name)
			}
			switch m[1] {
			case "temp":
				c.Kind = Temp
			case "fan":
				c.Kind = Fan
			case "power":
				c.Kind = Power
			}
			c.Input = filepath.Join(d, e.Name())
		}
	}
	chs := make([]Channel, 0, len(order))
	for _, name := range order {
		c := found[name]
		d := filepath.Dir(c.Input)
		if l, err := sysfs.ReadString(filepath.Join(d, name+"_label")); err == nil {
			c.Label = l
		}
		if c.Kind == Temp {
			c.Max = existing(filepath.Join(d, name+"_max"))
			c.Crit = existing(filepath.Join(d, name+"_crit"))
		}
		chs = append(chs, *c)
	}
	slices.SortFunc(chs, func(a, b Channel) int {
		if a.Kind != b.Kind {
			return int(a.Kind) - int(b.Kind)
		}
		return channelNumber(a.Name) - channelNumber(b.Name)
	})
	return chs, nil
}

func channelNumber(name string) int {
	n, _ := strconv.Atoi(strings.TrimLeft(name, "abcdefghijklmnopqrstuvwxyz"))
	return n
}

func existing(path string) string {
	if _, err := os.Stat(path); err != nil {
		return ""
	}
	return path
}

// Read returns the channel's reading in heatsink's units: °C for Temp, rpm
// for Fan, W for Power. A value outside physical bounds is an error. The
// input file stays open for the next reading until Close.
func (c *Channel) Read() (float64, error) {
	if c.in == nil {
		c.in = sysfs.NewAttr(c.Input)
	}
	raw, err := c.in.ReadInt()
	if err != nil {
		return 0, err
	}
	var v, lo, hi float64
	switch c.Kind {
	case Temp:
		v, lo, hi = float64(raw)/1000, schema.MinTempC, schema.MaxTempC
	case Fan:
		v, lo, hi = float64(raw), 0, schema.MaxFanRPM
	case Power:
		v, lo, hi = float64(raw)/1e6, 0, schema.MaxPowerW
	}
	if v < lo || v > hi {
		return 0, fmt.Errorf("%s: %d is outside the physical range of a %s reading", c.Input, raw, c.Kind)
	}
	return v, nil
}

// Close closes the input file if Read left it open.
func (c *Channel) Close() error {
	if c.in == nil {
		return nil
	}
	return c.in.Close()
}

// Limits are a temperature channel's thresholds in °C. A threshold the
// channel lacks, reports as unset, or could not be read is absent (its Has
// flag false), never 0.
type Limits struct {
	MaxC, CritC     float64
	HasMax, HasCrit bool
}

// ReadLimits reads the channel's tempN_max and tempN_crit, each on its own:
// one that cannot be read is absent from the result, and its error joined
// into the error returned.
func (c *Channel) ReadLimits() (Limits, error) {
	var l Limits
	var errMax, errCrit error
	if c.Max != "" {
		l.MaxC, l.HasMax, errMax = ReadLimit(c.Max)
	}
	if c.Crit != "" {
		l.CritC, l.HasCrit, errCrit = ReadLimit(c.Crit)
	}
	return l, errors.Join(errMax, errCrit)
}

// ReadLimit reads a temperature threshold (tempN_max, tempN_crit) in °C.
// ok is false, with no error, for a value outside physical bounds: drivers
// use such values to mean "no threshold" (NVMe reports an unset one as
// 65535 K, 65261.85 °C).
func ReadLimit(path string) (v float64, ok bool, err error) {
	raw, err := sysfs.ReadInt(path)
	if err != nil {
		return 0, false, err
	}
	v = float64(raw) / 1000
	if !schema.PlausibleTempC(v) {
		return 0, false, nil
	}
	return v, true, nil
}

// Sensor is a channel as a source samples it: kept open, with the tags of
// its points and the thresholds read last. hwmon samples every channel of
// a chip this way, and nvme the temperature channels of a drive's hwmon
// node.
type Sensor struct {
	Channel
	Tags   []point.Tag
	Limits Limits // re-read when the sample refreshes

	// hwmon's reads on a goroutine (see readChip): the attribute's flight,
	// and what the last read found.
	flight *flight
	val    float64
	err    error
	limErr error
}

// ReadSensors appends to r.Points a point of measurement for each sensor
// of one device: temp_c with its thresholds (the _max one as maxField:
// max_c for a chip, warn_c for a drive, which calls it its warning
// temperature; crit_c), fan_rpm or power_w. A sensor that cannot be read
// is left out and its error recorded, under the measurement and the
// device's name; a failed threshold read keeps the reading and the
// thresholds it could read.
func ReadSensors(r *sysfs.Reading, measurement, device string, sensors []*Sensor, maxField string) {
	for _, se := range sensors {
		v, err := se.Read()
		if err != nil {
			r.FailRead(fmt.Errorf("%s %s %s: %w", measurement, device, se.Name, err))
			continue
		}
		if r.Refresh && se.Kind == Temp {
			if se.Limits, err = se.ReadLimits(); err != nil {
				r.Fail(fmt.Errorf("%s %s %s: %w", measurement, device, se.Name, err))
			}
		}
		r.Points = append(r.Points, sensorPoint(r, measurement, se, v, maxField))
	}
}

// sensorPoint is se's point of measurement for the reading v, with the
// thresholds read last.
func sensorPoint(r *sysfs.Reading, measurement string, se *Sensor, v float64, maxField string) point.Point {
	p := point.Point{Measurement: measurement, Tags: se.Tags, Time: r.Time, Fields: make([]point.Field, 0, 3)}
	switch se.Kind {
	case Temp:
		p.AddFloat(schema.FieldTempC, v)
		if se.Limits.HasMax {
			p.AddFloat(maxField, se.Limits.MaxC)
		}
		if se.Limits.HasCrit {
			p.AddFloat(schema.FieldCritC, se.Limits.CritC)
		}
	case Fan:
		p.AddFloat(schema.FieldFanRPM, v)
	case Power:
		p.AddFloat(schema.FieldPowerW, v)
	}
	return p
}
