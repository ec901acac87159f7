package recordings

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/heatsink-hpc/heatsink/point"
	"github.com/heatsink-hpc/heatsink/rundir"
)

// LibSensorsTools (the harness of the reference study) writes a JSON array
// of records: {"arguments": {...}}, {"versions": {...}}, and events
// {"event": NAME, "timestamp": SECONDS, ...} where SECONDS count from the
// tool's start. "poll-data" events carry the readings under dashed keys:
//
//	gpu-N-name, gpu-N-gpu-temperature (or gpu-N-temperature),
//	gpu-N-memory-temperature, gpu-N-power-usage and gpu-N-power-limit (mW),
//	gpu-N-utilization-gpu, gpu-N-utilization-memory (%),
//	gpu-N-memory-used, gpu-N-memory-total (bytes), gpu-N-pstate,
//	cpu-CHIP-temperature-K (libsensors chip name, e.g. k10temp-pci-00c3),
//	core-N-frequency (kHz), nvme-N-K-temperature,
//	submer-N-temperature and the other Submer SmartPod API values
//	(consumption, dissipation, dissipationC, dissipationW, mPUE, pump1rpm,
//	pump2rpm, cti, cto, cf, wti, wto, wf), pdu-N-phase, pdu-N-bankK (APC
//	rPDU2 load in tenths of an ampere).
//
// The events initial-wait-start/-end, wrapped-command-end and
// post-wait-start/-end become the phases baseline, load and cooldown. A
// tool killed before it shut down leaves the array unterminated; whatever
// records are whole are read, and the torn one is reported.

var (
	gpuKey    = regexp.MustCompile(`^gpu-(\d+)-(.+)$`)
	cpuKey    = regexp.MustCompile(`^cpu-(.+)-temperature-(\d+)$`)
	coreKey   = regexp.MustCompile(`^core-(\d+)-frequency$`)
	nvmeKey   = regexp.MustCompile(`^nvme-(\d+)-(\d+)-temperature$`)
	submerKey = regexp.MustCompile(`^submer-(\d+)-(.+)$`)
	pduKey    = regexp.MustCompile(`^pdu-(\d+)-(phase|bank)(\d*)$`)
)

// lstGPU maps the part of a gpu-N- key after the index.
var lstGPU = map[string]struct {
	field string
	scale float64
}{
	"gpu-temperature":    {"temp_c", 1},
	"temperature":        {"temp_c", 1},
	"memory-temperature": {"mem_temp_c", 1},
	"power-usage":        {"power_w", 1e-3},
	"power-limit":        {"power_limit_w", 1e-3},
	"utilization-gpu":    {"util_pct", 1},
	"utilization-memory": {"mem_util_pct", 1},
	"memory-used":        {"mem_used_bytes", 1},
	"memory-total":       {"mem_total_bytes", 1},
	"pstate":             {"pstate", 1},
}

// lstSubmer maps Submer SmartPod API names onto the tank measurement, as
// sensors/tank does.
var lstSubmer = map[string]string{
	"temperature": "coolant_temp_c", "setpoint": "setpoint_c", "consumption": "consumption_w",
	"dissipation": "dissipation_kw", "dissipationC": "dissipation_c", "dissipationW": "dissipation_w",
	"mPUE": "mpue", "mpue": "mpue", "pump1rpm": "pump1_rpm", "pump2rpm": "pump2_rpm",
	"cti": "coolant_in_c", "cto": "coolant_out_c", "cf": "coolant_flow_lpm",
	"wti": "water_in_c", "wto": "water_out_c", "wf": "water_flow_lpm",
}

// lstEvents are the events that mark the protocol; the rest of the
// recording's events are kept as notes.
var lstEvents = map[string]bool{
	"initialization": true, "poll-update": true, "poll-data": true, "initial-wait-start": true,
	"initial-wait-end": true, "wrapped-command-end": true, "post-wait-start": true, "post-wait-end": true, "shutdown": true,
}

func readLibSensorsTools(r io.Reader, res *FileResult, o Options, fn func(*point.Point) error) error {
	if o.Start.IsZero() {
		return fmt.Errorf("%s: LibSensorsTools timestamps count seconds from the tool's start, which the file does not record: give --start (the wall-clock time the tool started)", res.Path)
	}
	tr := tracker{r: res}
	seen := map[string]bool{}
	marks := map[string]time.Time{}
	at := func(sec float64) time.Time {
		return o.Start.Add(time.Duration(math.Round(sec * 1e9)))
	}
	err := splitRecords(r, func(line int, rec []byte) error {
		var m map[string]json.RawMessage
		dec := json.NewDecoder(bytes.NewReader(rec))
		dec.UseNumber()
		if err := dec.Decode(&m); err != nil {
			res.bad(line, fmt.Errorf("not a JSON object: %w", err))
			return nil
		}
		if raw, ok := m["arguments"]; ok {
			var args map[string]any
			if json.Unmarshal(raw, &args) == nil {
				if c, ok := args["wrapped-call"].(string); ok && strings.TrimSpace(c) != "" {
					res.Command = strings.Fields(c)
				}
			}
			return nil
		}
		if raw, ok := m["versions"]; ok {
			var v map[string]string
			if json.Unmarshal(raw, &v) == nil {
				res.Versions = v
			}
			return nil
		}
		var event string
		if err := json.Unmarshal(m["event"], &event); err != nil || event == "" {
			res.bad(line, errors.New(`record without "event", "arguments" or "versions"`))
			return nil
		}
		var sec float64
		_, hasTime := m["timestamp"]
		if hasTime {
			if err := json.Unmarshal(m["timestamp"], &sec); err != nil || math.IsNaN(sec) || sec < 0 || sec > 100*365*86400 {
				res.bad(line, fmt.Errorf("event %s: timestamp %s is not seconds since the start", event, m["timestamp"]))
				return nil
			}
		}
		switch {
		case event == "poll-data":
			if !hasTime {
				res.bad(line, errors.New("poll-data without a timestamp"))
				return nil
			}
			lineOf := func(key string) int {
				if i := bytes.Index(rec, []byte(`"`+key+`"`)); i >= 0 {
					return line + bytes.Count(rec[:i], []byte("\n"))
				}
				return line
			}
			pts := lstPoints(m, at(sec), o.Host, res, lineOf, seen)
			for i := range pts {
				if err := tr.keep(line, &pts[i], fn); err != nil {
					return err
				}
			}
		case !hasTime:
			// initialization and poll-update carry a duration, not a time.
		case lstEvents[event]:
			if _, dup := marks[event]; !dup {
				marks[event] = at(sec)
			}
		default:
			res.Events = append(res.Events, rundir.Event{Time: at(sec), Kind: "note", Message: "LibSensorsTools event " + event})
		}
		return nil
	}, func(line int, err error) { res.bad(line, err) })
	if err != nil {
		return err
	}
	res.Phases = lstPhases(marks, res.First)
	if o.Host == "" {
		res.Warnings = append(res.Warnings, "LibSensorsTools output does not name its host (give --host)")
	}
	tr.finish()
	return nil
}

// lstPhases turns the protocol's events into phases.
func lstPhases(marks map[string]time.Time, first time.Time) []rundir.Phase {
	var phases []rundir.Phase
	add := func(name string, start time.Time, ends ...string) {
		if start.IsZero() {
			return
		}
		ph := rundir.Phase{Name: name, Start: start}
		for _, e := range ends {
			if t, ok := marks[e]; ok && !t.Before(start) {
				ph.End = &t
				break
			}
		}
		phases = append(phases, ph)
	}
	add("baseline", marks["initial-wait-start"], "initial-wait-end")
	load := marks["initial-wait-end"]
	if _, ok := marks["wrapped-command-end"]; ok && load.IsZero() {
		// No initial wait: the command ran from the first reading.
		load = first
	}
	add("load", load, "wrapped-command-end", "post-wait-start", "shutdown")
	cool := marks["post-wait-start"]
	if cool.IsZero() {
		cool = marks["wrapped-command-end"]
	}
	add("cooldown", cool, "post-wait-end", "shutdown")
	return phases
}

// lstPoints maps one poll-data record's readings onto points, one per device.
func lstPoints(m map[string]json.RawMessage, t time.Time, host string, res *FileResult, lineOf func(string) int, seen map[string]bool) []point.Point {
	byDevice := map[string]*point.Point{}
	var order []string
	get := func(measurement string, tags ...string) *point.Point {
		key := measurement + "\x00" + strings.Join(tags, "\x00")
		if p, ok := byDevice[key]; ok {
			return p
		}
		p := point.New(measurement, t)
		for i := 0; i+1 < len(tags); i += 2 {
			p.AddTag(tags[i], tags[i+1])
		}
		p.AddTag("host", host)
		byDevice[key] = &p
		order = append(order, key)
		return &p
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		raw := m[k]
		if k == "event" || k == "timestamp" || k == "dummy-end" || string(raw) == "null" {
			continue
		}
		if g := gpuKey.FindStringSubmatch(k); g != nil {
			if g[2] == "name" {
				var name string
				if json.Unmarshal(raw, &name) == nil {
					get("gpu", "gpu", g[1]).AddTag("model", name)
				}
				continue
			}
			f, ok := lstGPU[g[2]]
			if !ok {
				res.warnOnce(seen, "LibSensorsTools key gpu-N-"+g[2]+" has no heatsink equivalent; not imported")
				continue
			}
			if v, ok := lstNumber(raw, k, res, lineOf(k)); ok {
				if err := addGPUField(get("gpu", "gpu", g[1]), f.field, v*f.scale); err != nil {
					res.bad(lineOf(k), fmt.Errorf("%s: %w", k, err))
				}
			}
			continue
		}
		if c := cpuKey.FindStringSubmatch(k); c != nil {
			if v, ok := lstNumber(raw, k, res, lineOf(k)); ok {
				n, _ := strconv.Atoi(c[2])
				chipName, _, _ := strings.Cut(c[1], "-")
				get("hwmon", "chip", c[1], "chip_name", chipName, "sensor", fmt.Sprintf("temp%d", n+1), "class", chipClass(chipName)).AddFloat("temp_c", v)
			}
			continue
		}
		if c := coreKey.FindStringSubmatch(k); c != nil {
			if v, ok := lstNumber(raw, k, res, lineOf(k)); ok {
				get("cpufreq", "cpu", "cpu"+c[1]).AddFloat("freq_mhz", v/1e3) // kHz
			}
			continue
		}
		if c := nvmeKey.FindStringSubmatch(k); c != nil {
			if v, ok := lstNumber(raw, k, res, lineOf(k)); ok {
				sensor := "Composite"
				if c[2] != "0" {
					sensor = "Sensor " + c[2]
				}
				get("nvme", "device", "nvme"+c[1], "sensor", sensor).AddFloat("temp_c", v)
			}
			continue
		}
		if c := submerKey.FindStringSubmatch(k); c != nil {
			field, ok := lstSubmer[c[2]]
			if !ok {
				res.warnOnce(seen, "LibSensorsTools key submer-N-"+c[2]+" has no heatsink equivalent; not imported")
				continue
			}
			if v, ok := lstNumber(raw, k, res, lineOf(k)); ok {
				get("tank", "tank", "submer-"+c[1], "vendor", "submer").AddFloat(field, v)
			}
			continue
		}
		if c := pduKey.FindStringSubmatch(k); c != nil {
			if v, ok := lstNumber(raw, k, res, lineOf(k)); ok {
				unit, num := c[2], c[3]
				if num == "" {
					num = "1"
				}
				// APC rPDU2 phase and bank loads are in tenths of an ampere.
				get("pdu", "pdu", "pdu-"+c[1], unit, num).AddFloat("current_a", v/10)
			}
			continue
		}
		res.warnOnce(seen, "LibSensorsTools key "+k+" has no heatsink equivalent; not imported")
	}
	out := make([]point.Point, 0, len(order))
	for _, key := range order {
		if p := byDevice[key]; len(p.Fields) > 0 {
			out = append(out, *p)
		}
	}
	return out
}

func lstNumber(raw json.RawMessage, key string, res *FileResult, line int) (float64, bool) {
	var v float64
	if err := json.Unmarshal(raw, &v); err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		res.bad(line, fmt.Errorf("%s: %s is not a number", key, clip(raw)))
		return 0, false
	}
	return v, true
}

func clip(b []byte) string {
	if len(b) > 40 {
		return string(b[:40]) + "..."
	}
	return string(b)
}

// chipClass gives a libsensors chip prefix the hwmon class of the data model.
func chipClass(chip string) string {
	switch chip {
	case "k10temp", "zenpower":
		return "cpu"
	case "coretemp":
		return "cpu_package"
	case "nvme":
		return "nvme"
	case "acpitz":
		return "acpi"
	}
	return "other"
}

// splitRecords cuts the top-level JSON array into its objects, by brace
// depth outside strings, and hands each to fn with the line it starts on.
// It reads a stream of any length, needs no closing bracket (a killed tool
// leaves none), and reports a record cut short by the end of the file
// through bad instead of losing the records before it.
func splitRecords(r io.Reader, fn func(line int, rec []byte) error, bad func(line int, err error)) error {
	br := bufio.NewReaderSize(r, 1<<16)
	var rec []byte
	line, start := 1, 0
	depth := 0
	inString, escaped := false, false
	junkLine := 0
	for {
		c, err := br.ReadByte()
		if err != nil {
			if depth > 0 {
				bad(start, errors.New("record cut short by the end of the file (the tool was stopped before it finished writing)"))
			}
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
		if depth == 0 {
			switch c {
			case '{':
				depth, start = 1, line
				rec = append(rec[:0], c)
			case '\n':
				line++
			case ' ', '\t', '\r', '[', ']', ',':
			default:
				if junkLine != line {
					junkLine = line
					bad(line, fmt.Errorf("unexpected %q between records", c))
				}
			}
			continue
		}
		rec = append(rec, c)
		if c == '\n' {
			line++
		}
		switch {
		case escaped:
			escaped = false
		case inString:
			switch c {
			case '\\':
				escaped = true
			case '"':
				inString = false
			case '\n':
				// JSON strings hold no raw newline: the record is broken.
				// Resynchronise on the next line.
				bad(start, errors.New("unterminated string"))
				depth, inString = 0, false
			}
		case c == '"':
			inString = true
		case c == '{' || c == '[':
			depth++
		case c == '}' || c == ']':
			depth--
			if depth == 0 {
				if err := fn(start, rec); err != nil {
					return err
				}
			}
		}
		if depth > 1<<10 {
			bad(start, errors.New("record nested too deeply"))
			depth = 0
		}
	}
}
