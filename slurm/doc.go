// Package slurm plugs heatsink into the Slurm workload manager, the
// distributed engine a site already runs, rather than a coordinator of its
// own:
//
//   - per-job monitoring: the Prolog records the job starting on the node
//     in a jobs directory (StartJob), the node agent watching it (Watcher)
//     adds the job id as a `job` tag to every point while the job runs and
//     marks its start and end with events; the Epilog removes the record;
//   - a per-job thermal summary (Summarize): peak temperatures, heat
//     interval and energy per GPU and per node, computed by the analysis
//     package over the job's span, written beside the job's output as
//     job-ID-thermal.json and into InfluxDB as job_summary points;
//   - multi-node runs: an allocation (Allocate) held for the whole
//     experiment, baseline and cooldown included, with the job launched by
//     srun on every node;
//   - a node health check for HealthCheckProgram (HealthCheck): it drains a
//     node whose hotspot rule fires, with the rule as the reason, and
//     resumes it once the rule has cleared and stayed clear.
//
// Everything goes through Slurm's own commands (scontrol, salloc, srun,
// scancel), so it works with whatever version and authentication the site
// runs. slurm/slurmtest starts a real one-node (or several-node) cluster
// for tests.
package slurm
