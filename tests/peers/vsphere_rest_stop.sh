#!/bin/bash
# Stop the REST peer started by vsphere_rest_start.sh PORT (by its recorded PID only)
# and remove its run directory.
#   vsphere_rest_stop.sh PORT
set -u
PORT="${1:?usage: vsphere_rest_stop.sh PORT}"
. "$(cd "$(dirname "$0")" && pwd)/stop_by_pid.sh"
. "$(cd "$(dirname "$0")" && pwd)/run_dir.sh"
D="$PEER_RUN/vsrest-$PORT"
stop_by_pid "$D/pid" "vSphere REST port $PORT"
rm -rf "$D"
