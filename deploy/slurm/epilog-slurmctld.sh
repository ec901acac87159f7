#!/bin/sh
# Slurm EpilogSlurmctld (runs once per job, on the controller): the job's
# thermal summary from the nodes' readings in InfluxDB, written beside the
# job's output as job-ID-thermal.json and into InfluxDB as job_summary points.
# Jobs of heatsink run --launcher slurm are left to the run, which
# summarises its own load phase.
#
# slurm.conf:  EpilogSlurmctld=/etc/slurm/heatsink-epilog-slurmctld.sh
# The configuration needs sinks.influx (the same database the agents write).
HEATSINK=/usr/local/bin/heatsink
CONFIG=/etc/heatsink/heatsink.yaml
LOG=/var/log/heatsink-summary.log
[ -x "$HEATSINK" ] || exit 0
"$HEATSINK" slurm summary --config "$CONFIG" --baseline 5m --wait 60s >>"$LOG" 2>&1
exit 0
