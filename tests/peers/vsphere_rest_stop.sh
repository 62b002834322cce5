#!/bin/bash
# Stop the REST peer started by vsphere_rest_start.sh PORT (by its recorded PID only).
#   vsphere_rest_stop.sh PORT
set -u
PORT="${1:?usage: vsphere_rest_stop.sh PORT}"
. "$(cd "$(dirname "$0")" && pwd)/stop_by_pid.sh"
stop_by_pid "${PEERS_DIR:-/tmp/fencekit-peers}/run/vsrest-$PORT/pid" "vSphere REST port $PORT"
