package pdu

import (
	"math"
	"testing"

	"github.com/gosnmp/gosnmp"
)

// FuzzNumeric feeds arbitrary datagrams through gosnmp's decoder and every
// variable it yields through Numeric: whatever an agent sends, the source
// gets a finite number or an error, never a panic.
func FuzzNumeric(f *testing.F) {
	// A real v2c GetResponse: .1.3.6.1.4.1.318.1.1.26.6.3.1.5.1 = Gauge32 84.
	f.Add([]byte{0x30, 0x33, 0x02, 0x01, 0x01, 0x04, 0x06, 'p', 'u', 'b', 'l', 'i', 'c', 0xa2, 0x26, 0x02, 0x01, 0x01,
		0x02, 0x01, 0x00, 0x02, 0x01, 0x00, 0x30, 0x1b, 0x30, 0x19, 0x06, 0x12, 0x2b, 0x06, 0x01, 0x04, 0x01, 0x82,
		0x3e, 0x01, 0x01, 0x1a, 0x06, 0x03, 0x01, 0x05, 0x01, 0x00, 0x00, 0x00, 0x42, 0x01, 0x54})
	f.Add([]byte{0x30, 0x03, 0x02, 0x01, 0x01})
	f.Fuzz(func(t *testing.T, b []byte) {
		g := &gosnmp.GoSNMP{Version: gosnmp.Version2c, Community: "public", Logger: gosnmp.NewLogger(nil)}
		pkt, err := g.SnmpDecodePacket(b)
		if err != nil || pkt == nil {
			return
		}
		for _, v := range pkt.Variables {
			x, err := Numeric(v)
			if err == nil && (math.IsNaN(x) || math.IsInf(x, 0)) && v.Type != gosnmp.OpaqueFloat && v.Type != gosnmp.OpaqueDouble {
				t.Errorf("Numeric(%v %T) = %v", v.Type, v.Value, x)
			}
			if err != nil && err.Error() == "" {
				t.Error("empty error")
			}
		}
	})
}
