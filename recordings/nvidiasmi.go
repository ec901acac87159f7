package recordings

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/heatsink-hpc/heatsink/point"
	"github.com/heatsink-hpc/heatsink/point/schema"
)

// gpuColumns maps nvidia-smi --query-gpu properties, by any of the names
// nvidia-smi accepts or prints in its header, onto the gpu measurement.
// scale converts the value to heatsink's unit.
var gpuColumns = map[string]struct {
	field string
	scale float64
	unit  string // what a bare value is in; a key of unitScales, or "" for none
}{
	"temperature.gpu":                {schema.FieldTempC, 1, "C"},
	"temperature.memory":             {schema.FieldMemTempC, 1, "C"},
	"power.draw":                     {schema.FieldPowerW, 1, "W"},
	"power.draw.instant":             {schema.FieldPowerW, 1, "W"},
	"power.limit":                    {schema.FieldPowerLimitW, 1, "W"},
	"enforced.power.limit":           {schema.FieldPowerLimitW, 1, "W"},
	"clocks.sm":                      {schema.FieldSMClockMHz, 1, "MHz"},
	"clocks.current.sm":              {schema.FieldSMClockMHz, 1, "MHz"},
	"clocks.mem":                     {schema.FieldMemClockMHz, 1, "MHz"},
	"clocks.current.memory":          {schema.FieldMemClockMHz, 1, "MHz"},
	"utilization.gpu":                {schema.FieldUtilPct, 1, "%"},
	"utilization.memory":             {schema.FieldMemUtilPct, 1, "%"},
	"memory.used":                    {schema.FieldMemUsedBytes, 1 << 20, "MiB"},
	"memory.total":                   {schema.FieldMemTotalBytes, 1 << 20, "MiB"},
	"pstate":                         {"pstate", 1, ""},
	"clocks_event_reasons.active":    {schema.FieldClockEventReasons, 1, ""},
	"clocks_throttle_reasons.active": {schema.FieldClockEventReasons, 1, ""},
}

// unitScales lists, for each column unit, the units a cell or header may
// give instead and the factor to it. nvidia-smi writes W, MiB and MHz, but
// a cell that says "10 GiB" read as 10 MiB is silently 1024 times wrong,
// so every unit is read and one that is not listed is refused. Units are
// case sensitive: "mW" and "MW" differ by 10^9.
var unitScales = map[string]map[string]float64{
	"W":   {"mW": 1e-3, "W": 1, "kW": 1e3, "MW": 1e6},
	"MiB": {"B": 1.0 / (1 << 20), "KiB": 1.0 / (1 << 10), "MiB": 1, "GiB": 1 << 10, "TiB": 1 << 20},
	"MHz": {"Hz": 1e-6, "kHz": 1e-3, "MHz": 1, "GHz": 1e3},
	"C":   {"C": 1, "°C": 1},
	"%":   {"%": 1},
}

// unitNames lists the units a column unit accepts, for error messages.
func unitNames(unit string) string {
	names := make([]string, 0, len(unitScales[unit]))
	for u := range unitScales[unit] {
		names = append(names, u)
	}
	slices.Sort(names)
	return strings.Join(names, ", ")
}

// Columns that become tags or the time.
const (
	colTime = iota + 1
	colIndex
	colUUID
	colName
	colBus
)

var idColumns = map[string]int{
	"timestamp": colTime,
	"index":     colIndex,
	"uuid":      colUUID, "gpu_uuid": colUUID,
	"name": colName, "gpu_name": colName,
	"pci.bus_id": colBus, "gpu_bus_id": colBus,
}

// Clock event reason bits (NVML's nvmlClocksEventReason*), the same that
// sensors/nvml decodes: HW slowdown, SW and HW thermal slowdown are
// thermal; SW power cap and HW power brake are power.
const (
	thermalReasons = 0x8 | 0x20 | 0x40
	powerReasons   = 0x4 | 0x80
)

// addGPUField adds a gpu field with the type sensors/nvml gives it. A value
// an integer field cannot hold (int64 conversion of 1e20 MiB in bytes would
// be -9223372036854775808) is an error, to be reported as a bad value.
func addGPUField(p *point.Point, field string, v float64) error {
	switch field {
	case schema.FieldMemUsedBytes, schema.FieldMemTotalBytes, "pstate", schema.FieldClockEventReasons:
		r := math.Round(v)
		// 2^63 is the first float64 past MaxInt64; -2^63 is MinInt64 itself.
		if math.IsNaN(r) || r >= 1<<63 || r < -(1<<63) {
			return fmt.Errorf("%s: %g is out of range", field, v)
		}
		p.AddInt(field, int64(r))
	default:
		p.AddFloat(field, v)
	}
	return nil
}

// maxCSVLine is the longest nvidia-smi row read; a longer one is skipped.
const maxCSVLine = 1 << 20

// nvidia-smi's timestamp format, in local time without a zone.
var smiTimeLayouts = []string{"2006/01/02 15:04:05.000", "2006/01/02 15:04:05", time.RFC3339Nano, "2006-01-02 15:04:05.000", "2006-01-02 15:04:05"}

type smiColumn struct {
	name  string // as in the header, without the unit
	id    int    // colTime...; 0 for a field
	field string
	scale float64
	unit  string  // the column's unit (a key of unitScales), "" for none
	bare  float64 // factor to unit for a value without its own unit
}

// readNvidiaSMI reads the CSV that `nvidia-smi --query-gpu=...
// --format=csv[,noheader][,nounits] -l 1` writes. The header names the
// columns; values may carry units ("70.12 W") or not; "[N/A]" and
// "[Not Supported]" mean the GPU has no such reading, and leave the field
// out. A header repeated mid-file (logs appended to) starts a new table.
func readNvidiaSMI(r io.Reader, res *FileResult, o Options, fn func(*point.Point) error) error {
	loc := o.Location
	if loc == nil {
		loc = time.Local
	}
	sc := point.NewLineScanner(r, maxCSVLine)
	tr := tracker{r: res}
	seen := map[string]bool{}
	var cols []smiColumn
	host := o.Host
	if host == "" {
		host = hostFromPath(res.Path)
	}
	line := 0
	for sc.Scan() {
		line++
		if sc.TooLong() {
			res.bad(line, fmt.Errorf("line longer than %d MiB: skipped", maxCSVLine>>20))
			continue
		}
		text := strings.TrimSpace(strings.TrimPrefix(sc.Text(), "\ufeff"))
		if text == "" || text[0] == '#' {
			continue
		}
		rec, err := csv.NewReader(strings.NewReader(text)).Read()
		if err != nil {
			res.bad(line, fmt.Errorf("not a CSV row: %w", errors.Unwrap(err)))
			continue
		}
		for i := range rec {
			rec[i] = strings.TrimSpace(rec[i])
		}
		if isSMIHeader(rec) {
			if cols, err = smiHeader(rec, res, seen); err != nil {
				return fmt.Errorf("%s:%d: %w", res.Path, line, err)
			}
			continue
		}
		if cols == nil {
			return fmt.Errorf("%s:%d: no header row naming the columns (nvidia-smi --format=csv without noheader writes one)", res.Path, line)
		}
		if len(rec) != len(cols) {
			res.bad(line, fmt.Errorf("%d fields, the header has %d", len(rec), len(cols)))
			continue
		}
		p, ok := smiRow(rec, cols, res, seen, line, loc)
		if !ok {
			continue
		}
		p.AddTag(schema.TagHost, host)
		if err := tr.keep(line, &p, fn); err != nil {
			return err
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("read %s after line %d: %w", res.Path, line, err)
	}
	if o.Host == "" {
		res.Warnings = append(res.Warnings, fmt.Sprintf("nvidia-smi logs do not name their host; named %q after the file (give --host)", host))
	}
	tr.finish()
	return nil
}

// smiGPUName names a GPU logged without an index column by what the row
// has that tells GPUs apart: its UUID, else its PCI bus id, else 0 (one
// GPU, or all of them merged: the warning says so).
func smiGPUName(uuid, bus string, res *FileResult, seen map[string]bool) string {
	switch {
	case uuid != "":
		res.warnOnce(seen, "nvidia-smi log has no index column; GPUs are named by their UUID")
		return uuid
	case bus != "":
		res.warnOnce(seen, "nvidia-smi log has no index column; GPUs are named by their PCI bus id")
		return bus
	}
	res.warnOnce(seen, "nvidia-smi log has no index, uuid or pci.bus_id column; every row is taken as GPU 0 (add index to --query-gpu)")
	return "0"
}

// hostFromPath names a host after its log file (node7.csv: node7), so a
// run imported without --host says where its data came from.
func hostFromPath(path string) string {
	base := filepath.Base(path)
	if i := strings.IndexByte(base, '.'); i > 0 {
		base = base[:i]
	}
	return base
}

// isSMIHeader reports whether a row names columns rather than holding values.
func isSMIHeader(rec []string) bool {
	for _, c := range rec {
		name, _, _ := strings.Cut(strings.ToLower(c), " [")
		if _, ok := gpuColumns[name]; ok || name == "timestamp" {
			return true
		}
	}
	return false
}

func smiHeader(rec []string, res *FileResult, seen map[string]bool) ([]smiColumn, error) {
	cols := make([]smiColumn, len(rec))
	taken := map[string]bool{}
	at := map[string]int{} // column name to its 1-based position
	for i, c := range rec {
		name, unit, hasUnit := strings.Cut(c, " [")
		name = strings.ToLower(strings.TrimSpace(name))
		// Two columns of one name may hold different values (a log edited
		// or pasted together) and nothing says which is the reading; the
		// first used to win unremarked, and the last for id columns.
		if j, ok := at[name]; ok {
			return nil, fmt.Errorf("header: %s is columns %d and %d; give each column once", name, j, i+1)
		}
		at[name] = i + 1
		cols[i].name = name
		if id, ok := idColumns[name]; ok {
			cols[i].id = id
			continue
		}
		m, ok := gpuColumns[name]
		if !ok {
			res.warnOnce(seen, "nvidia-smi column "+name+" has no heatsink equivalent; not imported")
			continue
		}
		if taken[m.field] {
			res.warnOnce(seen, "nvidia-smi column "+name+" gives "+m.field+" a second time; the first column is used")
			continue
		}
		taken[m.field] = true
		cols[i].field, cols[i].scale, cols[i].unit, cols[i].bare = m.field, m.scale, m.unit, 1
		// A bare value is in the header's unit, "power.draw [W]".
		if unit = strings.TrimSpace(strings.TrimSuffix(unit, "]")); hasUnit && m.unit != "" {
			f, ok := unitScales[m.unit][unit]
			if !ok {
				return nil, fmt.Errorf("header: column %d, %s: unit %q is not one of %s", i+1, name, unit, unitNames(m.unit))
			}
			cols[i].bare = f
		}
	}
	return cols, nil
}

// smiRow turns one row into a gpu point. A row without a readable time is
// skipped; a value that cannot be read is reported and left out.
func smiRow(rec []string, cols []smiColumn, res *FileResult, seen map[string]bool, line int, loc *time.Location) (point.Point, bool) {
	var ts time.Time
	var gpu, uuid, model, bus string
	for i, c := range cols {
		switch c.id {
		case colTime:
			t, err := parseSMITime(rec[i], loc)
			if err != nil {
				res.bad(line, err)
				return point.Point{}, false
			}
			ts = t
		case colIndex:
			gpu = rec[i]
		case colUUID:
			uuid = rec[i]
		case colName:
			model = rec[i]
		case colBus:
			bus = rec[i]
		}
	}
	if ts.IsZero() {
		res.bad(line, errors.New("no timestamp column (add timestamp to --query-gpu)"))
		return point.Point{}, false
	}
	p := point.New(schema.GPU, ts)
	if gpu = notAvailable(gpu); gpu == "" {
		gpu = smiGPUName(notAvailable(uuid), notAvailable(bus), res, seen)
	}
	p.AddTag(schema.TagGPU, gpu).AddTag(schema.TagUUID, notAvailable(uuid)).AddTag(schema.TagModel, notAvailable(model))
	for i, c := range cols {
		if c.field == "" {
			continue
		}
		v := rec[i]
		if notAvailable(v) == "" {
			continue
		}
		switch c.field {
		case "pstate":
			n, ok := parsePstate(v)
			if !ok {
				res.bad(line, fmt.Errorf("column %s: %q is not a performance state", c.name, v))
				continue
			}
			p.AddInt(schema.FieldPState, n)
		case schema.FieldClockEventReasons:
			n, err := strconv.ParseUint(strings.TrimPrefix(strings.ToLower(v), "0x"), 16, 64)
			if err != nil {
				res.bad(line, fmt.Errorf("column %s: %q is not a hexadecimal bitmask", c.name, v))
				continue
			}
			p.AddInt(schema.FieldClockEventReasons, int64(n))
			p.AddBool(schema.FieldThrottleThermal, n&thermalReasons != 0)
			p.AddBool(schema.FieldThrottlePower, n&powerReasons != 0)
		default:
			num, unit := splitUnit(v)
			f, err := strconv.ParseFloat(num, 64)
			if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
				res.bad(line, fmt.Errorf("column %s: %q is not a number", c.name, v))
				continue
			}
			factor := c.bare
			if unit != "" {
				var ok bool
				if factor, ok = unitScales[c.unit][unit]; !ok {
					res.bad(line, fmt.Errorf("column %s: unit %q in %q is not one of %s", c.name, unit, v, unitNames(c.unit)))
					continue
				}
			}
			if err := addGPUField(&p, c.field, f*factor*c.scale); err != nil {
				res.bad(line, fmt.Errorf("column %s: %w", c.name, err))
			}
		}
	}
	if len(p.Fields) == 0 {
		res.bad(line, errors.New("no readings in this row"))
		return point.Point{}, false
	}
	return p, true
}

func parseSMITime(s string, loc *time.Location) (time.Time, error) {
	for _, layout := range smiTimeLayouts {
		if t, err := time.ParseInLocation(layout, s, loc); err == nil {
			if t.Before(earliest) || t.After(latest) {
				return time.Time{}, fmt.Errorf("timestamp %q is out of range", s)
			}
			return t, nil
		}
	}
	return time.Time{}, fmt.Errorf("timestamp %q is not nvidia-smi's YYYY/MM/DD HH:MM:SS.mmm", s)
}

// notAvailable returns "" for nvidia-smi's ways of saying there is no value.
func notAvailable(s string) string {
	switch strings.ToLower(strings.Trim(s, "[] ")) {
	case "", "n/a", "not supported", "unknown error", "insufficient permissions", "no data", "requested functionality has been deprecated":
		return ""
	}
	return s
}

// splitUnit splits a value from its unit: "70.12 W", "1980 MHz", "35 %",
// "35%", "1024 MiB"; the unit is "" if there is none.
func splitUnit(s string) (num, unit string) {
	if i := strings.IndexByte(s, ' '); i > 0 {
		return s[:i], strings.TrimSpace(s[i+1:])
	}
	if n, ok := strings.CutSuffix(s, "%"); ok {
		return n, "%"
	}
	return s, ""
}
