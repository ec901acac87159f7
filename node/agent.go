package node

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"

	"github.com/heatsink-hpc/heatsink/agent"
	"github.com/heatsink-hpc/heatsink/alerts"
	"github.com/heatsink-hpc/heatsink/collectors"
	"github.com/heatsink-hpc/heatsink/collectors/prom"
	"github.com/heatsink-hpc/heatsink/configs"
)

// AgentOptions make a collection a node agent: a service that reloads its
// configuration on SIGHUP, serves /healthz, /metrics and /alerts, and tags
// every point with the Slurm job on the node.
type AgentOptions struct {
	// Listen is the address of /healthz, /metrics and /alerts; "" serves none.
	Listen string
	// Socket is a Unix socket serving the same endpoints to root alone (the
	// health check's trusted way in); "" creates none.
	Socket string
	// JobsDir is the directory the Slurm Prolog and Epilog maintain; ""
	// tags nothing.
	JobsDir string
	// Load makes the configuration again on SIGHUP from file, the content
	// of ConfigPath read once it stopped changing (nil without one), and
	// the flags over it.
	Load       func(file []byte) (*configs.Config, error)
	ConfigPath string
	// WebConfig is an exporter-toolkit web configuration file (TLS, basic
	// auth) for Listen, as node_exporter's --web.config.file; "" serves
	// plain HTTP.
	WebConfig string
	// NoReload leaves SIGHUP to the caller: collect without --listen is a
	// recording from a terminal, which a hang-up ends like SIGTERM.
	NoReload bool
	// Build is the binary's version, for heatsink_build_info.
	Build agent.Build
}

// Agent runs beside a Collection: the endpoint, the SIGHUP watcher, the
// jobs watcher.
type Agent struct {
	o       AgentOptions
	log     *slog.Logger
	c       *Collection
	metrics *prom.Sink   // nil without Listen
	srv     *http.Server // --listen; the web config wraps its handler
	sockSrv *http.Server // --socket, a server of its own
	wg      sync.WaitGroup

	// reloading serialises reloads and sink retries: both replace sinks.
	reloading sync.Mutex

	mu     sync.Mutex // guards what a reload replaces
	cfg    *configs.Config
	engine *alerts.Engine
	built  []built
	sinks  []collectors.Sink
	jobs   []string
	// draining are removed sinks behind a handoff, by kind, until their
	// successor has seen them closed.
	draining map[string]*agent.Handoff
	reloads  agent.ConfigHealth
}

// NewAgent returns an agent for a collection of cfg; give Sinks to the
// collection's Options, then Start it once the collection exists.
func NewAgent(cfg *configs.Config, o AgentOptions) *Agent {
	a := &Agent{o: o, cfg: cfg, log: slog.Default(), draining: map[string]*agent.Handoff{},
		reloads: agent.ConfigHealth{Path: o.ConfigPath}}
	if o.Listen != "" || o.Socket != "" {
		// Readings stay for five intervals, and at least a minute, after
		// their source last produced them.
		a.metrics = prom.New(prom.Options{Staleness: max(prom.DefaultStaleness, 5*cfg.Interval), Alerts: a.promAlerts})
	}
	return a
}

// Sinks are the sinks the agent adds to the collection's own.
func (a *Agent) Sinks() []collectors.Sink {
	if a.metrics == nil {
		return nil
	}
	return []collectors.Sink{a.metrics}
}

// Start begins serving and watching.
func (a *Agent) Start(ctx context.Context, c *Collection) error {
	a.c = c
	a.mu.Lock()
	a.engine = c.engine
	a.built = append([]built(nil), c.built...)
	a.sinks = append([]collectors.Sink(nil), c.sinks...)
	a.mu.Unlock()
	if a.o.Listen != "" || a.o.Socket != "" {
		if err := a.serve(); err != nil {
			return err
		}
	}
	hup := make(chan os.Signal, 1)
	if !a.o.NoReload {
		signal.Notify(hup, syscall.SIGHUP)
	}
	a.wg.Add(1)
	go func() {
		defer a.wg.Done()
		defer signal.Stop(hup)
		retry := time.NewTicker(retryEvery)
		defer retry.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-hup:
				a.reloadNoted(ctx)
			case <-retry.C:
				a.retryPending()
			}
		}
	}()
	if a.o.JobsDir != "" {
		a.wg.Add(1)
		go func() {
			defer a.wg.Done()
			a.watchJobs(ctx)
		}()
	}
	return nil
}

func (a *Agent) serve() error {
	h := agent.Handler(agent.Options{
		Collector: a.c.collector, Metrics: a.metrics, Alerts: a.agentAlerts, Sinks: a.sinkHealth, Jobs: a.currentJobs,
		Deliveries: a.alertDeliveries,
		Config:     a.configHealth, Build: a.o.Build,
	})
	var tcp, sock net.Listener
	if a.o.Listen != "" {
		l, err := agent.ListenTCP(a.o.Listen)
		if err != nil {
			return err
		}
		tcp = l
	}
	if a.o.Socket != "" {
		l, err := agent.ListenSocket(a.o.Socket)
		if err != nil {
			if tcp != nil {
				tcp.Close()
			}
			return err
		}
		sock = l
		a.log.Info("agent listening", "socket", a.o.Socket)
	}
	if tcp != nil {
		a.srv = &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
		a.log.Info("agent listening", "addr", tcp.Addr().String())
		if agent.Unprotected(a.o.Listen, a.o.WebConfig) {
			a.log.Warn("--listen serves plain HTTP without authentication beyond this machine: give --web.config.file for TLS and basic auth, or listen on 127.0.0.1", "addr", a.o.Listen)
		}
		a.wg.Add(1)
		go func() {
			defer a.wg.Done()
			if err := agent.Serve(tcp, a.srv, a.o.WebConfig, a.log); err != nil && !errors.Is(err, http.ErrServerClosed) {
				a.log.Error("agent endpoint stopped", "err", err)
			}
		}()
	}
	if sock != nil {
		// The socket's mode and owner are its authentication: plain HTTP.
		a.sockSrv = &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
		a.wg.Add(1)
		go func() {
			defer a.wg.Done()
			if err := a.sockSrv.Serve(sock); err != nil && !errors.Is(err, http.ErrServerClosed) {
				a.log.Error("agent socket stopped", "err", err)
			}
		}()
	}
	return nil
}

// Stop ends the endpoint and the watchers; Start's ctx must be done.
func (a *Agent) Stop() {
	for _, srv := range []*http.Server{a.srv, a.sockSrv} {
		if srv != nil {
			sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			srv.Shutdown(sctx)
			cancel()
		}
	}
	a.wg.Wait()
}
