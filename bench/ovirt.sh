#!/usr/bin/env bash
# Side-by-side oVirt benchmark (issue 40), loopback only: fencekit (native and
# as fence_rhevm) vs upstream fence_rhevm (fence-agents 4.12.1, pycurl), all
# against one tests/peers/ovirt_api.py over HTTPS.
#
#   bench/ovirt.sh [--bin PATH] [--runs N] [--check]
#
# Rows: status (median wall, hyperfine -N: upstream's API-root probe and
# search; ours a search and one GET of the VM), off+on (the peer's jobs take
# 0.15 s), peak RSS of a status (largest of 3). Targets: agent status >= 20x
# faster than upstream; agent RSS <= 1/4 of upstream's. --check exits 1 when
# one is missed. Needs: fence-agents and python3-pycurl, hyperfine, curl, openssl.
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
ROOT="$(cd "$HERE/.." && pwd)"
BIN="$ROOT/target/release/fencekit"
RUNS=15
CHECK=0
. "$HERE/lib.sh"
bench_options 2,14 "$@"
bench_binary
PEERS_DIR=${PEERS_DIR:-/tmp/fencekit-peers}
export PEERS_DIR
PORT=$(( 20000 + RANDOM % 20000 ))
WORK=$(mktemp -d /tmp/fencekit-ovirt-bench.XXXXXX)
cleanup() { bash "$ROOT/tests/peers/hv_peer_stop.sh" ovirt "$PORT" >/dev/null 2>&1 || true; rm -rf "$WORK"; }
trap cleanup EXIT
INFO=$(bash "$ROOT/tests/peers/hv_peer_start.sh" ovirt "$PORT")
CA=$(python3 -c 'import json,sys; print(json.loads(sys.argv[1])["cert"])' "$INFO")
ln -s "$BIN" "$WORK/fence_rhevm"
ARGS="--ip=127.0.0.1 --ipport=$PORT --ssl-insecure --username=admin@internal --password=ovirt-secret --plug=node1"
UP="/usr/sbin/fence_rhevm $ARGS"
FK="$WORK/fence_rhevm $ARGS"
NAT="env FENCEKIT_PASSWORD=ovirt-secret $BIN status ovirt://admin@internal@127.0.0.1:$PORT/node1 --ca-cert $CA"
status_on "$UP -o status" "$FK -o status"
$NAT >/dev/null || { echo "fencekit status failed" >&2; $NAT >&2; exit 1; }

echo "== status (HTTPS, median of $RUNS)"
up=$(median "$RUNS" "$UP -o status")
fk=$(median "$RUNS" "$FK -o status")
nat=$(median "$RUNS" "$NAT")
row 48 "upstream fence_rhevm (python3 + pycurl)" "$up" ms
row 48 "fencekit as fence_rhevm" "$fk" ms "$(ratio "$up" "$fk")x faster than upstream"
row 48 "fencekit status ovirt:// (native)" "$nat" ms

echo
echo "== off then on (median of 3; each job takes 0.15 s on the peer)"
off_on_rows 48 "upstream fence_rhevm off+on" "fencekit as fence_rhevm off+on"

echo
rss_rows 48 "upstream fence_rhevm" "fencekit as fence_rhevm"
agent_verdicts "$up" "$fk"
