#!/usr/bin/env bash
# Side-by-side vSphere benchmark (issue 32), loopback only: fencekit as
# fence_vmware_soap (and natively) vs upstream fence_vmware_soap
# (fence-agents 4.12.1, suds), both against one fencekit-vcsim peer
# (tests/peers/vcsim, govmomi's simulator) serving vSphere 4.1's WSDL
# (VCSIM_WSDL=1, which upstream needs) over HTTPS.
#
#   bench/vsphere.sh [--bin PATH] [--runs N] [--check]
#
# Rows: status (median wall, hyperfine -N; upstream 3 runs: it parses the
# 900 KB WSDL each time), an off then on, peak RSS of a status (largest
# of 3, /usr/bin/time). Targets: agent status >= 50x faster than upstream;
# agent RSS <= 1/4 of upstream's. --check exits 1 when a target is missed.
# Without --bin the release binary is used (built when missing); a debug
# binary gives higher fencekit figures.
# Needs: fence-agents, the peer and its WSDL (tests/peers/setup.sh),
# hyperfine, curl.
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
ROOT="$(cd "$HERE/.." && pwd)"
BIN="$ROOT/target/release/fencekit"
RUNS=15
CHECK=0
WARMUP=1 # upstream parses the 900 KB WSDL each run: one warm-up is enough
. "$HERE/lib.sh"
bench_options 2,18 "$@"
bench_binary
[ -x /usr/sbin/fence_vmware_soap ] || { echo "upstream fence_vmware_soap is needed (fence-agents)" >&2; exit 1; }
PEERS_DIR=${PEERS_DIR:-/tmp/fencekit-peers}
export PEERS_DIR
PORT=$(( 20000 + RANDOM % 20000 ))
D="$PEERS_DIR/run/$(id -u)/vcsim-$PORT"
WORK=$(mktemp -d /tmp/fencekit-vsphere-bench.XXXXXX)
cleanup() { bash "$ROOT/tests/peers/vcsim_stop.sh" "$PORT" >/dev/null 2>&1 || true; rm -rf "$WORK"; }
trap cleanup EXIT
VCSIM_WSDL=1 bash "$ROOT/tests/peers/vcsim_start.sh" "$PORT" >/dev/null
CERT="$D/cert.pem"
ln -s "$BIN" "$WORK/fence_vmware_soap"
export HOME="$WORK" XDG_RUNTIME_DIR="$WORK" PYTHONWARNINGS=ignore
PASS=vcsim-secret
VM=DC0_H0_VM0
ARGS="--ip=127.0.0.1 --ipport=$PORT --ssl-insecure --username=fence --password=$PASS --plug=$VM"
UP="/usr/bin/python3 /usr/sbin/fence_vmware_soap $ARGS"
FK="$WORK/fence_vmware_soap $ARGS --quiet"
NATIVE="$BIN status vsphere://fence@127.0.0.1:$PORT/$VM --ca-cert $CERT"
for c in "$UP -o status" "$FK -o status"; do
  [ "$($c 2>/dev/null)" = "Status: ON" ] || { echo "not 'Status: ON': $c" >&2; $c >&2; exit 1; }
done
export FENCEKIT_PASSWORD=$PASS
native=1
$NATIVE >/dev/null 2>&1 || native=0

echo "== status (vim25 over HTTPS: login, find the VM, read it, logout; median of $RUNS, upstream 3)"
up=$(median 3 "$UP -o status")
fk=$(median "$RUNS" "$FK -o status")
printf '%-48s %8s ms\n' "upstream fence_vmware_soap (python3 + suds)" "$up"
printf '%-48s %8s ms   %sx faster than upstream\n' "fencekit as fence_vmware_soap" "$fk" "$(ratio "$up" "$fk")"
if [ "$native" = 1 ]; then
  nat=$(median "$RUNS" "$NATIVE")
  printf '%-48s %8s ms\n' "fencekit status vsphere:// (native)" "$nat"
fi

echo
echo "== off then on (one each)"
t0=$(date +%s.%N); $UP -o off >/dev/null 2>&1; t1=$(date +%s.%N); $UP -o on >/dev/null 2>&1; t2=$(date +%s.%N)
f0=$(date +%s.%N); $FK -o off >/dev/null; f1=$(date +%s.%N); $FK -o on >/dev/null; f2=$(date +%s.%N)
printf '%-48s %8.1f s off, %5.1f s on\n' "upstream fence_vmware_soap" "$(echo "$t1 - $t0" | bc)" "$(echo "$t2 - $t1" | bc)"
printf '%-48s %8.1f s off, %5.1f s on\n' "fencekit as fence_vmware_soap" "$(echo "$f1 - $f0" | bc)" "$(echo "$f2 - $f1" | bc)"

echo
echo "== peak RSS of a status (largest of 3)"
up_rss=$(rss $UP -o status)
fk_rss=$(rss $FK -o status)
printf '%-48s %8s MiB\n' "upstream fence_vmware_soap" "$up_rss"
printf '%-48s %8s MiB   %s of upstream\n' "fencekit as fence_vmware_soap" "$fk_rss" "1/$(ratio "$up_rss" "$fk_rss")"

echo
fail=0
verdict "agent status >= 50x faster than upstream ($(ratio "$up" "$fk")x)" "$up / $fk >= 50"
verdict "agent RSS <= 1/4 of upstream's (1/$(ratio "$up_rss" "$fk_rss"))" "$fk_rss * 4 <= $up_rss"
[ "$CHECK" = 1 ] && exit "$fail"
exit 0
