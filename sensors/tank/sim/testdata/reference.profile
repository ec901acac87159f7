# The reference experiment's shape: 30 min idle baseline, 7.5 h of one
# workload on three nodes, then cooldown at idle.
0      250
30m    2400
8h     250
