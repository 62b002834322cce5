#!/bin/bash
# Stop the GCE peer started by gce_start.sh on PORT (by its recorded PID only).
#   gce_stop.sh PORT
set -u
PORT="${1:?usage: gce_stop.sh PORT}"
. "$(cd "$(dirname "$0")" && pwd)/stop_by_pid.sh"
. "$(cd "$(dirname "$0")" && pwd)/run_dir.sh"
stop_by_pid "$PEER_RUN/gce-$PORT/pid" "port $PORT"
