package slurm

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/heatsink-hpc/heatsink/point"
	"github.com/heatsink-hpc/heatsink/point/schema"
)

// GPU is a GPU a job holds, as the node agent matches it against the GPU
// source's points: by index (the `gpu` tag) or by UUID (the `uuid` tag).
type GPU struct {
	Index string `json:"index,omitempty"`
	UUID  string `json:"uuid,omitempty"`
}

// The sources of a job's GPUs, in the order JobGPUs tries them.
const (
	// GPUsFromSlurm is SLURM_JOB_GPUS, which slurmd gives the Prolog and
	// the Epilog: the node-wide indices of the job's GPU gres (the minor
	// numbers of gres.conf's File=/dev/nvidiaN, or NVML's order under
	// AutoDetect=nvml). It wins because it is the allocation itself, the
	// same for every step, and never renumbered by the job's cgroup.
	GPUsFromSlurm = "SLURM_JOB_GPUS"
	// GPUsFromCUDA is CUDA_VISIBLE_DEVICES, used only when it lists UUIDs:
	// its numbers count the GPUs the job's cgroup lets it see (0..n-1
	// under ConstrainDevices=yes), so they name no GPU of the node.
	GPUsFromCUDA = "CUDA_VISIBLE_DEVICES"
	// GPUsFromMIG is CUDA_VISIBLE_DEVICES naming MIG instances: it wins
	// over SLURM_JOB_GPUS, whose indices then count the node's MIG
	// instances, not its GPUs. The job holds a part of each physical GPU
	// named, which other jobs' instances may share: that GPU's points
	// carry every job on it, and its energy is shared (see Holding).
	GPUsFromMIG = "CUDA_VISIBLE_DEVICES (MIG)"
	// GPUsNone is a job given no GPU on a node whose GPUs are Slurm gres
	// (NodeInfo.HasGPUGres): slurmd sets no SLURM_JOB_GPUS for it, and it
	// holds none of them.
	GPUsNone = "no GPU gres"
)

// JobGPUs returns the GPUs the job holds on this node and the variable
// that told, from the environment slurmd gives the Prolog. No source ("")
// means nothing is known: a node whose GPUs are not Slurm gres, or a job
// that holds none of them (NoGPUsOnGresNode tells which); the agent
// counts such a job on every GPU of the node, as for a node it holds whole. The job's cgroup is no
// source: the Prolog runs before slurmstepd creates it, and cgroup v2
// keeps its device list in an eBPF program nothing can read back.
func JobGPUs(getenv func(string) string) ([]GPU, string, error) {
	cuda := strings.TrimSpace(getenv(GPUsFromCUDA))
	if strings.Contains(cuda, "MIG-") {
		gpus, ok := migParents(cuda)
		if !ok {
			return nil, "", nil
		}
		return gpus, GPUsFromMIG, nil
	}
	if v := strings.TrimSpace(getenv(GPUsFromSlurm)); v != "" {
		idx, err := indexList(v)
		if err != nil {
			return nil, "", fmt.Errorf("%s=%q: %w", GPUsFromSlurm, v, err)
		}
		gpus := make([]GPU, len(idx))
		for i, n := range idx {
			gpus[i] = GPU{Index: strconv.Itoa(n)}
		}
		return gpus, GPUsFromSlurm, nil
	}
	if cuda != "" {
		var gpus []GPU
		for f := range strings.SplitSeq(cuda, ",") {
			f = strings.TrimSpace(f)
			if !strings.HasPrefix(f, "GPU-") {
				// Numbers relative to the cgroup: not the node's GPUs.
				return nil, "", nil
			}
			gpus = append(gpus, GPU{UUID: f})
		}
		return gpus, GPUsFromCUDA, nil
	}
	return nil, "", nil
}

// migParents returns the physical GPUs of the MIG instances in
// CUDA_VISIBLE_DEVICES, where the names tell them: the form of drivers
// before R470, MIG-GPU-<uuid>/<gi>/<ci>, names its GPU's UUID; today's
// MIG-<uuid> does not (only NVML on the node could map it), and then
// nothing is known (ok false). A GPU named as a whole (GPU-<uuid>) is
// kept; a number is not a GPU of the node.
func migParents(cuda string) ([]GPU, bool) {
	var gpus []GPU
	for f := range strings.SplitSeq(cuda, ",") {
		f = strings.TrimSpace(f)
		switch {
		case strings.HasPrefix(f, "MIG-GPU-"):
			parent, _, _ := strings.Cut(strings.TrimPrefix(f, "MIG-"), "/")
			gpus = append(gpus, GPU{UUID: parent})
		case strings.HasPrefix(f, "GPU-"):
			gpus = append(gpus, GPU{UUID: f})
		default:
			return nil, false
		}
	}
	slices.SortFunc(gpus, func(a, b GPU) int { return strings.Compare(a.UUID, b.UUID) })
	return slices.Compact(gpus), true
}

// NoGPUsOnGresNode settles a job JobGPUs found no GPUs for: on a node
// whose GPUs are Slurm gres it holds none (GPUsNone), so that a CPU job
// sharing a GPU node is neither tagged on the GPUs nor charged their
// energy; elsewhere nothing is known and j is left as it is. It asks
// the controller for the node (one scontrol call, for such jobs only).
func NoGPUsOnGresNode(ctx context.Context, c Client, node string, j *Job) error {
	if node == "" {
		return errors.New("SLURMD_NODENAME is not set: cannot tell whether the node's GPUs are gres")
	}
	n, err := c.Node(ctx, node)
	if err != nil {
		return fmt.Errorf("whether node %s's GPUs are gres: %w", node, err)
	}
	if n.HasGPUGres() {
		j.GPUs, j.GPUSource = []GPU{}, GPUsNone
	}
	return nil
}

// indexList parses Slurm's list of GPU indices: "0,1", "0-3" or "0-1,4".
func indexList(s string) ([]int, error) {
	var out []int
	for f := range strings.SplitSeq(s, ",") {
		lo, hi, isRange := strings.Cut(strings.TrimSpace(f), "-")
		a, err := strconv.Atoi(lo)
		if err != nil || a < 0 {
			return nil, fmt.Errorf("%q is not a GPU index", f)
		}
		b := a
		if isRange {
			if b, err = strconv.Atoi(hi); err != nil || b < a {
				return nil, fmt.Errorf("%q is not a range of GPU indices", f)
			}
		}
		for n := a; n <= b; n++ {
			out = append(out, n)
		}
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}

// JobTags tags a node's points with the jobs they belong to: a GPU's
// points with the jobs holding that GPU, every other point (CPU, memory,
// PDU: the node's shared parts) with every job on the node. Two tags:
//
//   - `jobs`, the ids joined by commas in sorted order, on every point a
//     job shares: a query for one job matches it with a regular
//     expression (Prometheus `jobs=~"(.*,)?42(,.*)?"`, InfluxDB
//     `"jobs" =~ /(^|,)42(,|$)/`);
//   - `job`, the id, where the point belongs to that one job alone: the
//     job's own GPUs, and the whole node while one job runs on it (the
//     tag heatsink has always written on nodes a job holds whole).
//
// A point that already names its job (the job_start and job_end events)
// is left as it is.
type JobTags struct {
	all    []string            // every job on the node, sorted
	byGPU  map[string][]string // "gpu\x00index" or "uuid\x00UUID" -> jobs, sorted
	anyGPU []string            // jobs whose GPUs are not known: on every GPU
}

// NewJobTags returns the tags for the jobs running on the node.
func NewJobTags(jobs []Job) *JobTags {
	t := &JobTags{byGPU: map[string][]string{}}
	for _, j := range jobs {
		t.all = append(t.all, j.ID)
		if j.GPUSource == "" {
			t.anyGPU = append(t.anyGPU, j.ID)
			continue
		}
		for _, g := range j.GPUs {
			if g.Index != "" {
				t.byGPU[schema.TagGPU+"\x00"+g.Index] = append(t.byGPU[schema.TagGPU+"\x00"+g.Index], j.ID)
			}
			if g.UUID != "" {
				t.byGPU[schema.TagUUID+"\x00"+g.UUID] = append(t.byGPU[schema.TagUUID+"\x00"+g.UUID], j.ID)
			}
		}
	}
	slices.Sort(t.all)
	return t
}

// TagsFor returns the tags p lacks: job and jobs as the type's comment
// says; none for a point no job shares.
func (t *JobTags) TagsFor(p *point.Point) []point.Tag {
	if t == nil || len(t.all) == 0 || p.Tag(schema.TagJob) != "" {
		return nil
	}
	jobs := t.all
	idx, uuid := p.Tag(schema.TagGPU), p.Tag(schema.TagUUID)
	if idx != "" || uuid != "" {
		jobs = slices.Clone(t.anyGPU)
		if idx != "" {
			jobs = append(jobs, t.byGPU[schema.TagGPU+"\x00"+idx]...)
		}
		if uuid != "" {
			jobs = append(jobs, t.byGPU[schema.TagUUID+"\x00"+uuid]...)
		}
		slices.Sort(jobs)
		jobs = slices.Compact(jobs)
	}
	switch len(jobs) {
	case 0:
		return nil
	case 1:
		return []point.Tag{{Key: schema.TagJob, Value: jobs[0]}, {Key: schema.TagJobs, Value: jobs[0]}}
	}
	return []point.Tag{{Key: schema.TagJobs, Value: strings.Join(jobs, ",")}}
}
