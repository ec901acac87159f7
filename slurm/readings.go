package slurm

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/heatsink-hpc/heatsink/collectors/influx"
	"github.com/heatsink-hpc/heatsink/point"
	"github.com/heatsink-hpc/heatsink/point/schema"
	"github.com/heatsink-hpc/heatsink/recordings/influxhistory"
	"github.com/heatsink-hpc/heatsink/recordings/promhistory"
	"github.com/heatsink-hpc/heatsink/rundir"
)

// Readings selects the nodes' readings to gather from InfluxDB, or from a
// Prometheus server that scrapes the nodes' exporters.
type Readings struct {
	Influx influx.Config
	// Prometheus, when set, is the server to read from instead of InfluxDB
	// (heatsink's own /metrics, DCGM exporter, node_exporter).
	Prometheus string
	// Step is the interval of the readings read from Prometheus; default 1 s.
	Step  time.Duration
	Hosts []string
	// From and To bound the readings (To exclusive).
	From, To time.Time
	// Wait is how long to wait for every host's readings to reach To: the
	// agents send from their spools a second or so behind, longer after an
	// outage. 0 does not wait.
	Wait time.Duration
}

// Gather appends the hosts' readings to the points.lp of the run
// directory dir (created if need be) and returns how many it wrote. The
// job and jobs tags are dropped: analysis keys a series by all its tags, and a GPU
// must be one series across the job's start, not an idle series and a busy
// one.
func Gather(ctx context.Context, r Readings, dir string) (int, error) {
	return gather(ctx, r, dir, nil)
}

// Holding is what a job held on one node, as the node's agent tagged its
// readings while the job ran (see JobTags).
type Holding struct {
	// GPUs are the indices of the GPUs whose points carried the job.
	GPUs []string `json:"gpus"`
	// SharedWith are the other jobs on the node's shared readings (CPU,
	// memory, PDU) while the job ran.
	SharedWith []string `json:"shared_with,omitempty"`
	// SharedGPUs are the job's GPUs whose points also carried other jobs
	// (MIG instances of one GPU, a job whose GPUs were not known), by
	// index, with those jobs: their energy is the GPU's, in no job's.
	SharedGPUs map[string][]string `json:"shared_gpus,omitempty"`
}

// GatherJob is Gather for the summary of job, which started at start: it
// also returns, per node whose readings carried the job, what the job
// held there. A node whose readings never carried the job (its agent had
// no jobs directory, or was down throughout) is absent: nothing is known
// of it. Readings from Prometheus carry no job tags: the map is empty.
func GatherJob(ctx context.Context, r Readings, dir, job string, start time.Time) (map[string]Holding, error) {
	observe, held := holdings(job, start)
	_, err := gather(ctx, r, dir, observe)
	return held(), err
}

// holdings learns what job held on each node from the tags of the
// readings observe is given; held returns it.
func holdings(job string, start time.Time) (observe func(*point.Point), held func() map[string]Holding) {
	gpus := map[string]map[string]bool{}
	others := map[string]map[string]bool{}
	gpuOthers := map[string]map[string]map[string]bool{} // host -> gpu -> other jobs
	observe = func(p *point.Point) {
		if p.Time.Before(start) {
			return
		}
		ids := slices.Concat(strings.Split(p.Tag(schema.TagJob), ","), strings.Split(p.Tag(schema.TagJobs), ","))
		if !slices.Contains(ids, job) {
			return
		}
		host := p.Tag(schema.TagHost)
		if gpus[host] == nil {
			gpus[host], others[host] = map[string]bool{}, map[string]bool{}
		}
		if g := p.Tag(schema.TagGPU); g != "" && p.Measurement == schema.GPU {
			gpus[host][g] = true
			for _, id := range ids {
				if id != "" && id != job {
					if gpuOthers[host] == nil {
						gpuOthers[host] = map[string]map[string]bool{}
					}
					if gpuOthers[host][g] == nil {
						gpuOthers[host][g] = map[string]bool{}
					}
					gpuOthers[host][g][id] = true
				}
			}
			return
		}
		for _, id := range ids {
			if id != "" && id != job {
				others[host][id] = true
			}
		}
	}
	held = func() map[string]Holding {
		out := map[string]Holding{}
		for host, g := range gpus {
			h := Holding{GPUs: slices.Sorted(maps.Keys(g)), SharedWith: slices.Sorted(maps.Keys(others[host]))}
			if h.GPUs == nil {
				h.GPUs = []string{}
			}
			for gpu, o := range gpuOthers[host] {
				if h.SharedGPUs == nil {
					h.SharedGPUs = map[string][]string{}
				}
				h.SharedGPUs[gpu] = slices.Sorted(maps.Keys(o))
			}
			out[host] = h
		}
		return out
	}
	return observe, held
}

func gather(ctx context.Context, r Readings, dir string, observe func(*point.Point)) (int, error) {
	if len(r.Hosts) == 0 {
		return 0, errors.New("gather readings: no hosts")
	}
	if r.Wait > 0 && r.Prometheus == "" {
		if err := waitFor(ctx, r); err != nil {
			return 0, err
		}
	}
	tmp, err := os.MkdirTemp("", "heatsink-gather-")
	if err != nil {
		return 0, err
	}
	defer os.RemoveAll(tmp)
	if r.Prometheus != "" {
		// Prometheus ranges include their end; To is exclusive here.
		o := promhistory.Options{URL: r.Prometheus, Hosts: r.Hosts, From: r.From, To: r.To.Add(-time.Nanosecond), Step: r.Step}
		if _, err := promhistory.Export(ctx, o, tmp); err != nil {
			return 0, fmt.Errorf("gather readings of %s from Prometheus: %w", strings.Join(r.Hosts, ","), err)
		}
	} else if _, err := influxhistory.Export(ctx, r.Influx, influxhistory.ExportOptions{Hosts: r.Hosts, From: r.From, To: r.To}, tmp); err != nil {
		return 0, fmt.Errorf("gather readings of %s: %w", strings.Join(r.Hosts, ","), err)
	}
	w, err := rundir.Create(dir)
	if err != nil {
		return 0, err
	}
	n := 0
	batch := make([]point.Point, 0, 1024)
	flush := func() error {
		err := w.Write(batch)
		n += len(batch)
		batch = batch[:0]
		return err
	}
	err = rundir.ForEachPoint(tmp, func(p *point.Point) error {
		if observe != nil {
			observe(p)
		}
		q := *p
		q.Tags = slices.DeleteFunc(slices.Clone(p.Tags), func(t point.Tag) bool { return t.Key == schema.TagJob || t.Key == schema.TagJobs })
		batch = append(batch, q)
		if len(batch) == cap(batch) {
			return flush()
		}
		return nil
	}, nil)
	if err == nil {
		err = flush()
	}
	if cerr := w.Close(); err == nil {
		err = cerr
	}
	return n, err
}

// waitFor polls InfluxDB until every host has a reading at or after To.
func waitFor(ctx context.Context, r Readings) error {
	deadline := time.Now().Add(r.Wait)
	for {
		missing, err := hostsWithout(ctx, r)
		if err == nil && len(missing) == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			if err != nil {
				return fmt.Errorf("wait for the nodes' readings: %w", err)
			}
			return fmt.Errorf("after %v, InfluxDB has no reading at or after %s from %s: is the agent running there, and sending?",
				r.Wait, r.To.Format(time.RFC3339), strings.Join(missing, ", "))
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Second):
		}
	}
}

// hostsWithout returns the hosts with no reading in [To, To+1h).
func hostsWithout(ctx context.Context, r Readings) ([]string, error) {
	tmp, err := os.MkdirTemp("", "heatsink-wait-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	if _, err := influxhistory.Export(ctx, r.Influx, influxhistory.ExportOptions{Hosts: r.Hosts, From: r.To, To: r.To.Add(time.Hour)}, tmp); err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	err = rundir.ForEachPoint(tmp, func(p *point.Point) error {
		seen[p.Tag(schema.TagHost)] = true
		return nil
	}, nil)
	var missing []string
	for _, h := range r.Hosts {
		if !seen[h] {
			missing = append(missing, h)
		}
	}
	return missing, err
}
