# Sourced by bench/facility.sh and bench/telegraf.sh: starts the facility
# stand-ins on loopback, a real net-snmp snmpd serving changing APC
# PowerNet-MIB values on 127.0.0.1:11161 and `heatsink tank-sim` on
# 127.0.0.1:18080, and waits until both answer.
#
#   start_facility_peers WORK HEATSINK_BIN [SNMP_PORT [TANK_PORT]]
#
# (other ports than those defaults let a bench run beside facility.sh);
# appends their process ids to the caller's pids array (the caller kills
# them) and leaves the logs in WORK/snmp/snmpd.log and WORK/tank-sim.log.

start_facility_peers() {
  local work=$1 heatsink=$2 snmp_port=${3:-11161} tank_port=${4:-18080} snmpd p i
  snmpd=$(command -v snmpd || true)
  for p in /usr/sbin/snmpd /usr/local/sbin/snmpd; do [ -n "$snmpd" ] || { [ -x "$p" ] && snmpd=$p; }; done
  [ -n "$snmpd" ] || { echo "bench: snmpd not found; run scripts/deps.sh" >&2; return 1; }

  # snmpd with the APC subtree served by pass_persist from a values file.
  mkdir -p "$work/snmp/persist" "$work/snmp/mibs"
  local values=$work/snmp/values
  _write_pdu_values "$values" 84 45670
  cat >"$work/snmp/snmpd.conf" <<CONF
[snmp] persistentDir $work/snmp/persist
agentAddress udp:127.0.0.1:$snmp_port
dontLogTCPWrappersConnects yes
sysDescr APC Web/SNMP Management Card (MB:v4.1.0 PF:v6.2.1 MN:AP8641) [heatsink bench stand-in]
rocommunity public 127.0.0.1
pass_persist .1.3.6.1.4.1.318 $PWD/sensors/pdu/snmptest/passpersist.sh $values
CONF
  MIBDIRS=$work/snmp/mibs MIBS= "$snmpd" -f -Lf "$work/snmp/snmpd.log" -C -c "$work/snmp/snmpd.conf" -I -smux -p "$work/snmp/snmpd.pid" &
  pids+=($!)
  # The PDU's load wanders a little every half second; energy keeps counting.
  ( c=84 e=45670; while sleep 0.5; do
      c=$(( 78 + RANDOM % 13 )); e=$(( e + 1 )); _write_pdu_values "$values" $c $e
    done ) &
  pids+=($!)

  # The tank simulator at 60x: 2.4 kW immersed, coolant just under the
  # 40 °C setpoint, so the pumps start during the run.
  "$heatsink" tank-sim --listen 127.0.0.1:$tank_port --speed 60 --seed 1 --load-w 2400 --initial-c 39.5 2>"$work/tank-sim.log" &
  pids+=($!)

  for i in $(seq 50); do
    if curl -sf http://127.0.0.1:$tank_port/api/realTime >/dev/null 2>&1 &&
       snmpget -v2c -c public -t 0.2 -r 0 127.0.0.1:$snmp_port .1.3.6.1.2.1.1.1.0 >/dev/null 2>&1; then return 0; fi
    sleep 0.2
  done
  { echo "bench: facility peers did not start:"; cat "$work/snmp/snmpd.log" "$work/tank-sim.log"; } >&2
  return 1
}

# APC_PDU_OIDS are the readings _write_pdu_values serves: device power (hW),
# device energy (0.1 kWh), phase 1 current (0.1 A), phase 1 power (hW),
# bank 1 and bank 2 current (0.1 A).
apc=.1.3.6.1.4.1.318.1.1
APC_PDU_OIDS=($apc.26.4.3.1.5.1 $apc.26.4.3.1.9.1 $apc.26.6.3.1.5.1 $apc.26.6.3.1.7.1 $apc.26.8.3.1.5.1 $apc.26.8.3.1.5.2)

_write_pdu_values() { # $1: file; $2: phase current in tenths of A; $3: energy in tenths of kWh
  local f=$1 c=$2 e=$3 b1=$(( $2 * 45 / 100 ))
  cat >"$f.tmp" <<VALUES
${APC_PDU_OIDS[0]} gauge $(( c * 208 / 100 + 3 ))
${APC_PDU_OIDS[1]} gauge $e
${APC_PDU_OIDS[2]} gauge $c
${APC_PDU_OIDS[3]} gauge $(( c * 208 / 100 ))
${APC_PDU_OIDS[4]} gauge $b1
${APC_PDU_OIDS[5]} gauge $(( c - b1 ))
VALUES
  mv "$f.tmp" "$f"
}
