#!/bin/bash
# Stop the IBM Cloud peer started by ibm_start.sh on PORT (by its recorded PID only).
#   ibm_stop.sh PORT
set -u
PORT="${1:?usage: ibm_stop.sh PORT}"
. "$(cd "$(dirname "$0")" && pwd)/stop_by_pid.sh"
. "$(cd "$(dirname "$0")" && pwd)/run_dir.sh"
stop_by_pid "$PEER_RUN/ibm-$PORT/pid" "port $PORT"
