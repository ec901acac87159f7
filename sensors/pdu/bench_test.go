package pdu

import (
	"context"
	"testing"
	"time"

	"github.com/heatsink-hpc/heatsink/configs/secret"
	"github.com/heatsink-hpc/heatsink/sensors/pdu/snmptest"
)

// BenchmarkSample measures one tick's read of an APC rPDU2 (6 OIDs, one Get)
// from a real snmpd on loopback, SNMPv2c and SNMPv3 authPriv.
func BenchmarkSample(b *testing.B) {
	a := snmptest.Start(b, apcValues)
	for _, bc := range []struct {
		name string
		cfg  Config
	}{
		{"v2c", Config{Community: secret.Literal(snmptest.Community)}},
		{"v3-authPriv-SHA256-AES", Config{Version: "3", V3: V3{User: "sha256-aes", AuthProtocol: "SHA-256",
			AuthPassword: secret.Literal("sha256pass1"), PrivPassword: secret.Literal("sha256priv1")}}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			c := bc.cfg
			c.Name, c.Target, c.Port, c.Preset, c.Banks = "rack1", "127.0.0.1", a.Port, PresetAPCRPDU2, 2
			c.Timeout = 2 * time.Second
			s, err := New(c)
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			ctx := context.Background()
			if err := s.Discover(ctx); err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			for b.Loop() {
				pts, err := s.Sample(ctx, time.Now(), nil)
				if err != nil || len(pts) != 4 {
					b.Fatalf("%d points, %v", len(pts), err)
				}
			}
		})
	}
}
