package pdu

import (
	"context"
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/heatsink-hpc/heatsink/configs/secret"
	"github.com/heatsink-hpc/heatsink/point"
	"github.com/heatsink-hpc/heatsink/sensors/pdu/snmptest"
)

// APC values in the MIB's units: tenths of A, hundredths of kW, tenths of kWh.
var apcValues = map[string]string{
	oidRPDU2DeviceStatusPower + ".1":  "gauge 123",  // 1.23 kW
	oidRPDU2DeviceStatusEnergy + ".1": "gauge 4567", // 456.7 kWh
	oidRPDU2PhaseStatusCurrent + ".1": "gauge 84",   // 8.4 A
	oidRPDU2PhaseStatusPower + ".1":   "gauge 172",  // 1.72 kW
	oidRPDU2BankStatusCurrent + ".1":  "gauge 40",   // 4.0 A
	oidRPDU2BankStatusCurrent + ".2":  "gauge 44",   // 4.4 A
	oidRPDULoadStatusLoad + ".1":      "gauge 52",   // 5.2 A (legacy)
}

func rpdu2(port uint16) Config {
	return Config{Name: "rack1", Target: "127.0.0.1", Port: port, Community: secret.Literal("public"),
		Preset: PresetAPCRPDU2, Phases: 1, Banks: 2, Timeout: 2 * time.Second}
}

func sample(t *testing.T, s *Source) ([]point.Point, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return s.Sample(ctx, time.Unix(1700000000, 0), nil)
}

func discover(t *testing.T, cfg Config) *Source {
	t.Helper()
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := s.Discover(ctx); err != nil {
		t.Fatal(err)
	}
	return s
}

// find returns the point of the PDU group with tag key=value ("" for the device).
func find(t *testing.T, pts []point.Point, key, value string) point.Point {
	t.Helper()
	for _, p := range pts {
		if p.Measurement != "pdu" || p.Tag("pdu") != "rack1" {
			t.Fatalf("stray point %s", p.String())
		}
		if key == "" && p.Tag("phase") == "" && p.Tag("bank") == "" && p.Tag("outlet") == "" {
			return p
		}
		if key != "" && p.Tag(key) == value {
			return p
		}
	}
	t.Fatalf("no point for %s=%s in %v", key, value, pts)
	return point.Point{}
}

func wantFloat(t *testing.T, p point.Point, field string, want float64) {
	t.Helper()
	got, ok := p.Float(field)
	if !ok {
		t.Errorf("%s: no field %s", p.String(), field)
		return
	}
	if math.Abs(got-want) > 1e-9*math.Max(1, math.Abs(want)) {
		t.Errorf("%s: %s = %v, want %v", p.String(), field, got, want)
	}
}

func wantBool(t *testing.T, p point.Point, field string, want bool) {
	t.Helper()
	v, ok := p.Field(field)
	if !ok || v.BoolV() != want {
		t.Errorf("%s: %s = %v (present %v), want %v", p.String(), field, v, ok, want)
	}
}

func TestAPCRPDU2PresetReadsChangingValuesInOneRequest(t *testing.T) {
	a := snmptest.Start(t, apcValues)
	r := startRelay(t, a.Port)
	s := discover(t, rpdu2(r.port))
	if d := s.Describe()[0]; !strings.Contains(d, "AP8641") || !strings.Contains(d, "6 readings") {
		t.Errorf("Describe = %q, want the agent's sysDescr and 6 readings", d)
	}
	before := r.requests.Load()
	pts, err := sample(t, s)
	if err != nil {
		t.Fatal(err)
	}
	if n := r.requests.Load() - before; n != 1 {
		t.Errorf("%d requests for one sample of 6 OIDs, want 1", n)
	}
	if len(pts) != 4 {
		t.Fatalf("%d points, want device, phase 1, bank 1, bank 2: %v", len(pts), pts)
	}
	dev := find(t, pts, "", "")
	wantFloat(t, dev, "power_w", 1230)
	wantFloat(t, dev, "energy_j", 456.7*3.6e6)
	wantBool(t, dev, "power_derived", false)
	ph := find(t, pts, "phase", "1")
	wantFloat(t, ph, "current_a", 8.4)
	wantFloat(t, ph, "power_w", 1720)
	wantBool(t, ph, "power_derived", false)
	b1 := find(t, pts, "bank", "1")
	wantFloat(t, b1, "current_a", 4.0)
	wantFloat(t, b1, "power_w", 4.0*208) // banks report current only
	wantBool(t, b1, "power_derived", true)
	wantFloat(t, find(t, pts, "bank", "2"), "power_w", 4.4*208)

	// The PDU's readings change; the next tick sees them.
	next := map[string]string{}
	for k, v := range apcValues {
		next[k] = v
	}
	next[oidRPDU2PhaseStatusCurrent+".1"] = "gauge 97"
	next[oidRPDU2DeviceStatusEnergy+".1"] = "gauge 4568"
	a.Set(t, next)
	pts, err = sample(t, s)
	if err != nil {
		t.Fatal(err)
	}
	wantFloat(t, find(t, pts, "phase", "1"), "current_a", 9.7)
	wantFloat(t, find(t, pts, "", ""), "energy_j", 456.8*3.6e6)
}

func TestMaxOIDsSplitsTheRequest(t *testing.T) {
	a := snmptest.Start(t, apcValues)
	r := startRelay(t, a.Port)
	cfg := rpdu2(r.port)
	cfg.MaxOIDs = 4
	s := discover(t, cfg)
	before := r.requests.Load()
	pts, err := sample(t, s)
	if err != nil {
		t.Fatal(err)
	}
	if n := r.requests.Load() - before; n != 2 {
		t.Errorf("%d requests for 6 OIDs at max_oids 4, want 2", n)
	}
	if len(pts) != 4 {
		t.Errorf("%d points, want 4", len(pts))
	}
}

func TestLegacyLoadDerivesPowerFromVoltage(t *testing.T) {
	a := snmptest.Start(t, apcValues)
	for _, version := range []string{"1", "2c"} {
		t.Run("v"+version, func(t *testing.T) {
			cfg := Config{Name: "rack1", Target: "127.0.0.1", Port: a.Port, Version: version,
				Preset: PresetAPCRPDU, VoltageV: 230, Timeout: 2 * time.Second}
			pts, err := sample(t, discover(t, cfg))
			if err != nil {
				t.Fatal(err)
			}
			if len(pts) != 1 {
				t.Fatalf("points %v, want one for phase 1", pts)
			}
			p := find(t, pts, "phase", "1")
			wantFloat(t, p, "current_a", 5.2)
			wantFloat(t, p, "power_w", 5.2*230)
			wantBool(t, p, "power_derived", true)
		})
	}
}

// A PDU whose firmware lacks the energy OID and serves a string where a
// number belongs: those two readings are errors, every other one is kept,
// and no power is invented for the phase whose power reading failed.
func TestMissingAndWronglyTypedOIDsCostOnlyThemselves(t *testing.T) {
	vals := map[string]string{}
	for k, v := range apcValues {
		vals[k] = v
	}
	delete(vals, oidRPDU2DeviceStatusEnergy+".1")
	vals[oidRPDU2PhaseStatusPower+".1"] = "string n/a"
	a := snmptest.Start(t, vals)
	for _, version := range []string{"1", "2c"} {
		t.Run("v"+version, func(t *testing.T) {
			cfg := rpdu2(a.Port)
			cfg.Version = version
			pts, err := sample(t, discover(t, cfg))
			if err == nil {
				t.Fatal("no error for a missing and a wrongly typed OID")
			}
			var se *SampleError
			if !errors.As(err, &se) || se.Failed != 2 || se.Total != 6 {
				t.Fatalf("error %v, want a SampleError with 2 of 6 failed", err)
			}
			if !errors.Is(err, ErrNoSuchObject) {
				t.Errorf("error %v does not wrap ErrNoSuchObject", err)
			}
			for _, want := range []string{"rPDU2DeviceStatusEnergy.1 (.1.3.6.1.4.1.318.1.1.26.4.3.1.9.1): no such object",
				"rPDU2PhaseStatusPower.1 (.1.3.6.1.4.1.318.1.1.26.6.3.1.7.1): wrong type: OctetString \"n/a\""} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q lacks %q", err, want)
				}
			}
			dev := find(t, pts, "", "")
			wantFloat(t, dev, "power_w", 1230)
			if _, ok := dev.Field("energy_j"); ok {
				t.Errorf("energy written although unreadable: %s", dev.String())
			}
			ph := find(t, pts, "phase", "1")
			wantFloat(t, ph, "current_a", 8.4)
			if _, ok := ph.Field("power_w"); ok {
				t.Errorf("phase power written although its reading failed: %s", ph.String())
			}
			wantFloat(t, find(t, pts, "bank", "2"), "current_a", 4.4)
		})
	}
}

func TestSNMPv3Levels(t *testing.T) {
	a := snmptest.Start(t, apcValues)
	tests := []struct {
		name string
		v3   V3
	}{
		{"authPriv SHA AES", V3{User: "sha-aes", AuthProtocol: "SHA", AuthPassword: secret.Literal("shaaespass1"), PrivProtocol: "AES", PrivPassword: secret.Literal("shaaespriv1")}},
		{"authPriv SHA-256 AES", V3{User: "sha256-aes", Level: "authPriv", AuthProtocol: "SHA-256", AuthPassword: secret.Literal("sha256pass1"), PrivPassword: secret.Literal("sha256priv1")}},
		{"authNoPriv SHA", V3{User: "sha-auth", AuthPassword: secret.Literal("shaauthpass1")}},
		{"noAuthNoPriv", V3{User: "noauth"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := rpdu2(a.Port)
			cfg.Community = secret.Value{}
			cfg.Version, cfg.V3 = "3", tt.v3
			s := discover(t, cfg)
			pts, err := sample(t, s)
			if err != nil {
				t.Fatal(err)
			}
			wantFloat(t, find(t, pts, "phase", "1"), "current_a", 8.4)
			if d := s.Describe()[0]; !strings.Contains(d, "user "+tt.v3.User) {
				t.Errorf("Describe = %q", d)
			}
		})
	}
	t.Run("wrong password is refused at discovery", func(t *testing.T) {
		cfg := rpdu2(a.Port)
		cfg.Community = secret.Value{}
		cfg.Version = "3"
		cfg.V3 = V3{User: "sha-aes", AuthPassword: secret.Literal("not-the-password"), PrivPassword: secret.Literal("shaaespriv1")}
		cfg.Timeout = 500 * time.Millisecond
		s, err := New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		err = s.Discover(context.Background())
		if err == nil {
			t.Fatal("discovery succeeded with a wrong password")
		}
		if !strings.Contains(err.Error(), `SNMPv3 user "sha-aes" refused`) {
			t.Errorf("error %q does not say the user was refused", err)
		}
		if strings.Contains(err.Error(), "not-the-password") {
			t.Errorf("error shows the password: %v", err)
		}
	})
}

// An agent that stops answering costs the ticks it misses, with an error
// naming the readings, and the source reads again once it is back.
func TestTimeoutThenRecovery(t *testing.T) {
	a := snmptest.Start(t, apcValues)
	r := startRelay(t, a.Port)
	cfg := rpdu2(r.port)
	cfg.Timeout = 200 * time.Millisecond
	zero := 0
	cfg.Retries = &zero
	s := discover(t, cfg)
	r.drop.Store(true)
	t0 := time.Now()
	pts, err := sample(t, s)
	if el := time.Since(t0); el > 5*time.Second {
		t.Errorf("sample took %v with a 200ms timeout", el)
	}
	if err == nil || len(pts) != 0 {
		t.Fatalf("points %v, err %v: want no points and an error", pts, err)
	}
	for _, want := range []string{"pdu rack1", "rPDU2DeviceStatusPower.1", "no answer within 200ms x 1 attempts"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
	// The collector's deadline cuts a sample short as well.
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	_, err = s.Sample(ctx, time.Now(), nil)
	cancel()
	if err == nil {
		t.Error("no error past the deadline")
	}
	r.drop.Store(false)
	if err := s.Discover(context.Background()); err != nil {
		t.Fatal(err)
	}
	pts, err = sample(t, s)
	if err != nil || len(pts) != 4 {
		t.Fatalf("after recovery: %d points, err %v", len(pts), err)
	}
}

func TestGenericOIDsWithScaleAndUnit(t *testing.T) {
	vals := map[string]string{
		".1.3.6.1.4.1.318.9.1": "integer 2315", // outlet 3 current in mA
		".1.3.6.1.4.1.318.9.2": "gauge 2301",   // outlet 3 voltage in tenths of V
		".1.3.6.1.4.1.318.9.3": "counter64 12345678",
	}
	a := snmptest.Start(t, vals)
	cfg := Config{Name: "rack1", Target: "127.0.0.1", Port: a.Port, Timeout: 2 * time.Second, OIDs: []OID{
		{OID: ".1.3.6.1.4.1.318.9.1", Field: "current_a", Unit: "mA", Outlet: 3},
		{OID: "1.3.6.1.4.1.318.9.2", Field: "voltage_v", Unit: "V", Scale: 0.1, Outlet: 3},
		{OID: ".1.3.6.1.4.1.318.9.3", Field: "energy_j", Unit: "Wh", Name: "outletEnergy"},
	}}
	pts, err := sample(t, discover(t, cfg))
	if err != nil {
		t.Fatal(err)
	}
	o := find(t, pts, "outlet", "3")
	wantFloat(t, o, "current_a", 2.315)
	wantFloat(t, o, "voltage_v", 230.1)
	wantFloat(t, o, "power_w", 2.315*208)
	wantFloat(t, find(t, pts, "", ""), "energy_j", 12345678*3600.0)
}
