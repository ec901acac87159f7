#!/bin/sh
# Slurm Prolog: records the job and its GPUs (SLURM_JOB_GPUS) in the node
# agent's jobs directory, so that the agent (heatsink collect --jobs-dir)
# tags the job's GPUs' points with job=ID, the node's shared readings with
# jobs=ID,... while it runs, and marks its start with a job_start event.
#
# slurm.conf:  Prolog=/etc/slurm/heatsink-prolog.sh
#              PrologFlags=Alloc   (at allocation, so the whole job is tagged)
#
# It never fails the job: a Prolog that fails drains the node. slurmd runs
# it with no PATH, so the paths are absolute.
HEATSINK=/usr/local/bin/heatsink
JOBS_DIR=/run/heatsink/jobs
[ -x "$HEATSINK" ] || exit 0
"$HEATSINK" slurm prolog --jobs-dir "$JOBS_DIR"
exit 0
