#!/bin/bash
# Stop the moto server started by moto_start.sh on PORT (by its recorded PID only).
#   moto_stop.sh PORT
set -u
PORT="${1:?usage: moto_stop.sh PORT}"
. "$(cd "$(dirname "$0")" && pwd)/stop_by_pid.sh"
. "$(cd "$(dirname "$0")" && pwd)/run_dir.sh"
stop_by_pid "$PEER_RUN/moto-$PORT/pid" "port $PORT"
