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
for c in "$UP -o status" "$FK -o status"; do
  [ "$($c 2>/dev/null)" = "Status: ON" ] || { echo "not 'Status: ON': $c" >&2; $c >&2; exit 1; }
done
$NAT >/dev/null || { echo "fencekit status failed" >&2; $NAT >&2; exit 1; }

echo "== status (HTTPS, median of $RUNS)"
up=$(median "$RUNS" "$UP -o status")
fk=$(median "$RUNS" "$FK -o status")
nat=$(median "$RUNS" "$NAT")
printf '%-48s %8s ms\n' "upstream fence_rhevm (python3 + pycurl)" "$up"
printf '%-48s %8s ms   %sx faster than upstream\n' "fencekit as fence_rhevm" "$fk" "$(ratio "$up" "$fk")"
printf '%-48s %8s ms\n' "fencekit status ovirt:// (native)" "$nat"

echo
echo "== off then on (median of 3; each job takes 0.15 s on the peer)"
up_oo=$(median 3 "sh -c '$UP -o off >/dev/null; $UP -o on'")
fk_oo=$(median 3 "sh -c '$FK -o off >/dev/null; $FK -o on'")
printf '%-48s %8s ms\n' "upstream fence_rhevm off+on" "$up_oo"
printf '%-48s %8s ms   %sx faster\n' "fencekit as fence_rhevm off+on" "$fk_oo" "$(ratio "$up_oo" "$fk_oo")"

echo
echo "== peak RSS of a status (largest of 3)"
up_rss=$(rss $UP -o status)
fk_rss=$(rss $FK -o status)
printf '%-48s %8s MiB\n' "upstream fence_rhevm" "$up_rss"
printf '%-48s %8s MiB   %s of upstream\n' "fencekit as fence_rhevm" "$fk_rss" "$(python3 -c "print('1/%.1f' % ($up_rss/$fk_rss))")"

echo
fail=0
verdict "agent status >= 20x faster than upstream ($(ratio "$up" "$fk")x)" "$up / $fk >= 20"
verdict "agent RSS <= 1/4 of upstream's (1/$(ratio "$up_rss" "$fk_rss"))" "$fk_rss * 4 <= $up_rss"
[ "$CHECK" = 1 ] && exit "$fail"
exit 0
