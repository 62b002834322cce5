#!/usr/bin/env bash
# Side-by-side Nutanix AHV benchmark (issue 40), loopback only: fencekit (native
# and as fence_nutanix_ahv) vs the newest upstream fence_nutanix_ahv (its source
# from tests/peers/setup.sh, run by Debian's python3 with /usr/share/fence's
# library and python3-requests), both against one tests/peers/nutanix_api.py
# (Prism Central v4 over HTTPS, Basic auth) on port 9440 of a loopback address
# of its own (upstream always speaks 9440).
#
#   bench/nutanix.sh [--bin PATH] [--runs N] [--check]
#
# Rows: status (median wall, hyperfine -N), off+on, peak RSS of a status
# (largest of 3, /usr/bin/time). Targets: agent status >= 20x faster than
# upstream's; agent RSS <= 1/4 of upstream's. --check exits 1 when one is missed.
# Needs: python3, openssl, fence-agents, tests/peers/setup.sh, hyperfine.
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
SRC="$PEERS_DIR/upstream/fence_nutanix_ahv.py"
[ -s "$SRC" ] || { echo "$SRC is missing: run tests/peers/setup.sh" >&2; exit 1; }
ADDR="127.0.$(( 200 + RANDOM % 50 )).$(( 2 + RANDOM % 250 ))"
WORK=$(mktemp -d /tmp/fencekit-nutanix-bench.XXXXXX)
cleanup() { bash "$ROOT/tests/peers/hv_peer_stop.sh" nutanix 9440 "$ADDR" >/dev/null 2>&1 || true; rm -rf "$WORK"; }
trap cleanup EXIT
bash "$ROOT/tests/peers/hv_peer_start.sh" nutanix 9440 "$ADDR" > "$WORK/info.json"
CA=$(python3 -c "import json;print(json.load(open('$WORK/info.json'))['cert'])")
printf '#!/bin/sh\nPYTHONPATH=/usr/share/fence exec /usr/bin/python3 %s "$@"\n' "$SRC" > "$WORK/upstream"
chmod +x "$WORK/upstream"
ln -s "$BIN" "$WORK/fence_nutanix_ahv"
export PYTHONWARNINGS=ignore FENCEKIT_PASSWORD=nutanix-secret
# Both verify the peer's certificate: upstream through requests' CA bundle.
export REQUESTS_CA_BUNDLE="$CA"
ARGS="--ip=$ADDR --username=admin --password=nutanix-secret --plug=node1"
UP="$WORK/upstream $ARGS"
FK="$WORK/fence_nutanix_ahv $ARGS --ca-cert=$CA"
NAT="$BIN status nutanix://admin@$ADDR/node1 --ca-cert $CA"
status_on --stderr "$UP -o status" "$FK -o status"
$NAT >/dev/null || { echo "fencekit status failed: $NAT" >&2; exit 1; }

echo "== status (HTTPS, Basic auth, median of $RUNS; upstream 5)"
up=$(median 5 "$UP -o status")
fk=$(median "$RUNS" "$FK -o status")
nat=$(median "$RUNS" "$NAT")
row 50 "upstream fence_nutanix_ahv (python3 + requests)" "$up" ms
row 50 "fencekit as fence_nutanix_ahv" "$fk" ms "$(ratio "$up" "$fk")x faster than upstream"
row 50 "fencekit status nutanix:// (native)" "$nat" ms "$(ratio "$up" "$nat")x faster than upstream"

echo
echo "== off then on (median of 3; each task runs 150 ms)"
off_on_rows 50 "upstream off+on" "fencekit as fence_nutanix_ahv off+on"

echo
rss_rows 50 "upstream fence_nutanix_ahv" "fencekit as fence_nutanix_ahv"
agent_verdicts "$up" "$fk"
