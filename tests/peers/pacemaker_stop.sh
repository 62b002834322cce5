#!/bin/sh
# Stop the cluster pacemaker_start.sh started from STATE_DIR, by the PIDs it
# recorded: pacemakerd first (it stops its daemons), then corosync, then the
# namespace holder; whatever is left of that process group after the grace
# periods is killed. Prints what it stopped. STATE_DIR is left for reading
# (logs); pacemaker_start.sh clears it.
# usage: pacemaker_stop.sh [STATE_DIR]   (default $PEERS_DIR/run/UID/pacemaker)
. "$(cd "$(dirname "$0")" && pwd)/run_dir.sh"
S=${1:-$PEER_RUN/pacemaker}
[ -f "$S/ns.pid" ] || { echo "no cluster recorded in $S" >&2; exit 1; }
NS=$(cat "$S/ns.pid")

alive() { kill -0 "$1" 2>/dev/null; }
# wait_gone PID TENTHS: true once PID is gone
wait_gone() {
  i=0
  while alive "$1"; do
    i=$((i + 1))
    [ $i -gt "$2" ] && return 1
    sleep 0.1
  done
}
stop() { # NAME PIDFILE GRACE_TENTHS
  [ -f "$2" ] || return 0
  pid=$(cat "$2")
  if alive "$pid"; then
    kill -TERM "$pid" 2>/dev/null
    if wait_gone "$pid" "$3"; then
      echo "stopped $1 $pid"
    else
      kill -KILL "$pid" 2>/dev/null
      echo "killed $1 $pid"
    fi
  fi
}
if alive "$NS"; then
  # pacemakerd's daemons run in sessions of their own: note them (its
  # children, by parent PID) before it goes, to kill any it leaves behind.
  daemons=""
  [ -f "$S/pacemakerd.pid" ] && daemons=$(ps -o pid= --ppid "$(cat "$S/pacemakerd.pid")" 2>/dev/null)
  stop pacemakerd "$S/pacemakerd.pid" 300
  for pid in $daemons; do
    if alive "$pid"; then
      kill -KILL "$pid" 2>/dev/null && echo "killed daemon $pid"
    fi
  done
  stop corosync "$S/corosync.pid" 100
  # The holder exits once both have; anything left in its process group
  # goes with it.
  wait_gone "$NS" 50 || true
  kill -KILL -- "-$NS" 2>/dev/null && echo "killed what was left of process group $NS"
  echo "stopped namespace $NS"
else
  echo "not running: $NS"
fi
rm -f "$S/ns.pid"
