#!/usr/bin/env bash
# How recordings.tar.gz was made (issue 18), on the device machine: one DGEMM
# run with a 420 s load, recorded at once by heatsink run (1 Hz), nvidia-smi
# -lms 1000 and a 10 Hz nvidia-smi of the temperatures. It expects a gzipped
# heatsink binary beside it (go build -o heatsink ./cmd/heatsink; gzip
# heatsink) and writes $OUT/long.tar.gz; about 530 s.
set -u
C=$(dirname "$0"); W=/tmp/long; mkdir -p $W
gunzip -c $C/heatsink.gz >$W/heatsink && chmod +x $W/heatsink
Q=timestamp,index,uuid,name,temperature.gpu,temperature.memory,power.draw,clocks.current.sm,clocks.current.memory,utilization.gpu,utilization.memory,memory.used,pstate,clocks_event_reasons.active
nvidia-smi --query-gpu=name,driver_version,power.limit,temperature.gpu,temperature.memory,power.draw --format=csv >$W/gpu-info.txt 2>&1
one() { # NAME LOAD COOLDOWN
  TZ=UTC nvidia-smi --query-gpu=$Q --format=csv -lms 1000 >$W/smi-$1.csv 2>$W/smi-$1.err & a=$!
  TZ=UTC nvidia-smi --query-gpu=timestamp,index,temperature.gpu,temperature.memory,power.draw --format=csv -lms 100 >$W/smi10-$1.csv 2>$W/smi10-$1.err & b=$!
  sleep 2
  $W/heatsink run --workload $1 --baseline 40s --load $2 --cooldown $3 --out $W/run-$1 >$W/run-$1.log 2>&1
  echo "run $1 rc=$?"
  sleep 1; kill $a $b; wait $a $b 2>/dev/null
}

one dgemm 420s 60s
date -u
cd $W && tar czf $OUT/long.tar.gz run-dgemm smi-*.csv smi10-*.csv *.log *.err gpu-info.txt
ls -la $W $OUT; cat gpu-info.txt
