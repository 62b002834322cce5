#!/bin/bash
# Sourced by the *_stop.sh scripts of peers that record their PID:
#   stop_by_pid PIDFILE WHAT
# Stops the process named in PIDFILE (never by name): SIGTERM, up to 5 s for
# it to exit, then SIGKILL; removes PIDFILE and prints the PID. Exits 1 when
# there is no PIDFILE (WHAT says which peer's).
stop_by_pid() {
  local file=$1 what=$2 pid
  [ -f "$file" ] || { echo "no pid file for $what" >&2; exit 1; }
  pid="$(cat "$file")"
  if kill -0 "$pid" 2>/dev/null; then
    kill "$pid"
    for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -0 "$pid" 2>/dev/null && kill -9 "$pid"
    echo "stopped $pid" >&2
  else
    echo "pid $pid not running" >&2
  fi
  rm -f "$file"
  echo "$pid"
}
