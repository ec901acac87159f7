#!/bin/sh
# Slurm HealthCheckProgram: drains the node while one of its critical alert
# rules fires (reason "heatsink: RULE on DEVICE (VALUE vs LIMIT)"), resumes it
# once no such rule has fired for 5 minutes. Nodes drained for other reasons
# are left alone.
#
# slurm.conf:  HealthCheckProgram=/etc/slurm/heatsink-healthcheck.sh
#              HealthCheckInterval=60
#              HealthCheckNodeState=ANY
HEATSINK=/usr/local/bin/heatsink
AGENT=http://127.0.0.1:9109
[ -x "$HEATSINK" ] || exit 0
exec "$HEATSINK" healthcheck --agent "$AGENT" --cool-for 5m
