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
	"github.com/heatsink-hpc/heatsink/point/schema"
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
//
// Two clocks: event timestamps and the polls of the initial wait count from
// the tool's start, but polls taken while the wrapped command runs and
// during the post-wait count from t0, the instant of initial-wait-start
// (common_driver.cpp passes t0 to poll_cycle there), so they are moved by
// t0 onto the one time axis. Which clock a poll uses, and so its phase, is
// given by where it stands between the event records, never by comparing
// its timestamp with theirs. v0.1.0 closes each poll with "dummy-end" and
// writes its duration as a separate poll-update record; v0.3.0 writes
// "poll-update-duration" inside the poll. Both read the same way.

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
	"gpu-temperature":    {schema.FieldTempC, 1},
	"temperature":        {schema.FieldTempC, 1},
	"memory-temperature": {schema.FieldMemTempC, 1},
	"power-usage":        {schema.FieldPowerW, 1e-3},
	"power-limit":        {schema.FieldPowerLimitW, 1e-3},
	"utilization-gpu":    {schema.FieldUtilPct, 1},
	"utilization-memory": {schema.FieldMemUtilPct, 1},
	"memory-used":        {schema.FieldMemUsedBytes, 1},
	"memory-total":       {schema.FieldMemTotalBytes, 1},
	"pstate":             {"pstate", 1},
}

// lstSubmer maps Submer SmartPod API names onto the tank measurement, as
// sensors/tank does.
var lstSubmer = map[string]string{
	"temperature": schema.FieldCoolantTempC, "setpoint": schema.FieldSetpointC, "consumption": schema.FieldConsumptionW,
	"dissipation": schema.FieldDissipationKW, "dissipationC": schema.FieldDissipationC, "dissipationW": schema.FieldDissipationW,
	"mPUE": "mpue", "mpue": "mpue", "pump1rpm": schema.FieldPump1RPM, "pump2rpm": schema.FieldPump2RPM,
	"cti": schema.FieldCoolantInC, "cto": schema.FieldCoolantOutC, "cf": schema.FieldCoolantFlowLPM,
	"wti": schema.FieldWaterInC, "wto": schema.FieldWaterOutC, "wf": schema.FieldWaterFlowLPM,
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
	// t0 is initial-wait-start's timestamp; fromT0 is set once the
	// initial-wait-end record has been passed, after which polls count from t0.
	var t0 float64
	haveT0, fromT0 := false, false
	// Each poll's phase by its position, to check the times against.
	posPhase := ""
	var polls []lstPoll
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
			if fromT0 {
				sec += t0
			}
			if posPhase != "" {
				polls = append(polls, lstPoll{line: line, at: at(sec), phase: posPhase})
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
			switch event {
			case "initial-wait-start":
				if !haveT0 {
					t0, haveT0 = sec, true
				}
				posPhase = "baseline"
			case "initial-wait-end":
				fromT0 = haveT0
				posPhase = "load"
			case "wrapped-command-end", "post-wait-start":
				posPhase = "cooldown"
			case "post-wait-end", "shutdown":
				posPhase = ""
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
	checkPollPhases(polls, res)
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

// lstPoll is a poll's time and the phase its place in the file puts it in.
type lstPoll struct {
	line  int
	at    time.Time
	phase string
}

// checkPollPhases warns, once, when polls fall outside the phase their
// position in the file gives them: a clock the reader does not know about.
func checkPollPhases(polls []lstPoll, res *FileResult) {
	spans := map[string]rundir.Phase{}
	for _, ph := range res.Phases {
		spans[ph.Name] = ph
	}
	n, first := 0, 0
	for _, p := range polls {
		ph, ok := spans[p.phase]
		if !ok {
			continue
		}
		if p.at.Before(ph.Start) || (ph.End != nil && p.at.After(*ph.End)) {
			if n == 0 {
				first = p.line
			}
			n++
		}
	}
	if n > 0 {
		res.Warnings = append(res.Warnings, fmt.Sprintf("%d LibSensorsTools polls (the first on line %d) are stamped outside the phase they were written in; their times are kept as recorded", n, first))
	}
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
		p.AddTag(schema.TagHost, host)
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
		if k == "event" || k == "timestamp" || k == "dummy-end" || k == "poll-update-duration" || string(raw) == "null" {
			continue
		}
		if g := gpuKey.FindStringSubmatch(k); g != nil {
			if g[2] == "name" {
				var name string
				if json.Unmarshal(raw, &name) == nil {
					get(schema.GPU, "gpu", g[1]).AddTag(schema.TagModel, name)
				}
				continue
			}
			f, ok := lstGPU[g[2]]
			if !ok {
				res.warnOnce(seen, "LibSensorsTools key gpu-N-"+g[2]+" has no heatsink equivalent; not imported")
				continue
			}
			if v, ok := lstNumber(raw, k, res, lineOf(k)); ok {
				if err := addGPUField(get(schema.GPU, "gpu", g[1]), f.field, v*f.scale); err != nil {
					res.bad(lineOf(k), fmt.Errorf("%s: %w", k, err))
				}
			}
			continue
		}
		if c := cpuKey.FindStringSubmatch(k); c != nil {
			if v, ok := lstNumber(raw, k, res, lineOf(k)); ok {
				n, _ := strconv.Atoi(c[2])
				chipName, _, _ := strings.Cut(c[1], "-")
				get(schema.Hwmon, "chip", c[1], "chip_name", chipName, "sensor", fmt.Sprintf("temp%d", n+1), "class", chipClass(chipName)).AddFloat(schema.FieldTempC, v)
			}
			continue
		}
		if c := coreKey.FindStringSubmatch(k); c != nil {
			if v, ok := lstNumber(raw, k, res, lineOf(k)); ok {
				get(schema.Cpufreq, "cpu", "cpu"+c[1]).AddFloat(schema.FieldFreqMHz, v/1e3) // kHz
			}
			continue
		}
		if c := nvmeKey.FindStringSubmatch(k); c != nil {
			if v, ok := lstNumber(raw, k, res, lineOf(k)); ok {
				sensor := "Composite"
				if c[2] != "0" {
					sensor = "Sensor " + c[2]
				}
				get(schema.NVMe, "device", "nvme"+c[1], "sensor", sensor).AddFloat(schema.FieldTempC, v)
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
				get(schema.Tank, "tank", "submer-"+c[1], "vendor", "submer").AddFloat(field, v)
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
				get(schema.PDU, "pdu", "pdu-"+c[1], unit, num).AddFloat(schema.FieldCurrentA, v/10)
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
