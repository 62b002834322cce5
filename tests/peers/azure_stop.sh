#!/bin/bash
# Stop the Azure peer started by azure_start.sh on PORT (by its recorded PID only).
#   azure_stop.sh PORT
set -u
PORT="${1:?usage: azure_stop.sh PORT}"
. "$(cd "$(dirname "$0")" && pwd)/stop_by_pid.sh"
. "$(cd "$(dirname "$0")" && pwd)/run_dir.sh"
stop_by_pid "$PEER_RUN/azure-$PORT/pid" "port $PORT"
