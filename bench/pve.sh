#!/usr/bin/env bash
# Side-by-side Proxmox VE benchmark (issue 40), loopback only: fencekit (native
# and as fence_pve) vs upstream fence_pve (fence-agents 4.12.1, pycurl), both
# against one tests/peers/pve_api.py (the /api2/json ticket over HTTPS).
# Upstream checks the system's trust store only (no CA option), so both agents
# run with --ssl-insecure; the native row verifies the peer's certificate.
#
#   bench/pve.sh [--bin PATH] [--runs N] [--check]
#
# Rows: status (median wall, hyperfine -N), off+on, peak RSS of a status
# (largest of 3, /usr/bin/time). Targets: agent status >= 20x faster than
# upstream's; agent RSS <= 1/4 of upstream's. --check exits 1 when one is missed.
# Needs: python3, openssl, fence-agents (tests/peers/setup.sh), hyperfine.
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
ADDR=127.0.0.1
PORT=$(( 20000 + RANDOM % 20000 ))
WORK=$(mktemp -d /tmp/fencekit-pve-bench.XXXXXX)
cleanup() { bash "$ROOT/tests/peers/hv_peer_stop.sh" pve "$PORT" "$ADDR" >/dev/null 2>&1 || true; rm -rf "$WORK"; }
trap cleanup EXIT
bash "$ROOT/tests/peers/hv_peer_start.sh" pve "$PORT" "$ADDR" > "$WORK/info.json"
CA=$(python3 -c "import json;print(json.load(open('$WORK/info.json'))['cert'])")
ln -s "$BIN" "$WORK/fence_pve"
export PYTHONWARNINGS=ignore FENCEKIT_PASSWORD=pve-secret
ARGS="--ip=$ADDR --ipport=$PORT --ssl-insecure --username=root@pam --password=pve-secret --pve-node=pve1 --plug=100"
UP="/usr/sbin/fence_pve $ARGS"
FK="$WORK/fence_pve $ARGS"
NAT="$BIN status pve://root@pam@$ADDR:$PORT/pve1/100 --ca-cert $CA"
status_on "$UP -o status" "$FK -o status"
$NAT >/dev/null || { echo "fencekit status failed: $NAT" >&2; exit 1; }

echo "== status (HTTPS, password ticket, median of $RUNS; upstream 5)"
up=$(median 5 "$UP -o status")
fk=$(median "$RUNS" "$FK -o status")
nat=$(median "$RUNS" "$NAT")
row 44 "upstream fence_pve (python3 + pycurl)" "$up" ms
row 44 "fencekit as fence_pve" "$fk" ms "$(ratio "$up" "$fk")x faster than upstream"
row 44 "fencekit status pve:// (native)" "$nat" ms "$(ratio "$up" "$nat")x faster than upstream"

echo
echo "== off then on (median of 3)"
off_on_rows 44 "upstream fence_pve off+on" "fencekit as fence_pve off+on" --power-wait=0

echo
rss_rows 44 "upstream fence_pve" "fencekit as fence_pve"
agent_verdicts "$up" "$fk"
