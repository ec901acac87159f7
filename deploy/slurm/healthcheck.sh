#!/bin/sh
# Slurm HealthCheckProgram: drains the node while one of its critical alert
# rules fires (reason "heatsink: RULE on DEVICE (VALUE vs LIMIT)"), resumes it
# once no such rule has fired for 5 minutes. Nodes drained for other reasons
# are left alone.
#
# It believes only the agent: over its socket (collect --socket, root's
# alone), else over the port, where the agent must present the certificate
# of its web config (and get the password of AUTH) or, over plain http, the
# port must be held by root. An agent it cannot trust is an unhealthy node:
# a drained node stays drained, and one in service is drained ("heatsink:
# agent not trusted: ...") after two such checks in a row, so a restart of
# the agent between two checks drains nothing.
#
# slurm.conf:  HealthCheckProgram=/etc/slurm/heatsink-healthcheck.sh
#              HealthCheckInterval=60
#              HealthCheckNodeState=ANY
HEATSINK=/usr/local/bin/heatsink
SOCKET=/run/heatsink/agent.sock
AGENT=http://127.0.0.1:9109
# With the agent's --web.config.file (TLS, basic auth): AGENT=https://127.0.0.1:9109,
# WEB_CONFIG=/etc/heatsink/web.yml and AUTH=/etc/heatsink/agent.auth
# ("user:password", mode 0600).
WEB_CONFIG=
AUTH=
[ -x "$HEATSINK" ] || exit 0
exec "$HEATSINK" healthcheck --agent "$AGENT" --agent-socket "$SOCKET" \
	${WEB_CONFIG:+--web.config.file "$WEB_CONFIG"} ${AUTH:+--agent-auth "$AUTH"} \
	--untrusted-checks 2 --cool-for 5m
