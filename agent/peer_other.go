//go:build !linux

package agent

import (
	"errors"
	"net"
)

// errNoPeer is why an agent cannot be trusted where the kernel does not
// say who holds a socket: the health check is for Linux nodes.
var errNoPeer = errors.New("who holds a socket is known on Linux only")

func unixPeerUID(net.Conn) (uint32, error) { return 0, errNoPeer }

func tcpPeerUID(string, net.Addr, net.Addr) (uint32, error) { return 0, errNoPeer }

// PortHolder names who listens on a TCP port; unknown off Linux.
func PortHolder(string, int) string { return "" }
