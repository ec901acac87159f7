// Package pdu reads rack power distribution units over SNMP (v1, v2c and v3):
// APC PowerNet-MIB presets and any PDU described by OIDs in YAML. One PDU is
// polled with one Get request per tick (split only past max_oids), and a
// reading that fails (no such object, wrong type) costs only itself.
//
// Points: measurement pdu, tags pdu and phase/bank/outlet, fields current_a,
// power_w, energy_j and power_derived (docs/data-model.md).
package pdu

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gosnmp/gosnmp"
	"github.com/heatsink-hpc/heatsink/point"
	"github.com/heatsink-hpc/heatsink/point/schema"
)

// reading is one OID of the sample plan.
type reading struct {
	oid   string // numeric, with a leading dot, as gosnmp returns names
	name  string // for errors: the MIB name and index, or the OID
	field string
	conv  func(float64) float64
	group int
}

// group is one point per tick: the whole PDU, or one phase, bank or outlet.
type group struct {
	tagKey, tagValue string
	current, power   bool // which readings are configured
}

// Source samples one PDU. It implements the collector's Source, Closer and
// Describer interfaces.
type Source struct {
	cfg      Config
	readings []reading
	groups   []group

	mu     sync.Mutex
	snmp   *gosnmp.GoSNMP
	sysStr string // sysDescr or sysName, from Discover
}

// New checks cfg, reads its secrets and returns a source for it; nothing is
// sent until Discover.
func New(cfg Config) (*Source, error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("pdu %s: %w", cfg.Name, err)
	}
	if err := cfg.resolve(); err != nil {
		return nil, fmt.Errorf("pdu %s: %w", cfg.Name, err)
	}
	cfg = cfg.withDefaults()
	rs, gs, err := compile(cfg)
	if err != nil {
		return nil, fmt.Errorf("pdu %s: %w", cfg.Name, err)
	}
	return &Source{cfg: cfg, readings: rs, groups: gs}, nil
}

// Name returns "pdu:NAME".
func (s *Source) Name() string { return "pdu:" + s.cfg.Name }

// Discover opens the SNMP session and reads the agent's sysDescr and
// sysName, which proves the target answers and the credentials work.
func (s *Source) Discover(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closeLocked()
	g, err := s.newClient()
	if err != nil {
		return err
	}
	if err := g.Connect(); err != nil {
		return fmt.Errorf("pdu %s: connect %s: %w", s.cfg.Name, s.addr(), err)
	}
	g.Context = ctx
	pkt, err := g.Get([]string{oidSysDescr, oidSysName})
	g.Context = context.Background()
	if err != nil {
		g.Conn.Close()
		return fmt.Errorf("pdu %s: %s: %w", s.cfg.Name, s.addr(), explain(err, s.cfg))
	}
	s.sysStr = ""
	if pkt.Error == gosnmp.NoError {
		var parts []string
		for _, v := range pkt.Variables {
			if v.Type == gosnmp.OctetString {
				if b, ok := v.Value.([]byte); ok && len(b) > 0 {
					parts = append(parts, strings.Join(strings.Fields(string(b)), " "))
				}
			}
		}
		s.sysStr = strings.Join(parts, ", ")
	}
	s.snmp = g
	return nil
}

const (
	oidSysDescr = ".1.3.6.1.2.1.1.1.0"
	oidSysName  = ".1.3.6.1.2.1.1.5.0"
)

func (s *Source) addr() string {
	return "udp://" + net.JoinHostPort(s.cfg.Target, strconv.Itoa(int(s.cfg.Port)))
}

func (s *Source) newClient() (*gosnmp.GoSNMP, error) {
	c := s.cfg
	g := &gosnmp.GoSNMP{
		Target:    c.Target,
		Port:      c.Port,
		Transport: "udp",
		Timeout:   c.Timeout,
		Retries:   *c.Retries,
		MaxOids:   c.MaxOIDs,
		Context:   context.Background(),
	}
	switch c.Version {
	case "1":
		g.Version = gosnmp.Version1
		g.Community = c.Community.Reveal()
	case "2c":
		g.Version = gosnmp.Version2c
		g.Community = c.Community.Reveal()
	case "3":
		g.Version = gosnmp.Version3
		g.SecurityModel = gosnmp.UserSecurityModel
		g.ContextName = c.V3.ContextName
		usm := &gosnmp.UsmSecurityParameters{UserName: c.V3.User}
		switch c.V3.level() {
		case "noAuthNoPriv":
			g.MsgFlags = gosnmp.NoAuthNoPriv
		case "authNoPriv":
			g.MsgFlags = gosnmp.AuthNoPriv
		default:
			g.MsgFlags = gosnmp.AuthPriv
		}
		if g.MsgFlags != gosnmp.NoAuthNoPriv {
			usm.AuthenticationProtocol = authProtocol(c.V3.AuthProtocol)
			usm.AuthenticationPassphrase = c.V3.AuthPassword.Reveal()
		} else {
			usm.AuthenticationProtocol = gosnmp.NoAuth
		}
		if g.MsgFlags == gosnmp.AuthPriv {
			usm.PrivacyProtocol = privProtocol(c.V3.PrivProtocol)
			usm.PrivacyPassphrase = c.V3.PrivPassword.Reveal()
		} else {
			usm.PrivacyProtocol = gosnmp.NoPriv
		}
		g.SecurityParameters = usm
	default:
		return nil, fmt.Errorf("pdu %s: SNMP version %q", c.Name, c.Version)
	}
	return g, nil
}

func authProtocol(s string) gosnmp.SnmpV3AuthProtocol {
	switch strings.ToUpper(s) {
	case "MD5":
		return gosnmp.MD5
	case "SHA-224":
		return gosnmp.SHA224
	case "SHA-256":
		return gosnmp.SHA256
	case "SHA-384":
		return gosnmp.SHA384
	case "SHA-512":
		return gosnmp.SHA512
	}
	return gosnmp.SHA
}

func privProtocol(s string) gosnmp.SnmpV3PrivProtocol {
	switch strings.ToUpper(s) {
	case "DES":
		return gosnmp.DES
	case "AES-192":
		return gosnmp.AES192
	case "AES-256":
		return gosnmp.AES256
	case "AES-192C":
		return gosnmp.AES192C
	case "AES-256C":
		return gosnmp.AES256C
	}
	return gosnmp.AES
}

// Describe lists the PDU, how it is reached and what is read from it.
func (s *Source) Describe() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	ver := "SNMPv" + s.cfg.Version
	if s.cfg.Version == "3" {
		ver += " " + s.cfg.V3.level() + " user " + s.cfg.V3.User
	}
	what := fmt.Sprintf("%d readings", len(s.readings))
	if s.cfg.Preset != "" {
		what += fmt.Sprintf(" (%s, %d phases, %d banks)", s.cfg.Preset, s.cfg.Phases, s.cfg.Banks)
	}
	d := fmt.Sprintf("%s %s %s: %s", s.cfg.Name, s.addr(), ver, what)
	if s.sysStr != "" {
		d += "; agent: " + s.sysStr
	}
	return []string{d}
}

// Close releases the SNMP socket.
func (s *Source) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closeLocked()
	return nil
}

func (s *Source) closeLocked() {
	if s.snmp != nil && s.snmp.Conn != nil {
		s.snmp.Conn.Close()
	}
	s.snmp = nil
}

// Sample reads every configured OID, in as few Get requests as max_oids
// allows, and returns one point per device, phase, bank and outlet. A reading
// that fails is left out and named in the returned error; the others are
// kept. Where a group has current but no configured power reading, power is
// derived as current times voltage_v and power_derived is set.
func (s *Source) Sample(ctx context.Context, t time.Time, buf []point.Point) ([]point.Point, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.snmp == nil {
		return buf, fmt.Errorf("pdu %s: not discovered", s.cfg.Name)
	}
	s.snmp.Context = ctx
	defer func() {
		if s.snmp != nil {
			s.snmp.Context = context.Background()
		}
	}()
	vals := make([]float64, len(s.readings))
	got := make([]bool, len(s.readings))
	var errs []error
	for lo := 0; lo < len(s.readings); lo += s.cfg.MaxOIDs {
		hi := min(lo+s.cfg.MaxOIDs, len(s.readings))
		errs = append(errs, s.get(lo, hi, vals, got)...)
	}
	n := len(buf)
	buf = s.points(t, buf, vals, got)
	if len(errs) > 0 {
		return buf, &SampleError{PDU: s.cfg.Name, Failed: len(errs), Total: len(s.readings), Errs: errs, Partial: len(buf) > n}
	}
	return buf, nil
}

// get reads readings [lo, hi) in one request, retrying without the OIDs an
// SNMPv1 agent names as noSuchName and splitting when the answer is tooBig.
func (s *Source) get(lo, hi int, vals []float64, got []bool) []error {
	idx := make([]int, 0, hi-lo)
	for i := lo; i < hi; i++ {
		idx = append(idx, i)
	}
	var errs []error
	for len(idx) > 0 {
		oids := make([]string, len(idx))
		for k, i := range idx {
			oids[k] = s.readings[i].oid
		}
		pkt, err := s.snmp.Get(oids)
		if err != nil {
			return append(errs, &RequestError{Readings: s.names(idx), Err: explain(err, s.cfg)})
		}
		switch pkt.Error {
		case gosnmp.NoError:
		case gosnmp.NoSuchName:
			// SNMPv1 fails the whole request for one missing OID and names it
			// by its 1-based index; drop it and ask again for the rest.
			k := int(pkt.ErrorIndex) - 1
			if k < 0 || k >= len(idx) {
				return append(errs, &RequestError{Readings: s.names(idx), Err: fmt.Errorf("agent answered noSuchName with bad index %d", pkt.ErrorIndex)})
			}
			errs = append(errs, &ReadingError{Reading: s.readings[idx[k]].name, OID: oids[k], Err: ErrNoSuchObject})
			idx = append(idx[:k], idx[k+1:]...)
			continue
		case gosnmp.TooBig:
			if len(idx) == 1 {
				return append(errs, &ReadingError{Reading: s.readings[idx[0]].name, OID: oids[0], Err: errors.New("agent answered tooBig")})
			}
			half := len(idx) / 2
			errs = append(errs, s.getList(idx[:half], vals, got)...)
			idx = idx[half:]
			continue
		default:
			return append(errs, &RequestError{Readings: s.names(idx), Err: fmt.Errorf("agent answered %v (index %d)", pkt.Error, pkt.ErrorIndex)})
		}
		errs = append(errs, s.decode(idx, pkt.Variables, vals, got)...)
		return errs
	}
	return errs
}

// getList is get for a list of reading indices that may not be contiguous.
func (s *Source) getList(idx []int, vals []float64, got []bool) []error {
	var errs []error
	for _, i := range idx {
		errs = append(errs, s.get(i, i+1, vals, got)...)
	}
	return errs
}

// decode matches answered variables to readings by OID (agents answer in
// request order, but nothing is assumed) and converts them.
func (s *Source) decode(idx []int, vars []gosnmp.SnmpPDU, vals []float64, got []bool) []error {
	var errs []error
	byOID := make(map[string]*gosnmp.SnmpPDU, len(vars))
	for k := range vars {
		name := vars[k].Name
		if name != "" && name[0] != '.' {
			name = "." + name
		}
		byOID[name] = &vars[k]
	}
	for _, i := range idx {
		r := &s.readings[i]
		v, ok := byOID[r.oid]
		if !ok {
			errs = append(errs, &ReadingError{Reading: r.name, OID: r.oid, Err: errors.New("missing from the agent's answer")})
			continue
		}
		x, err := Numeric(*v)
		if err != nil {
			errs = append(errs, &ReadingError{Reading: r.name, OID: r.oid, Err: err})
			continue
		}
		vals[i], got[i] = r.conv(x), true
	}
	return errs
}

func (s *Source) names(idx []int) []string {
	out := make([]string, len(idx))
	for k, i := range idx {
		out[k] = s.readings[i].name
	}
	return out
}

// points builds one point per group that has at least one reading this tick.
func (s *Source) points(t time.Time, buf []point.Point, vals []float64, got []bool) []point.Point {
	for g, grp := range s.groups {
		p := point.New(schema.PDU, t)
		p.AddTag(schema.TagPDU, s.cfg.Name)
		if grp.tagKey != "" {
			p.AddTag(grp.tagKey, grp.tagValue)
		}
		for i, r := range s.readings {
			if r.group == g && got[i] {
				p.AddFloat(r.field, vals[i])
			}
		}
		if len(p.Fields) == 0 {
			continue
		}
		if grp.power {
			if _, ok := p.Field(schema.FieldPowerW); ok {
				p.AddBool(schema.FieldPowerDerived, false)
			}
		} else if grp.current {
			if a, ok := p.Float(schema.FieldCurrentA); ok {
				// Rounded to the milliwatt: 3.8 A x 208 V is 790.4 W, not
				// its binary neighbour 790.4000000000001.
				p.AddFloat(schema.FieldPowerW, math.Round(a*s.cfg.VoltageV*1000)/1000)
				p.AddBool(schema.FieldPowerDerived, true)
			}
		}
		buf = append(buf, p)
	}
	return buf
}

// ErrNoSuchObject is a reading the agent does not have (noSuchObject,
// noSuchInstance, endOfMibView, or SNMPv1 noSuchName).
var ErrNoSuchObject = errors.New("no such object on the agent")

// ReadingError is one OID that could not be read this tick.
type ReadingError struct {
	Reading, OID string
	Err          error
}

func (e *ReadingError) Error() string {
	if e.Reading == e.OID {
		return fmt.Sprintf("%s: %v", e.OID, e.Err)
	}
	return fmt.Sprintf("%s (%s): %v", e.Reading, e.OID, e.Err)
}

func (e *ReadingError) Unwrap() error { return e.Err }

// RequestError is a Get request that failed as a whole (timeout,
// authentication): every reading in it is lost for this tick.
type RequestError struct {
	Readings []string
	Err      error
}

func (e *RequestError) Error() string {
	names := e.Readings
	if len(names) > 4 {
		names = append(names[:4:4], fmt.Sprintf("and %d more", len(e.Readings)-4))
	}
	return fmt.Sprintf("%s: %v", strings.Join(names, ", "), e.Err)
}

func (e *RequestError) Unwrap() error { return e.Err }

// SampleError collects the readings of one tick that failed.
type SampleError struct {
	PDU           string
	Failed, Total int
	Partial       bool // some readings of the tick were kept
	Errs          []error
}

func (e *SampleError) Error() string {
	msgs := make([]string, len(e.Errs))
	for i, err := range e.Errs {
		msgs[i] = err.Error()
	}
	return fmt.Sprintf("pdu %s: %s", e.PDU, strings.Join(msgs, "; "))
}

func (e *SampleError) Unwrap() []error { return e.Errs }

// Numeric returns an SNMP value as a number, or an error naming what it is
// instead: a missing object, or a type that is not a number.
func Numeric(v gosnmp.SnmpPDU) (float64, error) {
	switch v.Type {
	case gosnmp.NoSuchObject, gosnmp.NoSuchInstance, gosnmp.EndOfMibView:
		return 0, fmt.Errorf("%w (%v)", ErrNoSuchObject, v.Type)
	case gosnmp.Integer, gosnmp.Counter32, gosnmp.Gauge32, gosnmp.TimeTicks, gosnmp.Counter64, gosnmp.Uinteger32:
		switch x := v.Value.(type) {
		case int:
			return float64(x), nil
		case uint:
			return float64(x), nil
		case uint32:
			return float64(x), nil
		case uint64:
			return float64(x), nil
		case int64:
			return float64(x), nil
		}
	case gosnmp.OpaqueFloat:
		if x, ok := v.Value.(float32); ok {
			return float64(x), nil
		}
	case gosnmp.OpaqueDouble:
		if x, ok := v.Value.(float64); ok {
			return x, nil
		}
	case gosnmp.OctetString:
		b, _ := v.Value.([]byte)
		return 0, fmt.Errorf("wrong type: OctetString %q, not a number", truncate(string(b), 40))
	}
	return 0, fmt.Errorf("wrong type: %v (%T), not a number", v.Type, v.Value)
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}

// explain turns gosnmp's errors into what an operator can act on.
func explain(err error, c Config) error {
	switch {
	case errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled):
		return fmt.Errorf("no answer before the collector's deadline: %w", err)
	case errors.Is(err, gosnmp.ErrMaxRetriesExceeded):
		return fmt.Errorf("no answer within %v x %d attempts (agent down, wrong port, or a community the agent ignores): %w",
			c.Timeout, *c.Retries+1, err)
	case errors.Is(err, gosnmp.ErrWrongDigest), errors.Is(err, gosnmp.ErrUnknownUsername), errors.Is(err, gosnmp.ErrDecryption),
		strings.Contains(err.Error(), "not authentic"):
		return fmt.Errorf("SNMPv3 user %q refused (check user, protocols and passwords): %w", c.V3.User, err)
	}
	return err
}
