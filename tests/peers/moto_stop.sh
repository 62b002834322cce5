#!/bin/bash
# Stop the moto server started by moto_start.sh on PORT (by its recorded PID only).
#   moto_stop.sh PORT
set -u
PORT="${1:?usage: moto_stop.sh PORT}"
D="${PEERS_DIR:-/tmp/fencekit-peers}/run/moto-$PORT"
[ -f "$D/pid" ] || { echo "no pid file for port $PORT" >&2; exit 1; }
PID="$(cat "$D/pid")"
if kill -0 "$PID" 2>/dev/null; then
  kill "$PID"
  for _ in $(seq 1 50); do kill -0 "$PID" 2>/dev/null || break; sleep 0.1; done
  kill -0 "$PID" 2>/dev/null && kill -9 "$PID"
  echo "stopped $PID" >&2
else
  echo "pid $PID not running" >&2
fi
rm -f "$D/pid"
echo "$PID"
