package recordings

import (
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/heatsink-hpc/heatsink/point"
	"github.com/heatsink-hpc/heatsink/point/schema"
)

// precisions maps a line-protocol precision to nanoseconds per unit.
var precisions = map[string]int64{"ns": 1, "us": 1e3, "ms": 1e6, "s": 1e9}

// precisionOf guesses a timestamp's unit from its magnitude: for times
// between 2001 and 2286, seconds have 10 digits, milliseconds 13,
// microseconds 16, nanoseconds 19.
func precisionOf(raw int64) string {
	if raw < 0 {
		raw = -raw
	}
	switch n := len(strconv.FormatInt(raw, 10)); {
	case n <= 11:
		return "s"
	case n <= 14:
		return "ms"
	case n <= 17:
		return "us"
	}
	return "ns"
}

// plausible bounds imported times: a timestamp outside them was read with
// the wrong precision or is corrupt.
var (
	earliest = time.Date(1990, 1, 1, 0, 0, 0, 0, time.UTC)
	latest   = time.Date(2200, 1, 1, 0, 0, 0, 0, time.UTC)
)

// readLineProtocol reads InfluxDB line protocol. Points keep their
// measurement, tags and fields, except Telegraf's nvidia_smi input, which
// is mapped onto heatsink's gpu measurement so analysis finds the GPUs.
func readLineProtocol(r io.Reader, res *FileResult, o Options, fn func(*point.Point) error) error {
	prec := o.Precision
	if prec != "" {
		if _, ok := precisions[prec]; !ok {
			return fmt.Errorf("precision %q: want ns, us, ms or s", prec)
		}
	}
	rd := point.NewReader(r, res.Path)
	tr := tracker{r: res}
	seen := map[string]bool{}
	noHost := false
	for {
		p, lerr, ok := rd.Next()
		if !ok {
			break
		}
		if lerr != nil {
			res.Bad = append(res.Bad, lerr)
			continue
		}
		// Read as nanoseconds, the raw number is the timestamp as written.
		raw := p.Time.UnixNano()
		// Until a line's time is plausible the file's precision is only a
		// guess for this line: fixing it from a corrupt first timestamp
		// (0 reads as seconds) made every later nanosecond line overflow.
		lineprec, how := prec, "the file's precision"
		if o.Precision != "" {
			how = "the precision given"
		} else if lineprec == "" {
			lineprec, how = precisionOf(raw), "guessed from its digits"
		}
		mult := precisions[lineprec]
		if raw > math.MaxInt64/mult || raw < math.MinInt64/mult {
			res.bad(rd.Line(), fmt.Errorf("timestamp %d overflows at %s precision (%s)", raw, lineprec, how))
			continue
		}
		p.Time = time.Unix(0, raw*mult)
		if p.Time.Before(earliest) || p.Time.After(latest) {
			res.bad(rd.Line(), fmt.Errorf("timestamp %d is %s at %s precision (%s; give --precision if it is wrong)",
				raw, p.Time.UTC().Format(time.RFC3339), lineprec, how))
			continue
		}
		if prec == "" {
			prec = lineprec
			res.Precision = prec
		}
		if p.Measurement == "nvidia_smi" {
			p = fromTelegrafNvidiaSMI(&p, res, seen)
			if len(p.Fields) == 0 {
				res.bad(rd.Line(), fmt.Errorf("nvidia_smi point with no field heatsink knows"))
				continue
			}
		}
		if p.Tag(schema.TagHost) == "" {
			if o.Host != "" {
				p.AddTag(schema.TagHost, o.Host)
			} else {
				noHost = true
			}
		}
		if err := tr.keep(rd.Line(), &p, fn); err != nil {
			return err
		}
	}
	if err := rd.Err(); err != nil {
		return err
	}
	if noHost {
		res.Warnings = append(res.Warnings, "some points have no host tag (give --host to set one)")
	}
	tr.finish()
	return nil
}

// describe names a point's series without its host, for run.json.
func describe(p *point.Point) string {
	var b strings.Builder
	b.WriteString(p.Measurement)
	for _, t := range p.Tags {
		if t.Key == "host" {
			continue
		}
		b.WriteByte(' ')
		b.WriteString(t.Key)
		b.WriteByte('=')
		b.WriteString(t.Value)
	}
	return b.String()
}

// telegrafGPUFields maps Telegraf's nvidia_smi fields onto the gpu
// measurement, with the scale to heatsink's units.
var telegrafGPUFields = map[string]struct {
	field string
	scale float64
}{
	"temperature_gpu":       {schema.FieldTempC, 1},
	"power_draw":            {schema.FieldPowerW, 1},
	"power_limit":           {schema.FieldPowerLimitW, 1},
	"utilization_gpu":       {schema.FieldUtilPct, 1},
	"utilization_memory":    {schema.FieldMemUtilPct, 1},
	"memory_used":           {schema.FieldMemUsedBytes, 1 << 20}, // MiB
	"memory_total":          {schema.FieldMemTotalBytes, 1 << 20},
	"clocks_current_sm":     {schema.FieldSMClockMHz, 1},
	"clocks_current_memory": {schema.FieldMemClockMHz, 1},
}

func fromTelegrafNvidiaSMI(p *point.Point, res *FileResult, seen map[string]bool) point.Point {
	q := point.New(schema.GPU, p.Time)
	for _, t := range p.Tags {
		switch t.Key {
		case "index":
			q.AddTag(schema.TagGPU, t.Value)
		case "uuid", "host":
			q.AddTag(t.Key, t.Value)
		case "name":
			q.AddTag(schema.TagModel, t.Value)
		case "pstate":
			if n, ok := parsePstate(t.Value); ok {
				q.AddInt(schema.FieldPState, n)
			}
		}
	}
	for _, f := range p.Fields {
		m, ok := telegrafGPUFields[f.Key]
		if !ok {
			res.warnOnce(seen, "telegraf nvidia_smi field "+f.Key+" has no heatsink equivalent; not imported")
			continue
		}
		if v, ok := point.Float(f.Value); ok {
			addGPUField(&q, m.field, v*m.scale)
		}
	}
	return q
}

// parsePstate reads "P0".."P15" (or a bare number).
func parsePstate(s string) (int64, bool) {
	s = strings.TrimPrefix(strings.TrimSpace(s), "P")
	n, err := strconv.ParseInt(s, 10, 64)
	return n, err == nil && n >= 0 && n <= 32
}
