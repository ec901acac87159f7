package slurm

import "context"

// OpenDirNoFollowWith lets the external tests open a directory both ways:
// with openat2 and by the component walk kept for kernels without it.
var OpenDirNoFollowWith = openDirNoFollowWith

// JobText reads a job the way a Slurm without squeue --json is read.
func JobText(c Client, ctx context.Context, id string) (JobInfo, error) {
	return expand(c, ctx)(c.jobText(ctx, id))
}

// JobJSON reads a job from squeue --json whatever the Slurm version.
func JobJSON(c Client, ctx context.Context, id string) (JobInfo, error) {
	return expand(c, ctx)(c.jobJSON(ctx, id))
}

func expand(c Client, ctx context.Context) func(JobInfo, error) (JobInfo, error) {
	return func(j JobInfo, err error) (JobInfo, error) {
		if err == nil {
			j.Nodes, err = c.Hostnames(ctx, j.nodeList)
		}
		return j, err
	}
}

// NextLevel is the band a node moves to, for the hysteresis table.
var NextLevel = nextLevel
