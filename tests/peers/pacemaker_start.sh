#!/bin/sh
# Start a one-node corosync + Pacemaker cluster on loopback, without systemd,
# with fencekit as the fence agents its fencer runs. Prints the PIDs it
# started: "NS COROSYNC PACEMAKERD" (NS holds the mount namespace; run the
# cluster's tools inside it: pacemaker_exec.sh, or nsenter -t NS -m).
#
# usage: pacemaker_start.sh [FENCEKIT_BIN] [STATE_DIR]
#   FENCEKIT_BIN  default: target/debug/fencekit of this repository
#   STATE_DIR     default: $PEERS_DIR/run/UID/pacemaker (PEERS_DIR: /tmp/fencekit-peers)
#
# What it sets up (root, Debian 12: packages corosync, pacemaker,
# pacemaker-cli-utils, util-linux):
# * one node, "node01", corosync 3 with knet on 127.0.0.1 (its default port
#   5405), no crypto; quorum from votequorum, ignored (no-quorum-policy=ignore);
#   stonith-enabled=true.
# * a private mount namespace (unshare -m) in which /etc/corosync,
#   /var/lib/corosync, /var/lib/pacemaker, /var/log/pacemaker and /run are
#   directories under STATE_DIR, and /usr/sbin shows fencekit under every
#   agent name it implements (fence_ipmilan, fence_redfish, …) over the real
#   /usr/sbin. Nothing outside STATE_DIR is written: the host's /usr/sbin,
#   /etc and /var stay as they are.
# * logs: STATE_DIR/pacemaker.log (the fencer's, with each agent's stderr),
#   STATE_DIR/corosync.log.
# env: PACEMAKER_PEER_OWNER=PID  stop the cluster once process PID is gone
#      (the tests pass their own PID: a killed test leaves nothing running).
# The cluster shares the host's network namespace (corosync's port, libqb's
# abstract sockets), so one such cluster runs per host: this script refuses
# to start when a corosync is already running. Stop it with
# pacemaker_stop.sh STATE_DIR.
set -eu
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
BIN=${1:-$ROOT/target/debug/fencekit}
. "$(cd "$(dirname "$0")" && pwd)/run_dir.sh"
S=${2:-$PEER_RUN/pacemaker}

fail() { echo "pacemaker_start.sh: $*" >&2; exit 1; }
[ "$(id -u)" = 0 ] || fail "needs root (a mount namespace, corosync)"
for tool in corosync corosync-cfgtool pacemakerd cibadmin crm_attribute \
  stonith_admin unshare nsenter timeout; do
  command -v "$tool" >/dev/null 2>&1 || [ -x "/usr/sbin/$tool" ] \
    || fail "no $tool (bash tests/peers/setup.sh installs it)"
done
[ -x "$BIN" ] || fail "no fencekit binary at $BIN (cargo build)"
BIN=$(cd "$(dirname "$BIN")" && pwd)/$(basename "$BIN")
case $S in /*) ;; *) S=$(pwd)/$S ;; esac

if [ -f "$S/ns.pid" ] && kill -0 "$(cat "$S/ns.pid")" 2>/dev/null; then
  fail "a cluster from $S is running (PID $(cat "$S/ns.pid")); stop it with pacemaker_stop.sh $S"
fi
# corosync's IPC: abstract sockets @cfg, @cpg, … (padded with NULs, shown as @)
if grep -qE ' @(cfg|cpg|cmap)(@|$)' /proc/net/unix 2>/dev/null \
  || pgrep -x corosync >/dev/null 2>&1; then
  fail "a corosync is already running on this host; one cluster per host"
fi

rm -rf "$S"
mkdir -p "$S"
chmod 755 "$S" # the daemons running as hacluster write the log here
mkdir -p "$S/etc-corosync/uidgid.d" "$S/lib-corosync" "$S/run" "$S/sbin" \
  "$S/lib-pacemaker/cib" "$S/lib-pacemaker/pengine" "$S/lib-pacemaker/blackbox" \
  "$S/lib-pacemaker/cores" "$S/log-pacemaker"
chown -R hacluster:haclient "$S/lib-pacemaker" "$S/log-pacemaker"
chmod 750 "$S/lib-pacemaker/cib" "$S/log-pacemaker"
: >"$S/pacemaker.log"
chown hacluster:haclient "$S/pacemaker.log"
chmod 660 "$S/pacemaker.log"

cat >"$S/etc-corosync/corosync.conf" <<CONF
totem {
	version: 2
	cluster_name: fencekit-test
	transport: knet
	crypto_cipher: none
	crypto_hash: none
}
nodelist {
	node {
		name: node01
		nodeid: 1
		ring0_addr: 127.0.0.1
	}
}
quorum {
	provider: corosync_votequorum
}
logging {
	to_stderr: no
	to_syslog: no
	to_logfile: yes
	logfile: $S/corosync.log
	timestamp: on
}
CONF

# The cluster's options from the start: fencing on, quorum ignored (one
# node), and a short wait for other nodes before the node elects itself
# (dc-deadtime; Pacemaker's default, 20 s, is the whole of a cold start).
cat >"$S/lib-pacemaker/cib/cib.xml" <<CIB
<cib validate-with="pacemaker-3.0" epoch="1" num_updates="0" admin_epoch="0">
  <configuration>
    <crm_config>
      <cluster_property_set id="cib-bootstrap-options">
        <nvpair id="opt-stonith-enabled" name="stonith-enabled" value="true"/>
        <nvpair id="opt-no-quorum-policy" name="no-quorum-policy" value="ignore"/>
        <nvpair id="opt-dc-deadtime" name="dc-deadtime" value="2s"/>
      </cluster_property_set>
    </crm_config>
    <nodes/>
    <resources/>
    <constraints/>
  </configuration>
  <status/>
</cib>
CIB
chown hacluster:haclient "$S/lib-pacemaker/cib/cib.xml"
chmod 600 "$S/lib-pacemaker/cib/cib.xml"

# fencekit under each agent name (the names of its agent man pages, as
# install.sh does), as absolute links: they are seen from /usr/sbin.
for page in "$ROOT"/man/fence_*.8; do
  ln -s "$BIN" "$S/sbin/$(basename "$page" .8)"
done

setsid unshare --mount --propagation private -- sh "$HERE/pacemaker_ns.sh" "$S" \
  </dev/null >"$S/ns.out" 2>&1 &
NS=$!
echo "$NS" >"$S/ns.pid"
# With PACEMAKER_PEER_OWNER=PID (a test process), the cluster does not
# outlive it: a watcher stops it once that process is gone.
if [ -n "${PACEMAKER_PEER_OWNER:-}" ]; then
  setsid sh -c 'while kill -0 "$1" 2>/dev/null && kill -0 "$2" 2>/dev/null; do sleep 1; done
    if kill -0 "$2" 2>/dev/null; then exec sh "$3/pacemaker_stop.sh" "$4"; fi' \
    watch "$PACEMAKER_PEER_OWNER" "$NS" "$HERE" "$S" </dev/null >>"$S/watch.out" 2>&1 &
fi
in_ns() { nsenter -t "$NS" -m -- timeout 10 "$@"; }

# Ready: a DC is elected (it records dc-version in the CIB) and the fencer
# answers.
i=0
until in_ns crm_attribute -t crm_config -n dc-version -q >/dev/null 2>&1 \
  && in_ns stonith_admin --list-registered >/dev/null 2>&1; do
  i=$((i + 1))
  if [ $i -gt 600 ] || ! kill -0 "$NS" 2>/dev/null; then
    echo "pacemaker_start.sh: the cluster did not come up in 60 s" >&2
    cat "$S/ns.out" >&2 2>/dev/null || true
    tail -n 30 "$S/pacemaker.log" >&2 2>/dev/null || true
    sh "$HERE/pacemaker_stop.sh" "$S" >&2 || true
    exit 1
  fi
  sleep 0.1
done
echo "$NS $(cat "$S/corosync.pid") $(cat "$S/pacemakerd.pid")"
