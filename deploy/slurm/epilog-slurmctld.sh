#!/bin/sh
# Slurm EpilogSlurmctld (runs once per job, on the controller): the job's
# thermal summary from the nodes' readings in InfluxDB, written beside the
# job's output as job-ID-thermal.json and into InfluxDB as job_summary points,
# and as one line of JSON into the job's AdminComment (sacct -o AdminComment;
# `heatsink slurm summary JOB` prints it), unless another tool's is there.
# Jobs of heatsink run --launcher slurm are left to the run, which
# summarises its own load phase.
#
# slurm.conf:  EpilogSlurmctld=/etc/slurm/heatsink-epilog-slurmctld.sh
# The configuration needs sinks.influx (the same database the agents write).
# The summary is created by heatsink re-executed as the job's user (its uid,
# gid and groups; the user must resolve on this host), in the job's WorkDir
# reached through no symbolic link: a WorkDir the user cannot write, or one
# behind a link, gets no summary, and $LOG says why. heatsink must be
# executable by every user (0755, in a directory all may enter).
HEATSINK=/usr/local/bin/heatsink
CONFIG=/etc/heatsink/heatsink.yaml
LOG=/var/log/heatsink-summary.log
[ -x "$HEATSINK" ] || exit 0
"$HEATSINK" slurm summary --config "$CONFIG" --baseline 5m --wait 60s >>"$LOG" 2>&1
exit 0
