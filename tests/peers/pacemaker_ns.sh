#!/bin/sh
# Inside the private mount namespace made by pacemaker_start.sh (never run it
# by hand): give the cluster private state directories and a /usr/sbin in
# which fencekit answers to every agent name it implements, start corosync
# and pacemakerd in the foreground, and stay as the namespace's holder until
# both have exited. Every mount here is private to this namespace: nothing
# outside it changes.
# usage: pacemaker_ns.sh STATE_DIR
set -eu
S=$1

# Private state: the directories the packages compile in. The targets exist
# once corosync and pacemaker are installed; /run is private too (corosync's
# pid file), so nothing is written to the host's.
mount --bind "$S/etc-corosync" /etc/corosync
mount --bind "$S/lib-corosync" /var/lib/corosync
mount --bind "$S/lib-pacemaker" /var/lib/pacemaker
mount --bind "$S/log-pacemaker" /var/log/pacemaker
mount --bind "$S/run" /run

# The fencer runs agents only from its compiled-in directory, /usr/sbin:
# fencekit's names are laid over it (a read-only overlay: fencekit's links
# first, then the real /usr/sbin). Where overlayfs is not available, a
# directory of links to every entry of the real /usr/sbin plus fencekit's
# names is bound over it instead.
if ! mount -t overlay fencekit-sbin -o "lowerdir=$S/sbin:/usr/sbin" /usr/sbin 2>/dev/null; then
  mkdir -p "$S/sbin-real" "$S/sbin-farm"
  mount --bind /usr/sbin "$S/sbin-real"
  for f in "$S/sbin-real"/*; do
    ln -s "$f" "$S/sbin-farm/$(basename "$f")"
  done
  for f in "$S/sbin"/*; do
    ln -sf "$(readlink "$f")" "$S/sbin-farm/$(basename "$f")"
  done
  mount --bind "$S/sbin-farm" /usr/sbin
  echo "pacemaker_ns.sh: no overlayfs here; /usr/sbin is a directory of links" >&2
fi

corosync -f -c /etc/corosync/corosync.conf >"$S/corosync.out" 2>&1 &
echo $! >"$S/corosync.pid"
# corosync answers on its IPC once it runs; pacemakerd needs that.
i=0
until corosync-cfgtool -s >/dev/null 2>&1; do
  i=$((i + 1))
  if [ $i -gt 200 ] || ! kill -0 "$(cat "$S/corosync.pid")" 2>/dev/null; then
    echo "pacemaker_ns.sh: corosync did not start:" >&2
    cat "$S/corosync.out" "$S/corosync.log" >&2 2>/dev/null || true
    exit 1
  fi
  sleep 0.05
done

# The fencer logs at debug level, so that every agent run is in its log
# (a successful monitor is a debug line).
PCMK_logfile=$S/pacemaker.log PCMK_logfacility=none PCMK_blackbox=no \
  PCMK_debug=pacemaker-fenced pacemakerd -f >"$S/pacemakerd.out" 2>&1 &
echo $! >"$S/pacemakerd.pid"
wait
