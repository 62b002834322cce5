#!/usr/bin/env bash
# Side-by-side KubeVirt benchmark (issue 31), loopback only: fencekit as
# fence_kubevirt (and natively) vs upstream fence_kubevirt (fence-agents
# 4.12.1 on Debian's python3-kubernetes and python3-openshift) vs curl doing
# the one GET a status needs, all against one KubeVirt API peer
# (tests/peers/kubevirt_api.py) over HTTPS with its own CA and a bearer token.
#
#   bench/kubevirt.sh [--bin PATH] [--runs N] [--check]
#
# Rows: status (median wall, hyperfine -N), a hard off then on, peak RSS of
# a status (largest of 3, /usr/bin/time). Targets: agent status >= 20x
# faster than upstream; agent RSS <= 1/4 of upstream's. --check exits 1
# when a target is missed. Without --bin the release binary is used (built
# when missing); a debug binary gives higher fencekit figures.
# Needs: fence-agents, python3-kubernetes, python3-openshift
# (tests/peers/setup.sh), hyperfine, curl, openssl.
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
ROOT="$(cd "$HERE/.." && pwd)"
BIN="$ROOT/target/release/fencekit"
RUNS=15
CHECK=0
. "$HERE/lib.sh"
bench_options 2,17 "$@"
bench_binary
[ -x /usr/sbin/fence_kubevirt ] || { echo "upstream fence_kubevirt is needed (fence-agents)" >&2; exit 1; }
PEERS_DIR=${PEERS_DIR:-/tmp/fencekit-peers}
PORT=$(( 20000 + RANDOM % 20000 ))
D="$PEERS_DIR/run/$(id -u)/kubevirt-$PORT"
WORK=$(mktemp -d /tmp/fencekit-kubevirt-bench.XXXXXX)
cleanup() { bash "$ROOT/tests/peers/kubevirt_stop.sh" "$PORT" >/dev/null 2>&1 || true; rm -rf "$WORK"; }
trap cleanup EXIT
# Grace period 6 s (the graceful stop upstream waits through), boot 0.5 s.
KUBEVIRT_PARENT_PID=$$ bash "$ROOT/tests/peers/kubevirt_start.sh" "$PORT" 6 0.5 >/dev/null
URL="https://127.0.0.1:$PORT"
CA="$D/ca.pem"
ctl() { curl -s --cacert "$CA" -X POST "$URL/fencekit/control" -d "$1" >/dev/null; }
ctl '{"op":"token","token":"bench-token"}'
ctl '{"op":"vm","namespace":"guests","name":"node-1"}'
ctl '{"op":"vm","namespace":"guests","name":"node-2"}'
cat > "$WORK/kubeconfig" <<KC
apiVersion: v1
kind: Config
clusters:
- name: peer
  cluster:
    server: $URL
    certificate-authority: $CA
users:
- name: fencer
  user:
    token: bench-token
contexts:
- name: bench
  context: {cluster: peer, user: fencer, namespace: guests}
current-context: bench
KC
ln -s "$BIN" "$WORK/fence_kubevirt"
export HOME="$WORK" XDG_RUNTIME_DIR="$WORK" PYTHONWARNINGS=ignore
ARGS="--kubeconfig=$WORK/kubeconfig --namespace=guests --plug=node-1"
UP="/usr/bin/python3 /usr/sbin/fence_kubevirt $ARGS"
FK="$WORK/fence_kubevirt $ARGS"
for c in "$UP -o status" "$FK -o status"; do
  [ "$($c 2>/dev/null)" = "Status: ON" ] || { echo "not 'Status: ON': $c" >&2; $c >&2; exit 1; }
done
KUBECONFIG="$WORK/kubeconfig" "$BIN" status kubevirt://guests/node-1 >/dev/null \
  || { echo "fencekit status failed" >&2; exit 1; }

echo "== status (HTTPS, bearer token, median of $RUNS; upstream 5)"
up=$(median 5 "$UP -o status")
fk=$(median "$RUNS" "$FK -o status")
nat=$(KUBECONFIG="$WORK/kubeconfig" median "$RUNS" "$BIN status kubevirt://guests/node-1")
cu=$(median "$RUNS" "curl -s --cacert $CA -H 'Authorization: Bearer bench-token' $URL/apis/kubevirt.io/v1/namespaces/guests/virtualmachineinstances/node-1")
printf '%-48s %8s ms\n' "upstream fence_kubevirt (python3 + kubernetes)" "$up"
printf '%-48s %8s ms   %sx faster than upstream\n' "fencekit as fence_kubevirt" "$fk" "$(ratio "$up" "$fk")"
printf '%-48s %8s ms\n' "fencekit status kubevirt:// (native)" "$nat"
printf '%-48s %8s ms\n' "curl, the one GET of the VMI" "$cu"

echo
echo "== off then on (one each; graceful stop 6 s on the peer)"
t0=$(date +%s.%N); $UP -o off >/dev/null 2>&1; t1=$(date +%s.%N); $UP -o on >/dev/null 2>&1; t2=$(date +%s.%N)
f0=$(date +%s.%N); $FK -o off >/dev/null; f1=$(date +%s.%N); $FK -o on >/dev/null; f2=$(date +%s.%N)
printf '%-48s %8.1f s off, %5.1f s on\n' "upstream fence_kubevirt (stop, no grace period)" "$(echo "$t1 - $t0" | bc)" "$(echo "$t2 - $t1" | bc)"
printf '%-48s %8.1f s off, %5.1f s on\n' "fencekit as fence_kubevirt (gracePeriod 0)" "$(echo "$f1 - $f0" | bc)" "$(echo "$f2 - $f1" | bc)"

echo
echo "== peak RSS of a status (largest of 3)"
up_rss=$(rss $UP -o status)
fk_rss=$(rss $FK -o status)
printf '%-48s %8s MiB\n' "upstream fence_kubevirt" "$up_rss"
printf '%-48s %8s MiB   %s of upstream\n' "fencekit as fence_kubevirt" "$fk_rss" "$(python3 -c "print('1/%.1f' % ($up_rss/$fk_rss))")"

echo
fail=0
verdict "agent status >= 20x faster than upstream ($(ratio "$up" "$fk")x)" "$up / $fk >= 20"
verdict "agent RSS <= 1/4 of upstream's (1/$(ratio "$up_rss" "$fk_rss"))" "$fk_rss * 4 <= $up_rss"
[ "$CHECK" = 1 ] && exit "$fail"
exit 0
