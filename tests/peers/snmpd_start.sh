#!/bin/bash
# Start a private net-snmp snmpd on 127.0.0.1:PORT serving a simulated PDU
# (tests/peers/snmp_pdu.py through pass_persist).
#
#   snmpd_start.sh PORT [KIND=apc|eaton|ibmblade|intelmodular|ipdu|emerson|ifmib] [OUTLETS=24]
#
# Run directory: $PEERS_DIR/run/UID/snmpd-PORT (snmpd.conf, state.json, ops.log,
# snmpd.log, snmpd.pid, persistent dir for the v3 users).
# Credentials (test-only):
#   v1/v2c  community "private" (read-write), "public" (read-only)
#   v3      fenceSha   SHA/AES     authPriv  passwords authpass123 / privpass123
#           fenceSha256 SHA-256/AES authPriv  same passwords
#           fenceMd5   MD5/DES     authPriv  same passwords
#           fenceAuth  SHA         authNoPriv password authpass123
# State: outlets 1..OUTLETS, all on; names node01..; 120 W per outlet that is on.
# Prints the snmpd PID on stdout (last line). Stop with snmpd_stop.sh PORT.
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
PORT="${1:?usage: snmpd_start.sh PORT [KIND] [OUTLETS]}"
KIND="${2:-apc}"
N="${3:-24}"
. "$(cd "$(dirname "$0")" && pwd)/run_dir.sh"
D="$PEER_RUN/snmpd-$PORT"
SNMPD="$(command -v snmpd || echo /usr/sbin/snmpd)"
[ -x "$SNMPD" ] || { echo "snmpd is not installed (tests/peers/setup.sh)" >&2; exit 3; }
if [ -f "$D/snmpd.pid" ] && kill -0 "$(cat "$D/snmpd.pid")" 2>/dev/null; then
  echo "already running on port $PORT: pid $(cat "$D/snmpd.pid")" >&2; exit 1
fi
rm -rf "$D"; mkdir -p "$D/persist"
case "$KIND" in
  apc)   ROOT=.1.3.6.1.4.1.318; SYSOID=.1.3.6.1.4.1.318.1.3.4.5 ;;
  eaton) ROOT=.1.3.6.1.4.1.534; SYSOID=.1.3.6.1.4.1.534.6.6.6 ;;
  # The next sysObjectIDs are not read by the agents but ipdu's (IBM iPDU).
  ibmblade) ROOT=.1.3.6.1.4.1.2.3.51; SYSOID=.1.3.6.1.4.1.2.3.51.2 ;;
  intelmodular) ROOT=.1.3.6.1.4.1.343; SYSOID=.1.3.6.1.4.1.343.2.19 ;;
  ipdu)  ROOT=.1.3.6.1.4.1.2.6.223; SYSOID=.1.3.6.1.4.1.2.6.223 ;;
  emerson) ROOT=.1.3.6.1.4.1.476; SYSOID=.1.3.6.1.4.1.476.1.42 ;;
  # A switch: IF-MIB's interfaces and ifMIB subtrees (snmpd's own are left out).
  ifmib) ROOT=.1.3.6.1.2.1.2; ROOT2=.1.3.6.1.2.1.31; SYSOID=.1.3.6.1.4.1.8072.3.2.10 ;;
  *) echo "unknown kind $KIND" >&2; exit 2 ;;
esac
ON=$(seq -s, 1 "$N")
echo "{\"outlets\": $N, \"on\": [$ON], \"watts\": 120, \"refuse\": []}" > "$D/state.json"
: > "$D/ops.log"
cat > "$D/snmpd.conf" <<CONF
agentAddress udp:127.0.0.1:$PORT
sysObjectID $SYSOID
sysDescr fencekit test PDU ($KIND)
rwcommunity private 127.0.0.1
rocommunity public 127.0.0.1
createUser fenceSha SHA "authpass123" AES "privpass123"
createUser fenceSha256 SHA-256 "authpass123" AES "privpass123"
createUser fenceMd5 MD5 "authpass123" DES "privpass123"
createUser fenceAuth SHA "authpass123"
rwuser fenceSha priv
rwuser fenceSha256 priv
rwuser fenceMd5 priv
rwuser fenceAuth auth
pass_persist $ROOT /usr/bin/python3 $HERE/snmp_pdu.py $D $KIND
CONF
if [ -n "${ROOT2:-}" ]; then
  echo "pass_persist $ROOT2 /usr/bin/python3 $HERE/snmp_pdu.py $D $KIND" >> "$D/snmpd.conf"
fi
# -C: only this configuration; -f: foreground (we background it); the
# persistent directory keeps the v3 users private to this run.
SNMP_PERSISTENT_DIR="$D/persist" MIBS="" MIBDIRS=/nonexistent \
  setsid "$SNMPD" -f -C -c "$D/snmpd.conf" -Lf "$D/snmpd.log" -p "$D/snmpd.pid" \
  -I -smux,mteTrigger,mteTriggerConf${ROOT2:+,interfaces,ifTable,ifXTable} </dev/null >/dev/null 2>&1 &
PID=$!
for _ in $(seq 1 100); do
  if ss -Hlun "src 127.0.0.1:$PORT" 2>/dev/null | grep -q .; then
    echo "$PID" > "$D/snmpd.pid"; echo "$PID"; exit 0
  fi
  kill -0 "$PID" 2>/dev/null || { echo "snmpd died:" >&2; cat "$D/snmpd.log" >&2; exit 1; }
  sleep 0.05
done
echo "snmpd did not bind 127.0.0.1:$PORT" >&2; cat "$D/snmpd.log" >&2; kill "$PID"; exit 1
