#!/bin/sh
# Stop the snmpd started by snmpd_start.sh for PORT (by its recorded PID).
PORT=${1:?usage: snmpd_stop.sh PORT}
. "$(cd "$(dirname "$0")" && pwd)/run_dir.sh"
D="$PEER_RUN/snmpd-$PORT"
[ -f "$D/snmpd.pid" ] || { echo "no pid file $D/snmpd.pid" >&2; exit 1; }
PID=$(cat "$D/snmpd.pid")
kill "$PID" 2>/dev/null && echo "stopped $PID" || echo "not running: $PID"
rm -f "$D/snmpd.pid"
