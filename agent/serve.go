package agent

import (
	"fmt"
	"log/slog"
	"net"
	"net/http"

	"github.com/prometheus/exporter-toolkit/web"
)

// CheckWebConfig validates a web configuration file (TLS and basic auth,
// the format of the Prometheus exporter-toolkit that node_exporter's
// --web.config.file reads), so a broken one is an error at start rather
// than at the first request. "" is no file: plain HTTP, no authentication.
func CheckWebConfig(path string) error {
	if path == "" {
		return nil
	}
	if err := web.Validate(path); err != nil {
		return fmt.Errorf("web config %s: %w", path, err)
	}
	return nil
}

// Serve serves srv on l, with the TLS and basic authentication that the
// web configuration file at path sets up (read again for each connection,
// so certificates can be rotated); "" serves plain HTTP. It returns when
// srv is shut down (http.ErrServerClosed) or fails.
//
// Without a web configuration, /healthz, /metrics and /alerts are open to
// whoever reaches the address: Unprotected says when that is every
// interface, for a warning.
func Serve(l net.Listener, srv *http.Server, path string, log *slog.Logger) error {
	return web.Serve(l, srv, &web.FlagConfig{WebConfigFile: &path}, log)
}

// Unprotected reports whether serving addr without a web configuration
// exposes the agent beyond this machine: any address that is not loopback.
func Unprotected(addr, webConfig string) bool {
	if webConfig != "" {
		return false
	}
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return true
	}
	if host == "localhost" {
		return false
	}
	ip := net.ParseIP(host)
	return ip == nil || !ip.IsLoopback()
}
