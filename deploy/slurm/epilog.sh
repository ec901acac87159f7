#!/bin/sh
# Slurm Epilog: removes the job's record; the node agent stops tagging
# points with it and marks its end with a job_end event.
#
# slurm.conf:  Epilog=/etc/slurm/heatsink-epilog.sh
HEATSINK=/usr/local/bin/heatsink
JOBS_DIR=/run/heatsink/jobs
[ -x "$HEATSINK" ] || exit 0
"$HEATSINK" slurm epilog --jobs-dir "$JOBS_DIR"
exit 0
