// Package rundir reads and writes heatsink run directories: run.json, which
// describes the run (host, configuration, versions, phases, events, workload
// iterations), and points.lp, every recorded point in line protocol.
//
// Writing is append-only: every write reaches the file at once (a kill -9
// loses nothing) and is fsynced at least every few seconds (a power loss
// loses at most that much); reading tolerates a torn last line.
package rundir

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// File names inside a run directory.
const (
	MetaFile   = "run.json"
	PointsFile = "points.lp"
)

// SchemaVersion is written into run.json; readers refuse newer majors.
const SchemaVersion = 1

// Meta is the content of run.json.
type Meta struct {
	Schema   int               `json:"schema"`
	ID       string            `json:"id"`
	Host     string            `json:"host"`
	Command  []string          `json:"command,omitempty"` // heatsink's own argv
	Versions map[string]string `json:"versions,omitempty"`
	Config   json.RawMessage   `json:"config,omitempty"` // the effective configuration, secrets redacted
	Start    time.Time         `json:"start"`
	End      *time.Time        `json:"end,omitempty"`
	// Interval is the sampling interval in seconds.
	IntervalS float64      `json:"interval_s"`
	Sources   []SourceInfo `json:"sources,omitempty"`
	Phases    []Phase      `json:"phases,omitempty"`
	Events    []Event      `json:"events,omitempty"`
	Workload  *Workload    `json:"workload,omitempty"`
	// ExitStatus is the job's exit status for `heatsink run`.
	ExitStatus *int   `json:"exit_status,omitempty"`
	Status     string `json:"status,omitempty"` // "running", "complete", "interrupted", "failed"
	// Labels are free-form (cooling: immersion|air, site, experiment).
	Labels map[string]string `json:"labels,omitempty"`
	// Hold is what `heatsink run --hold` did, when it was given.
	Hold *Hold `json:"hold,omitempty"`
}

// Hold is run.json's record of a hold (heatsink run --hold): the target,
// the model the controller started from and refined, and how well the
// component was held over the load.
type Hold struct {
	Target  string  `json:"target"` // "gpu_core<=65"
	SetC    float64 `json:"set_c"`
	PeriodS float64 `json:"period_s"` // the duty cycle's period
	// Model is the controller's model as refined by the end (nil: the
	// plain pause, NoModel says why).
	Model   *HoldModel `json:"model,omitempty"`
	NoModel string     `json:"no_model,omitempty"`
	// Mode is the controller's mode at the end; Fallback why it fell back
	// to the plain pause, if it did.
	Mode     string `json:"mode"`
	Fallback string `json:"fallback,omitempty"`
	// Duty is the share of the load's time the job ran: its throughput
	// against running free, where the work scales with the time it runs.
	Duty float64 `json:"duty"`
	// GPUDuty is the held GPU's mean NVML utilisation over the load, as
	// a share: the duty the card realised. Above Duty, work queued before
	// a pause ran on while the job was stopped (a command's kernels after
	// SIGSTOP). GPUHeldUtilPct is its mean over the GPUHeldTicks ticks in
	// which the job did not run at all: the card working without it.
	// Absent where the component is no GPU or the card reports no
	// utilisation.
	GPUDuty        *float64 `json:"gpu_duty,omitempty"`
	GPUHeldUtilPct *float64 `json:"gpu_held_util_pct,omitempty"`
	GPUHeldTicks   int      `json:"gpu_held_ticks,omitempty"`
	// MeanAbsC and P95AbsC are the mean and 95th percentile of
	// |reading − set point| from SettleS (3τ of the model) after the load
	// started; absent when the load was shorter. OvershootC is the
	// largest reading above the set point once it had been reached.
	SettleS    float64  `json:"settle_s"`
	MeanAbsC   *float64 `json:"mean_abs_c,omitempty"`
	P95AbsC    *float64 `json:"p95_abs_c,omitempty"`
	OvershootC float64  `json:"overshoot_c"`
	PeakC      *float64 `json:"peak_c,omitempty"`
	Readings   int      `json:"readings"`
	// FreeRun is the run the model came from, and FreeWorkPerS and
	// FreeIterationsPerS its throughput over its load, running free: what
	// the report sets this run's against.
	FreeRun            string   `json:"free_run,omitempty"`
	FreeWorkPerS       *float64 `json:"free_work_per_s,omitempty"`
	FreeWorkUnit       string   `json:"free_work_unit,omitempty"`
	FreeIterationsPerS *float64 `json:"free_iterations_per_s,omitempty"`
}

// Throughput is a run's work and iterations per second over its load
// phase, from its successful iterations (work_<unit> metrics); nil where
// it has none or no finished load.
func (m *Meta) Throughput() (workPerS *float64, unit string, itersPerS *float64) {
	var load *Phase
	for i := range m.Phases {
		if m.Phases[i].Name == "load" && m.Phases[i].End != nil {
			load = &m.Phases[i]
		}
	}
	if load == nil || m.Workload == nil {
		return nil, "", nil
	}
	d := load.End.Sub(load.Start).Seconds()
	if d <= 0 {
		return nil, "", nil
	}
	var work float64
	n := 0
	for _, it := range m.Workload.Iterations {
		if it.ExitStatus != 0 || it.Error != "" {
			continue
		}
		n++
		for k, v := range it.Metrics {
			if u, ok := strings.CutPrefix(k, "work_"); ok {
				work, unit = work+v, u
			}
		}
	}
	if n == 0 {
		return nil, "", nil
	}
	ips := float64(n) / d
	if work > 0 {
		wps := work / d
		return &wps, unit, &ips
	}
	return nil, "", &ips
}

// HoldModel is the hold's model of the component (hold.Model).
type HoldModel struct {
	BaseC    float64 `json:"base_c"`
	FastC    float64 `json:"fast_c"`
	SlowC    float64 `json:"slow_c"`
	TauS     float64 `json:"tau_s"`
	TauFastS float64 `json:"tau_fast_s"`
	Gain     float64 `json:"gain"` // the online refinement: the rises are the given ones times Gain
	Source   string  `json:"source,omitempty"`
}

// SourceInfo records what a source discovered, or why it was unavailable.
type SourceInfo struct {
	Name    string   `json:"name"`
	Devices []string `json:"devices,omitempty"`
	Error   string   `json:"error,omitempty"`
}

// Phase is one stage of the experiment protocol (baseline, load, cooldown).
type Phase struct {
	Name  string     `json:"name"`
	Start time.Time  `json:"start"`
	End   *time.Time `json:"end,omitempty"`
}

// PhaseNames returns the names of the protocol's phases, in the order a
// run goes through them: the names analysis and reports recognise.
func PhaseNames() []string {
	return []string{"baseline", "wait_nominal", "load", "cooldown"}
}

// Event is anything worth a mark on the timeline: alerts, guard actions, notes.
type Event struct {
	Time    time.Time         `json:"time"`
	Kind    string            `json:"kind"`
	Message string            `json:"message,omitempty"`
	Attrs   map[string]string `json:"attrs,omitempty"`
}

// Workload describes the job and each iteration of it.
type Workload struct {
	Name       string            `json:"name"`
	Params     map[string]string `json:"params,omitempty"`
	Command    []string          `json:"command,omitempty"`
	Iterations []Iteration       `json:"iterations,omitempty"`
}

// Iteration is one repetition of the job during the load phase.
type Iteration struct {
	N          int                `json:"n"`
	Start      time.Time          `json:"start"`
	End        time.Time          `json:"end"`
	RuntimeS   float64            `json:"runtime_s"`
	ExitStatus int                `json:"exit_status"`
	Error      string             `json:"error,omitempty"`
	Metrics    map[string]float64 `json:"metrics,omitempty"` // throughput etc., units in names
	// Device is the GPU index the iteration ran on, where one run loads
	// several GPUs each with its own instance of the job (heatsink
	// survey); "" for a run's one job.
	Device string `json:"device,omitempty"`
}

// PhaseNamed returns the first phase with that name.
func (m *Meta) PhaseNamed(name string) (Phase, bool) {
	for _, p := range m.Phases {
		if p.Name == name {
			return p, true
		}
	}
	return Phase{}, false
}

// WriteMeta writes run.json atomically (temp file, fsync, rename).
func WriteMeta(dir string, m *Meta) error {
	if m.Schema == 0 {
		m.Schema = SchemaVersion
	}
	// argv is recorded as given, except what would print a password.
	out := *m
	out.Command = RedactArgv(m.Command)
	if m.Workload != nil {
		wl := *m.Workload
		wl.Command = RedactArgv(wl.Command)
		out.Workload = &wl
	}
	b, err := json.MarshalIndent(&out, "", "  ")
	if err != nil {
		return fmt.Errorf("encode %s: %w", MetaFile, err)
	}
	path := filepath.Join(dir, MetaFile)
	// The rename would replace a planted link rather than write through
	// it, but a link where run.json goes is someone's doing: say so.
	if isSymlink(path) {
		return fmt.Errorf("write %s: %s %w", path, path, ErrSymlink)
	}
	// 0666 less the umask, like points.lp: the site decides who may read
	// a run (CreateTemp would make it 0600, and forcing 0644 overrode a
	// umask of 077).
	tmp, err := createExcl(dir, ".run.json.", 0o666)
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(append(b, '\n')); err != nil {
		tmp.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return fmt.Errorf("sync %s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// ReadMeta reads run.json from dir.
func ReadMeta(dir string) (*Meta, error) {
	path := filepath.Join(dir, MetaFile)
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read run: %w", err)
	}
	var m Meta
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("parse %s: %w", path, err)
	}
	if m.Schema > SchemaVersion {
		return nil, fmt.Errorf("%s: schema %d is newer than this heatsink understands (%d)", path, m.Schema, SchemaVersion)
	}
	return &m, nil
}

// createExcl creates a new file in dir named prefix and a random suffix,
// with mode perm less the umask.
func createExcl(dir, prefix string, perm os.FileMode) (*os.File, error) {
	for {
		f, err := OpenInDir(dir, prefix+strconv.FormatUint(rand.Uint64(), 36), os.O_RDWR|os.O_CREATE|os.O_EXCL, perm)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		return f, err
	}
}

// urlUserinfo matches the user[:password]@ of a URL anywhere in an argument
// (--influx-url=http://u:p@host, or a job's own arguments).
var urlUserinfo = regexp.MustCompile(`([a-zA-Z][a-zA-Z0-9+.-]*://)[^/@\s]*@`)

// RedactArgv returns argv with the credentials of every URL in it replaced
// by "REDACTED"; argv itself is left unchanged.
func RedactArgv(argv []string) []string {
	if argv == nil {
		return nil
	}
	out := make([]string, len(argv))
	for i, a := range argv {
		out[i] = urlUserinfo.ReplaceAllString(a, "${1}REDACTED@")
	}
	return out
}
