#!/bin/bash
# An snmpd pass_persist agent serving PDU readings from a values file, so a
# test (or bench/facility.sh) can change what a real snmpd answers while it runs.
#
#   pass_persist .1.3.6.1.4.1.318 /path/passpersist.sh /path/values
#
# The values file holds one reading per line, re-read on every request:
#   .1.3.6.1.4.1.318.1.1.26.6.3.1.5.1 gauge 84
#   .1.3.6.1.4.1.318.1.1.26.4.3.1.5.1 string not-a-number
# TYPE is one of pass_persist's: integer, gauge, counter, counter64,
# timeticks, string, objectid, ipaddress. An OID absent from the file is
# answered NONE, which snmpd turns into noSuchInstance (noSuchName in v1).
# getnext is not served (every OID is read with Get), so walks end at once.
values=${1:?usage: passpersist.sh VALUES_FILE}
while IFS= read -r cmd; do
  case "$cmd" in
    PING) echo PONG ;;
    get)
      IFS= read -r oid
      found=
      if [ -r "$values" ]; then
        while read -r o t v; do
          if [ "$o" = "$oid" ]; then
            found=1
            printf '%s\n%s\n%s\n' "$oid" "$t" "$v"
            break
          fi
        done <"$values"
      fi
      [ -n "$found" ] || echo NONE
      ;;
    getnext) IFS= read -r oid; echo NONE ;;
    set) IFS= read -r oid; IFS= read -r val; echo not-writable ;;
    *) ;;
  esac
done
