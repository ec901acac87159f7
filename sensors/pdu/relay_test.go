package pdu

import (
	"errors"
	"net"
	"sync/atomic"
	"testing"
)

// relay forwards SNMP datagrams between one client and the agent, counting
// requests, and can drop them to play an agent that stopped answering.
type relay struct {
	port     uint16
	requests atomic.Int64
	drop     atomic.Bool
}

func startRelay(t *testing.T, to uint16) *relay {
	t.Helper()
	front, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	back, err := net.DialUDP("udp", nil, &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1), Port: int(to)})
	if err != nil {
		t.Fatal(err)
	}
	r := &relay{port: uint16(front.LocalAddr().(*net.UDPAddr).Port)}
	var client atomic.Pointer[net.Addr]
	t.Cleanup(func() { front.Close(); back.Close() })
	go func() {
		buf := make([]byte, 65536)
		for {
			n, from, err := front.ReadFrom(buf)
			if err != nil {
				return
			}
			r.requests.Add(1)
			if r.drop.Load() {
				continue
			}
			client.Store(&from)
			back.Write(buf[:n])
		}
	}()
	go func() {
		buf := make([]byte, 65536)
		for {
			n, err := back.Read(buf)
			if errors.Is(err, net.ErrClosed) {
				return
			}
			if err != nil {
				continue // ICMP port unreachable while the agent restarts
			}
			if c := client.Load(); c != nil {
				front.WriteTo(buf[:n], *c)
			}
		}
	}()
	return r
}
