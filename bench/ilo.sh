#!/usr/bin/env bash
# Side-by-side HPE iLO (RIBCL) benchmark (issue 41), loopback only: fencekit
# (native and as fence_ilo) vs upstream fence_ilo (fence-agents 4.12.1,
# pexpect driving gnutls-cli), both against one tests/peers/ribcl_peer.py (an
# iLO 2 on RIBCL 2.22, power changes at once). Upstream's gnutls-cli checks
# the system's trust store only, so both agents run with --ssl-insecure; the
# native row verifies the peer's certificate.
#
#   bench/ilo.sh [--bin PATH] [--runs N] [--check]
#
# Rows: status (median wall, hyperfine -N), off+on, peak RSS of a status
# (largest of 3, /usr/bin/time). Targets (issue 41): agent status >= 10x
# faster than upstream's; agent RSS <= 1/4 of upstream's. --check exits 1
# when one is missed. Needs: python3, openssl, fence-agents, gnutls-bin
# (tests/peers/setup.sh), hyperfine.
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
ROOT="$(cd "$HERE/.." && pwd)"
BIN="$ROOT/target/release/fencekit"
RUNS=15
CHECK=0
. "$HERE/lib.sh"
bench_options 2,15 "$@"
bench_binary
command -v gnutls-cli >/dev/null || { echo "gnutls-cli is needed (apt-get install gnutls-bin)" >&2; exit 1; }
PEERS_DIR=${PEERS_DIR:-/tmp/fencekit-peers}
export PEERS_DIR
ADDR=127.0.0.1
PORT=$(( 20000 + RANDOM % 20000 ))
WORK=$(mktemp -d /tmp/fencekit-ilo-bench.XXXXXX)
cleanup() { bash "$ROOT/tests/peers/hv_peer_stop.sh" ribcl "$PORT" "$ADDR" >/dev/null 2>&1 || true; rm -rf "$WORK"; }
trap cleanup EXIT
PEER_ARGS="--flavour ilo2 --power-ms 0" bash "$ROOT/tests/peers/hv_peer_start.sh" ribcl "$PORT" "$ADDR" > "$WORK/info.json"
CA=$(python3 -c "import json;print(json.load(open('$WORK/info.json'))['cert'])")
ln -s "$BIN" "$WORK/fence_ilo"
export FENCEKIT_PASSWORD=ilo-secret
ARGS="--ip=$ADDR --ipport=$PORT --ssl-insecure --username=admin --password=ilo-secret"
UP="/usr/sbin/fence_ilo $ARGS"
FK="$WORK/fence_ilo $ARGS"
NAT="$BIN status ilo://admin@$ADDR:$PORT --ca-cert $CA"
status_on "$UP -o status" "$FK -o status"
$NAT >/dev/null || { echo "fencekit status failed: $NAT" >&2; exit 1; }

echo "== status (RIBCL over TLS, GET_FW_VERSION then GET_HOST_POWER_STATUS; median of $RUNS; upstream 5)"
up=$(median 5 "$UP -o status")
fk=$(median "$RUNS" "$FK -o status")
nat=$(median "$RUNS" "$NAT")
row 44 "upstream fence_ilo (python3 + gnutls-cli)" "$up" ms
row 44 "fencekit as fence_ilo" "$fk" ms "$(ratio "$up" "$fk")x faster than upstream"
row 44 "fencekit status ilo:// (native)" "$nat" ms "$(ratio "$up" "$nat")x faster than upstream"

echo
echo "== off then on (median of 3)"
off_on_rows 44 "upstream fence_ilo off+on" "fencekit as fence_ilo off+on"

echo
rss_rows 44 "upstream fence_ilo" "fencekit as fence_ilo"
echo
fail=0
verdict "agent status >= 10x faster than upstream ($(ratio "$up" "$fk")x)" "$up / $fk >= 10"
verdict "agent RSS <= 1/4 of upstream's (1/$(ratio "$up_rss" "$fk_rss"))" "$fk_rss * 4 <= $up_rss"
[ "$CHECK" = 1 ] && exit "$fail"
exit 0
