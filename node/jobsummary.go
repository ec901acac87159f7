package node

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/heatsink-hpc/heatsink/analysis"
	"github.com/heatsink-hpc/heatsink/collectors/influx"
	"github.com/heatsink-hpc/heatsink/configs"
	"github.com/heatsink-hpc/heatsink/point"
	"github.com/heatsink-hpc/heatsink/rundir"
	"github.com/heatsink-hpc/heatsink/slurm"
)

// ErrOwnSummary is JobSummary's answer for a job that heatsink run
// launched: the run writes the summary itself.
var ErrOwnSummary = errors.New("nothing to do")

// JobSummary is `heatsink slurm summary`: it reads the readings of job
// jobID's nodes from InfluxDB, or from the Prometheus server promURL when
// set, from baseline before its start to its end (waiting up to wait for
// them), and writes job-ID-thermal.json into outDir (default the job's
// working directory), owned by the job's user, and, where there is an
// InfluxDB, job_summary points into it. It returns the file's path.
//
// As root (EpilogSlurmctld) the file is written by writer (argv: heatsink's
// hidden `slurm write-summary`) run as the job's user, so that root writes
// nowhere the user could not; see slurm.UserWriter.
func JobSummary(ctx context.Context, cfg *configs.Config, jobID, outDir, promURL string, baseline, wait time.Duration, writer []string) (string, error) {
	if jobID == "" {
		jobID = os.Getenv("SLURM_JOB_ID")
	}
	if jobID == "" {
		return "", errors.New("give --job ID (or run as EpilogSlurmctld, which sets SLURM_JOB_ID)")
	}
	client := slurm.Client{}
	job, err := client.Job(ctx, jobID)
	if err != nil {
		return "", err
	}
	if err := job.CheckEnv(os.Getenv); err != nil {
		return "", fmt.Errorf("%w: nothing written", err)
	}
	// While a job completes, scontrol lists only the nodes still
	// completing; slurmctld gives EpilogSlurmctld the whole list.
	if nl := os.Getenv("SLURM_JOB_NODELIST"); nl != "" && os.Getenv("SLURM_JOB_ID") == jobID {
		if job.Nodes, err = client.Hostnames(ctx, nl); err != nil {
			return "", err
		}
	}
	if run := slurm.RunOf(job.Name); run != "" {
		// heatsink run --launcher slurm summarises its own job, over
		// its load phase, into its run directory.
		return "", fmt.Errorf("job %s is heatsink run %s, which writes its own summary: %w", jobID, run, ErrOwnSummary)
	}
	if job.End.IsZero() {
		job.End = time.Now()
	}
	// The job chose its directory: it is written as the job's user. An
	// --out the operator gave is written as the operator.
	fromJob := outDir == ""
	if fromJob {
		outDir = job.WorkDir
		if outDir == "" && job.StdOut != "" {
			outDir = filepath.Dir(job.StdOut)
		}
	}
	if outDir == "" {
		return "", fmt.Errorf("job %s has no working directory: give --out", jobID)
	}
	tmp, err := os.MkdirTemp("", "heatsink-job-"+jobID+"-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(tmp)
	from := job.Start.Add(-baseline)
	start, end := job.Start, job.End
	meta := &rundir.Meta{ID: "slurm-" + jobID, Start: from, IntervalS: cfg.Interval.Seconds(), Status: "complete",
		Phases: []rundir.Phase{{Name: "baseline", Start: from, End: &start}, {Name: "load", Start: start, End: &end}}}
	if baseline <= 0 {
		meta.Phases = meta.Phases[1:]
	}
	if err := rundir.WriteMeta(tmp, meta); err != nil {
		return "", err
	}
	span := slurm.Span{Job: jobID, Run: slurm.RunOf(job.Name), Name: job.Name, Nodes: job.Nodes, Start: job.Start, End: job.End}
	readings := slurm.Readings{Influx: *influx.ConfigOf(cfg), Prometheus: promURL, Step: cfg.Interval,
		Hosts: span.Nodes, From: from, To: end.Add(time.Nanosecond), Wait: wait}
	// Settled before the readings are gathered: a job whose user cannot
	// be resolved here gets no summary, and no time is spent on one.
	var w *slurm.UserWriter
	if fromJob {
		if w, err = slurm.UserWriterFor(job.UID, job.User, writer); err != nil {
			return "", err
		}
	}
	s, path, err := writeJobSummary(ctx, cfg, tmp, outDir, span, &readings, w)
	if s == nil {
		return path, err
	}
	// Where admins look (sacct -o AdminComment): the controller's copy,
	// written whatever became of the InfluxDB points.
	if aerr := client.SetAdminComment(ctx, slurm.AccountingJobID(jobID, os.Getenv), s.Admin(path)); aerr != nil {
		slog.Warn("job summary not put into the job's AdminComment", "job", jobID, "err", aerr)
	}
	return path, err
}

// WriteJobSummary gathers the readings r selects (none when r is nil: dir
// holds them) into the run directory dir (whose run.json must have the job
// as its load phase), summarises the job, writes job-ID-thermal.json into
// outDir and, where there is an InfluxDB, the job_summary points; it
// returns the file's path. w, when set, writes the file as the job's
// user (see slurm.UserWriterFor).
func WriteJobSummary(ctx context.Context, cfg *configs.Config, dir, outDir string, job slurm.Span, r *slurm.Readings, w *slurm.UserWriter) (string, error) {
	_, path, err := writeJobSummary(ctx, cfg, dir, outDir, job, r, w)
	return path, err
}

// writeJobSummary is WriteJobSummary, also returning the summary once its
// file is written (nil before).
func writeJobSummary(ctx context.Context, cfg *configs.Config, dir, outDir string, job slurm.Span, r *slurm.Readings, w *slurm.UserWriter) (*slurm.Summary, string, error) {
	if r != nil {
		held, err := slurm.GatherJob(ctx, *r, dir, job.Job, job.Start)
		if err != nil {
			return nil, "", err
		}
		job.Held = held
	}
	run, err := analysis.Load(dir)
	if err != nil {
		return nil, "", err
	}
	s := slurm.Summarize(run, analysis.DefaultOptions(), job)
	path, err := s.WriteFile(outDir, w)
	if err != nil {
		return nil, "", err
	}
	if !influx.ConfigOf(cfg).Enabled() {
		return s, path, nil
	}
	if err := sendPoints(cfg, "job-"+job.Job, s.Points()); err != nil {
		return s, path, fmt.Errorf("job summary written to %s, but not to InfluxDB: %w", path, err)
	}
	return s, path, nil
}

// sendPoints writes a few points to InfluxDB through a spool of their own
// beside the agent's (whose lock the agent holds), waiting for them to be
// sent; the spool is removed once empty.
func sendPoints(cfg *configs.Config, name string, pts []point.Point) error {
	ic := *influx.ConfigOf(cfg)
	spoolDir := ic.SpoolDir
	if spoolDir == "" {
		spoolDir = influx.DefaultSpoolDir()
	}
	ic.SpoolDir = spoolDir + "." + name
	s, err := influx.New(influx.Options{Config: ic, Logger: slog.Default(), DrainTimeout: 30 * time.Second})
	if err != nil {
		return err
	}
	if err := s.Write(pts); err != nil {
		s.Abort()
		return err
	}
	err = s.Close()
	if st := s.Stats(); st.Spool.UnsentPoints > 0 {
		return errors.Join(err, fmt.Errorf("%d points not sent, kept in %s", st.Spool.UnsentPoints, ic.SpoolDir))
	}
	if err == nil {
		os.RemoveAll(ic.SpoolDir)
	}
	return err
}
