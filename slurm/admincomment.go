package slurm

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/base32"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"time"
)

// AdminCommentMaxBytes bounds the summary heatsink puts in a job's
// AdminComment. Slurm sets no limit of its own below its RPC size, but
// slurmdbd keeps the field in a TEXT column (64 KiB in MySQL) and sacct
// prints it on one line: 4 KiB holds a node of eight GPUs with room, and
// a larger job keeps its totals and the path of its full summary.
const AdminCommentMaxBytes = 4096

// AdminSummary is the summary as it goes into the job's AdminComment,
// where sacct -o AdminComment shows it (as Princeton's jobstats does with
// its own): compact JSON a script can read. The whole summary is the file
// at File.
type AdminSummary struct {
	// Heatsink is the version of this format, 1.
	Heatsink int     `json:"heatsink"`
	Job      string  `json:"job"`
	RuntimeS float64 `json:"runtime_s"`
	// EnergyJ is the job's own energy: its GPUs', and the CPU packages'
	// of nodes it had alone.
	EnergyJ *float64 `json:"energy_j,omitempty"`
	// SharedCPUEnergyJ is, per node, the CPU packages' energy the job
	// shared with other jobs: the node's, in no job's energy_j.
	SharedCPUEnergyJ map[string]float64 `json:"shared_cpu_energy_j,omitempty"`
	GPUs             []AdminGPU         `json:"gpus,omitempty"`
	// GPUsLeftOut counts the GPUs left out to keep within
	// AdminCommentMaxBytes.
	GPUsLeftOut int    `json:"gpus_left_out,omitempty"`
	File        string `json:"file,omitempty"`
}

// AdminGPU is one of the job's GPUs in its AdminComment.
type AdminGPU struct {
	Host    string   `json:"host"`
	GPU     string   `json:"gpu"`
	UUID    string   `json:"uuid,omitempty"`
	EnergyJ *float64 `json:"energy_j,omitempty"`
	PeakC   *float64 `json:"peak_c,omitempty"`
	// ThermalThrottleS is how long the GPU slowed for heat during the job.
	ThermalThrottleS *float64 `json:"thermal_throttle_s,omitempty"`
	// CPerW is the thermal resistance of the GPU's fingerprint over the
	// job (°C per W above idle), absent where the job's load allowed
	// none; the whole fingerprint is in the file.
	CPerW *float64 `json:"c_per_w,omitempty"`
	// SharedWith are the jobs that held other parts (MIG instances) of
	// the GPU: its energy is the GPU's, not in the job's energy_j.
	SharedWith []string `json:"shared_with,omitempty"`
}

// Admin returns the AdminComment form of the summary, whose whole is in
// the file at path.
func (s *Summary) Admin(path string) AdminSummary {
	a := AdminSummary{Heatsink: 1, Job: s.Job, RuntimeS: s.RuntimeS, File: path}
	peak := map[string]*float64{}
	for _, c := range s.Components {
		if c.Kind == "gpu_core" {
			if gpu, ok := gpuOf(c.ID); ok {
				peak[c.Host+"\x00"+gpu] = c.PeakC
			}
		}
	}
	for _, g := range s.GPUs {
		ag := AdminGPU{Host: g.Host, GPU: g.GPU, UUID: g.UUID, EnergyJ: g.EnergyJ, PeakC: peak[g.Host+"\x00"+g.GPU],
			ThermalThrottleS: g.ThermalThrottleS, SharedWith: g.SharedWith}
		if g.Fingerprint != nil && g.Fingerprint.Fingerprint != nil {
			ag.CPerW = g.Fingerprint.ThermalResistanceCPerW
		}
		a.GPUs = append(a.GPUs, ag)
	}
	for _, n := range s.NodeEnergy {
		if n.EnergyJ != nil {
			if a.EnergyJ == nil {
				a.EnergyJ = ptr(0)
			}
			*a.EnergyJ += *n.EnergyJ
		}
		if n.SharedCPUEnergyJ != nil {
			if a.SharedCPUEnergyJ == nil {
				a.SharedCPUEnergyJ = map[string]float64{}
			}
			a.SharedCPUEnergyJ[n.Host] = *n.SharedCPUEnergyJ
		}
	}
	return a
}

// Encode renders a as one line of JSON within AdminCommentMaxBytes,
// leaving out GPUs from the end (counted in gpus_left_out) where needed.
func (a AdminSummary) Encode() (string, error) {
	return a.encode(func(b []byte) (string, error) { return string(b), nil })
}

// PackedPrefix starts the form of the summary heatsink writes through
// sacctmgr. sacctmgr (22.05) lowercases an AdminComment and turns every
// quote into a backtick before slurmdbd stores it, which no JSON
// survives (nor jobstats' base64): what it stores is the JSON gzipped
// and written in lowercase base32 without padding, which both leave
// alone. ParseAdminSummary reads either form; a script decodes it with
// `base64.b32decode(s.upper() + "=" * (-len(s) % 8))` and gzip.
const PackedPrefix = "heatsink1z:"

// EncodePacked renders a in the packed form within AdminCommentMaxBytes,
// leaving out GPUs from the end where needed (rarely: gzip packs a
// summary's repeated keys far below their JSON length).
func (a AdminSummary) EncodePacked() (string, error) {
	return a.encode(pack)
}

var b32 = base32.NewEncoding("abcdefghijklmnopqrstuvwxyz234567").WithPadding(base32.NoPadding)

func pack(b []byte) (string, error) {
	var z bytes.Buffer
	w, err := gzip.NewWriterLevel(&z, gzip.BestCompression)
	if err == nil {
		_, err = w.Write(b)
	}
	if err == nil {
		err = w.Close()
	}
	if err != nil {
		return "", fmt.Errorf("gzip an AdminComment: %w", err)
	}
	return PackedPrefix + b32.EncodeToString(z.Bytes()), nil
}

// unpack reverses pack, whatever case the text came back in.
func unpack(s string) ([]byte, error) {
	z, err := b32.DecodeString(strings.TrimPrefix(strings.ToLower(s), PackedPrefix))
	if err != nil {
		return nil, fmt.Errorf("base32: %w", err)
	}
	r, err := gzip.NewReader(bytes.NewReader(z))
	if err != nil {
		return nil, err
	}
	return io.ReadAll(io.LimitReader(r, 1<<20))
}

// encode renders a with form, leaving out the fewest GPUs from the end
// that make the text fit AdminCommentMaxBytes (a binary search: the text
// grows with every GPU kept, and packing each candidate costs a gzip).
func (a AdminSummary) encode(form func([]byte) (string, error)) (string, error) {
	keep := func(n int) (string, error) {
		b := a
		b.GPUs, b.GPUsLeftOut = a.GPUs[:n], a.GPUsLeftOut+len(a.GPUs)-n
		j, err := json.Marshal(b)
		if err != nil {
			return "", fmt.Errorf("encode the AdminComment of job %s: %w", a.Job, err)
		}
		return form(j)
	}
	text, err := keep(len(a.GPUs))
	if err != nil || len(text) <= AdminCommentMaxBytes {
		return text, err
	}
	lo, hi := -1, len(a.GPUs) // keep(lo) fits (lo = -1: not known yet), keep(hi) does not
	for hi-lo > 1 {
		mid := (lo + hi) / 2 // ≥ 0: hi ≥ lo+2
		t, err := keep(mid)
		if err != nil {
			return "", err
		}
		if len(t) <= AdminCommentMaxBytes {
			lo, text = mid, t
		} else {
			hi = mid
		}
	}
	if lo < 0 {
		return "", fmt.Errorf("the AdminComment of job %s is %d bytes without its GPUs, over %d", a.Job, len(text), AdminCommentMaxBytes)
	}
	return text, nil
}

// ParseAdminSummary reads an AdminComment heatsink wrote, JSON or
// packed (PackedPrefix); ok is false for another tool's (or none).
func ParseAdminSummary(s string) (AdminSummary, bool) {
	var a AdminSummary
	b := []byte(s)
	if strings.HasPrefix(strings.ToLower(s), PackedPrefix) {
		var err error
		if b, err = unpack(s); err != nil {
			return AdminSummary{}, false
		}
	}
	if !bytes.HasPrefix(b, []byte(`{"heatsink":`)) || json.Unmarshal(b, &a) != nil || a.Heatsink == 0 {
		return AdminSummary{}, false
	}
	return a, true
}

// ErrAdminCommentTaken is SetAdminComment's answer for a job whose
// AdminComment another tool (jobstats) already wrote.
var ErrAdminCommentTaken = errors.New("the job's AdminComment holds another tool's data")

// AdminComment reads the job's AdminComment: from sacct where the site
// keeps accounting (the one field alone, so that nothing of the job's
// own can pose as it), else from the controller while it still knows the
// job.
func (c Client) AdminComment(ctx context.Context, id string) (string, error) {
	if !jobID.MatchString(id) {
		return "", fmt.Errorf("job id %q is not a job id", id)
	}
	out, sacctErr := c.Run(ctx, "sacct", "-j", id, "-X", "-n", "-P", "-o", "AdminComment")
	if v := strings.TrimRight(string(out), "\n"); sacctErr == nil && v != "" {
		return v, nil
	}
	// scontrol's line runs the job's own fields (name, working
	// directory, comment) together with AdminComment, and any of them can
	// hold " AdminComment=". Slurm prints AdminComment right after
	// WorkDir, so it is taken only behind the working directory squeue
	// reports, whole, on a line of its own.
	wd, err := c.squeueField(ctx, id, "%Z")
	if err != nil {
		return "", errors.Join(sacctErr, err)
	}
	out, err = c.Run(ctx, "scontrol", "show", "job", "--oneliner", id)
	if err != nil {
		return "", errors.Join(sacctErr, err)
	}
	line, _, _ := strings.Cut(strings.TrimSpace(string(out)), "\n")
	if !aboutJob(line, id) {
		return "", fmt.Errorf("scontrol show job %s: answer is about another job: %.40q", id, line)
	}
	anchor := " WorkDir=" + wd + " "
	i := strings.Index(line, anchor+"AdminComment=")
	if i < 0 {
		return "", nil // none set
	}
	return strings.TrimSpace(ParseRecord(line[i+len(anchor):])["AdminComment"]), nil
}

// aboutJob reports whether scontrol's line describes job id: JobId=id,
// or for an array task (ARRAYJOB_TASK) its own job id followed by the
// array's and the task's.
func aboutJob(line, id string) bool {
	if strings.HasPrefix(line, "JobId="+id+" ") {
		return true
	}
	array, task, ok := strings.Cut(id, "_")
	if !ok {
		return false
	}
	f := strings.SplitN(line, " ", 4)
	return len(f) == 4 && strings.HasPrefix(f[0], "JobId=") && f[1] == "ArrayJobId="+array && f[2] == "ArrayTaskId="+task
}

// SetAdminComment puts the summary into the job's AdminComment unless
// another tool's data is there: that is kept, and ErrAdminCommentTaken
// returned. A job that has ended is updated in the accounting database
// (sacctmgr, as jobstats does: slurmctld refuses to update a finished
// job), in the packed form sacctmgr leaves intact (see PackedPrefix); a
// job slurmctld still runs, or a site without accounting, through
// scontrol, as JSON. Both need Slurm's operator rights, which
// EpilogSlurmctld has.
func (c Client) SetAdminComment(ctx context.Context, id string, a AdminSummary) error {
	old, err := c.AdminComment(ctx, id)
	if err != nil {
		return err
	}
	if _, ours := ParseAdminSummary(old); old != "" && old != "(null)" && !ours {
		return fmt.Errorf("job %s: %w (%.40q...): not replaced", id, ErrAdminCommentTaken, old)
	}
	packed, dbErr := a.EncodePacked()
	if dbErr == nil {
		if dbErr = c.setInAccounting(ctx, id, packed); dbErr == nil {
			return nil
		}
	}
	text, err := a.Encode()
	if err != nil {
		return err
	}
	if _, err := c.Run(ctx, "scontrol", "update", "JobId="+id, "AdminComment="+text); err != nil {
		return fmt.Errorf("set the AdminComment of job %s: %w; %w", id, dbErr, err)
	}
	return nil
}

// AccountingWait bounds how long SetAdminComment waits for slurmdbd to
// know the job. slurmctld sends it a job's records on its own time: an
// array task's record came seconds after the task's EpilogSlurmctld on
// the test cluster (jobstats' epilog sleeps 5 s before its sacctmgr).
const AccountingWait = 20 * time.Second

// setInAccounting runs sacctmgr, again while it answers that nothing
// matched (the job's record is not in slurmdbd yet), for up to
// AccountingWait.
func (c Client) setInAccounting(ctx context.Context, id, text string) error {
	deadline := time.Now().Add(AccountingWait)
	for wait := 250 * time.Millisecond; ; wait *= 2 {
		_, err := c.Run(ctx, "sacctmgr", "-i", "update", "job", "where", "jobid="+id, "set", "AdminComment="+text)
		if err == nil || !strings.Contains(err.Error(), "didn't affect anything") || time.Now().Add(wait).After(deadline) {
			return err
		}
		select {
		case <-ctx.Done():
			return errors.Join(err, ctx.Err())
		case <-time.After(wait):
		}
	}
}

// Print writes the summary for a person.
func (a AdminSummary) Print(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "job %s: %.0f s", a.Job, a.RuntimeS)
	if a.EnergyJ != nil {
		fmt.Fprintf(&b, ", %.1f kJ (%.3f kWh) on its own GPUs and nodes", *a.EnergyJ/1e3, *a.EnergyJ/3.6e6)
	}
	b.WriteString("\n")
	if len(a.GPUs) > 0 {
		fmt.Fprintf(&b, "  %-12s %-4s %10s %8s %12s %8s  %s\n", "host", "gpu", "energy_kj", "peak_c", "hot_throttle", "c_per_w", "uuid")
	}
	num := func(v *float64, scale float64, prec int) string {
		if v == nil {
			return "-"
		}
		return fmt.Sprintf("%.*f", prec, *v/scale)
	}
	for _, g := range a.GPUs {
		throttle := "-"
		if g.ThermalThrottleS != nil {
			throttle = fmt.Sprintf("%.0f s", *g.ThermalThrottleS)
		}
		fmt.Fprintf(&b, "  %-12s %-4s %10s %8s %12s %8s  %s\n", g.Host, g.GPU, num(g.EnergyJ, 1e3, 1), num(g.PeakC, 1, 1), throttle, num(g.CPerW, 1, 3), g.UUID)
		if len(g.SharedWith) > 0 {
			fmt.Fprintf(&b, "  %-12s %-4s the GPU's energy, shared (MIG) with jobs %s, counted in none\n", "", "", strings.Join(g.SharedWith, ","))
		}
	}
	if a.GPUsLeftOut > 0 {
		fmt.Fprintf(&b, "  (%d more GPUs in the file)\n", a.GPUsLeftOut)
	}
	for _, h := range slices.Sorted(maps.Keys(a.SharedCPUEnergyJ)) {
		fmt.Fprintf(&b, "  %s: CPU packages %.1f kJ shared with other jobs, counted in none\n", h, a.SharedCPUEnergyJ[h]/1e3)
	}
	if a.File != "" {
		fmt.Fprintf(&b, "  full summary: %s\n", a.File)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// AccountingJobID is how the accounting database must be asked for job
// id, the job EpilogSlurmctld runs for (getenv its environment): an array
// task as ARRAYJOB_TASK, as jobstats names it. An array's first task has
// the array's own id as its job id, and `sacctmgr ... where jobid=ID`
// names every task of the array by it: each task's summary would
// overwrite the others'. Another job, or one the environment is not
// about, is id itself.
func AccountingJobID(id string, getenv func(string) string) string {
	if getenv("SLURM_JOB_ID") != id {
		return id
	}
	array, task := getenv("SLURM_ARRAY_JOB_ID"), getenv("SLURM_ARRAY_TASK_ID")
	if a := array + "_" + task; array != "" && task != "" && jobID.MatchString(a) {
		return a
	}
	return id
}
