#!/bin/bash
# Stop a peer started by hv_peer_start.sh (by its recorded PID only) and
# remove its run directory.
#   hv_peer_stop.sh pve|nutanix PORT [BIND]
set -u
KIND="${1:?usage: hv_peer_stop.sh pve|nutanix PORT [BIND]}"
PORT="${2:?usage: hv_peer_stop.sh pve|nutanix PORT [BIND]}"
BIND="${3:-127.0.0.1}"
. "$(cd "$(dirname "$0")" && pwd)/stop_by_pid.sh"
. "$(cd "$(dirname "$0")" && pwd)/run_dir.sh"
D="$PEER_RUN/$KIND-$BIND-$PORT"
stop_by_pid "$D/pid" "$KIND peer on $BIND:$PORT"
rm -rf "$D"
