#!/bin/bash
# Stop the KubeVirt API peer started by kubevirt_start.sh on PORT (by its recorded PID only).
#   kubevirt_stop.sh PORT
set -u
PORT="${1:?usage: kubevirt_stop.sh PORT}"
. "$(cd "$(dirname "$0")" && pwd)/stop_by_pid.sh"
. "$(cd "$(dirname "$0")" && pwd)/run_dir.sh"
stop_by_pid "$PEER_RUN/kubevirt-$PORT/pid" "port $PORT"
