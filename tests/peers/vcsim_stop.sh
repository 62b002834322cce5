#!/bin/bash
# Stop the fencekit-vcsim started by vcsim_start.sh PORT (by its recorded PID only)
# and remove its run directory.
#   vcsim_stop.sh PORT
set -u
PORT="${1:?usage: vcsim_stop.sh PORT}"
. "$(cd "$(dirname "$0")" && pwd)/stop_by_pid.sh"
. "$(cd "$(dirname "$0")" && pwd)/run_dir.sh"
D="$PEER_RUN/vcsim-$PORT"
stop_by_pid "$D/pid" "vcsim port $PORT"
rm -rf "$D"
