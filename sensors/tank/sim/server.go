package sim

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"sync"
	"time"
)

// Server presents a Model over HTTP as a Submer SmartPod, advancing it by
// Speed simulated seconds per real second.
//
//	GET    /api/realTime   what the pod's API shows
//	GET    /sim/state      the model's real state (Truth)
//	POST   /sim/control    change inputs: {"load_w": 2400, "chilled_water": false,
//	                       "demo": true, "mode": "maintenance", "setpoint_c": 38}
//	                       (any subset); answers the new state
//	PUT    /sim/profile    follow the load profile in the body (see ParseProfile)
//	DELETE /sim/profile    stop following it; the load stays where it is
type Server struct {
	mu    sync.Mutex
	m     *Model
	speed float64
	now   func() time.Time
	t0    time.Time     // real time when the clock was last anchored
	sim0  time.Duration // simulated time at t0
	mux   *http.ServeMux
}

// NewServer returns a server of m at speed simulated seconds per real second.
func NewServer(m *Model, speed float64) (*Server, error) {
	if !(speed > 0) || math.IsInf(speed, 0) || speed > 1e6 {
		return nil, fmt.Errorf("tank-sim: speed %g must be > 0 and at most 1e6", speed)
	}
	s := &Server{m: m, speed: speed, now: time.Now}
	s.t0, s.sim0 = s.now(), m.Time()
	s.mux = http.NewServeMux()
	s.mux.HandleFunc("GET /api/realTime", s.realTime)
	s.mux.HandleFunc("GET /sim/state", s.state)
	s.mux.HandleFunc("POST /sim/control", s.control)
	s.mux.HandleFunc("PUT /sim/profile", s.putProfile)
	s.mux.HandleFunc("DELETE /sim/profile", s.deleteProfile)
	return s, nil
}

// ServeHTTP implements http.Handler.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.mux.ServeHTTP(w, r) }

// advance brings the model to the simulated time the clock says. Callers hold mu.
func (s *Server) advance() {
	target := s.sim0 + time.Duration(float64(s.now().Sub(s.t0))*s.speed)
	s.m.AdvanceTo(target)
}

// Tick advances the model to now; Serve calls it often so that an idle
// server at a high speed never owes a long catch-up to its next request.
func (s *Server) Tick() {
	s.mu.Lock()
	s.advance()
	s.mu.Unlock()
}

// Do runs f on the model, brought up to date, under the server's lock.
func (s *Server) Do(f func(m *Model)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.advance()
	f(s.m)
}

func (s *Server) realTime(w http.ResponseWriter, r *http.Request) {
	var rt RealTime
	s.Do(func(m *Model) { rt = m.RealTime() })
	writeJSON(w, http.StatusOK, rt)
}

func (s *Server) state(w http.ResponseWriter, r *http.Request) {
	var t Truth
	s.Do(func(m *Model) { t = m.Truth() })
	writeJSON(w, http.StatusOK, t)
}

// Control is the body of POST /sim/control; absent fields are unchanged.
type Control struct {
	LoadW        *float64 `json:"load_w"`
	ChilledWater *bool    `json:"chilled_water"`
	Demo         *bool    `json:"demo"`
	Mode         *string  `json:"mode"`
	SetpointC    *float64 `json:"setpoint_c"`
}

// Apply changes the model as c says; it checks every value before changing any.
func (c Control) Apply(m *Model) error {
	if c.LoadW != nil && !(*c.LoadW >= 0 && *c.LoadW <= MaxLoadW) {
		return fmt.Errorf("load_w %g: must be from 0 to %g", *c.LoadW, MaxLoadW)
	}
	if c.SetpointC != nil && (math.IsNaN(*c.SetpointC) || *c.SetpointC < -20 || *c.SetpointC > 100) {
		return fmt.Errorf("setpoint_c %g is out of range", *c.SetpointC)
	}
	if c.Mode != nil && (*c.Mode == "" || len(*c.Mode) > 32) {
		return fmt.Errorf("mode %q: give a short word", *c.Mode)
	}
	if c.LoadW != nil {
		m.SetLoad(*c.LoadW)
	}
	if c.SetpointC != nil {
		m.SetSetpoint(*c.SetpointC)
	}
	if c.Mode != nil {
		m.SetMode(*c.Mode)
	}
	if c.ChilledWater != nil {
		m.SetChilledWater(*c.ChilledWater)
	}
	if c.Demo != nil {
		m.SetDemo(*c.Demo)
	}
	return nil
}

func (s *Server) control(w http.ResponseWriter, r *http.Request) {
	var c Control
	dec := json.NewDecoder(io.LimitReader(r.Body, 64<<10))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&c); err != nil {
		httpError(w, http.StatusBadRequest, fmt.Errorf("control body: %w", err))
		return
	}
	var err error
	var t Truth
	s.Do(func(m *Model) {
		if err = c.Apply(m); err == nil {
			t = m.Truth()
		}
	})
	if err != nil {
		httpError(w, http.StatusBadRequest, err)
		return
	}
	writeJSON(w, http.StatusOK, t)
}

func (s *Server) putProfile(w http.ResponseWriter, r *http.Request) {
	p, err := ParseProfile(io.LimitReader(r.Body, 4<<20))
	if err != nil {
		httpError(w, http.StatusBadRequest, err)
		return
	}
	var t Truth
	s.Do(func(m *Model) { m.FollowProfile(p); t = m.Truth() })
	writeJSON(w, http.StatusOK, t)
}

func (s *Server) deleteProfile(w http.ResponseWriter, r *http.Request) {
	var t Truth
	s.Do(func(m *Model) { m.SetLoad(m.load); t = m.Truth() })
	writeJSON(w, http.StatusOK, t)
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		httpError(w, http.StatusInternalServerError, err)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	w.Write(append(b, '\n'))
}

func httpError(w http.ResponseWriter, code int, err error) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	b, _ := json.Marshal(map[string]string{"error": err.Error()})
	w.Write(append(b, '\n'))
}

// Serve serves s on ln until ctx is done, advancing the model ten times a
// real second in between requests.
func Serve(ctx context.Context, ln net.Listener, s *Server) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	hs := &http.Server{Handler: s, ReadHeaderTimeout: 5 * time.Second}
	done := make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(100 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
				hs.Shutdown(sctx)
				cancel()
				return
			case <-tick.C:
				s.Tick()
			}
		}
	}()
	err := hs.Serve(ln)
	cancel()
	<-done
	if errors.Is(err, http.ErrServerClosed) {
		return nil
	}
	return err
}
