#!/usr/bin/env bash
# Side-by-side Azure benchmark (issue 39), loopback only: fencekit (native and
# as fence_azure_arm) vs upstream fence_azure_arm (fence-agents 4.12.1 with the
# venv's Python and azure-identity / azure-mgmt-compute), all against one
# tests/peers/azure_api.py: upstream and the agent reach it through the peer's
# TLS-terminating proxy (HTTPS_PROXY; the real host names, a test CA), the
# native run directly (--endpoint-url, AZURE_AUTHORITY_HOST).
#
#   bench/azure.sh [--bin PATH] [--runs N] [--check]
#
# Rows: status (median wall, hyperfine -N: a token and one GET of the VM with
# its instance view), off+on (the peer's transitions take 0.2 s), peak RSS of a
# status (largest of 3, /usr/bin/time). Targets: agent status >= 20x faster
# than upstream; agent RSS <= 1/4 of upstream's. --check exits 1 when one is
# missed. Needs: the Azure SDK packages and fence-agents (tests/peers/setup.sh),
# hyperfine, curl, openssl.
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
ROOT="$(cd "$HERE/.." && pwd)"
BIN="$ROOT/target/release/fencekit"
RUNS=15
CHECK=0
. "$HERE/lib.sh"
bench_options 2,17 "$@"
bench_binary
PEERS_DIR=${PEERS_DIR:-/tmp/fencekit-peers}
export PEERS_DIR
PY="$PEERS_DIR/venv/bin/python"
PORT=$(( 20000 + RANDOM % 20000 ))
D="$PEERS_DIR/run/$(id -u)/azure-$PORT"
WORK=$(mktemp -d /tmp/fencekit-azure-bench.XXXXXX)
cleanup() { bash "$ROOT/tests/peers/azure_stop.sh" "$PORT" >/dev/null 2>&1 || true; rm -rf "$WORK"; }
trap cleanup EXIT
AZURE_PARENT_PID=$$ bash "$ROOT/tests/peers/azure_start.sh" "$PORT" 0.2 >/dev/null
ARM="https://127.0.0.1:$((PORT + 1))"
CA="$D/ca.pem"
SUB=0b1f6471-1bf0-4dda-aec3-cb9272f09590
TENANT=72f988bf-86f1-41af-91ab-2d7cd011db47
APP=6a2c2e1e-0000-4000-8000-00000000fe11
SECRET='Xq8~s3cr3t.Value_1'
ctl() { curl -s --cacert "$CA" -X POST "$ARM/_peer/control" -d "$1" >/dev/null; }
ctl "{\"op\":\"client\",\"tenant\":\"$TENANT\",\"client_id\":\"$APP\",\"secret\":\"$SECRET\"}"
ctl "{\"op\":\"vm\",\"sub\":\"$SUB\",\"rg\":\"rg-ha\",\"name\":\"node1\"}"
ln -s "$BIN" "$WORK/fence_azure_arm"
export HTTPS_PROXY="http://127.0.0.1:$((PORT + 2))" REQUESTS_CA_BUNDLE="$CA" PYTHONWARNINGS=ignore
export AZURE_POD_IDENTITY_AUTHORITY_HOST="http://127.0.0.1:$PORT"
ARGS="--username=$APP --password=$SECRET --tenantId=$TENANT --subscriptionId=$SUB --resourceGroup=rg-ha --plug=node1"
UP="$PY /usr/sbin/fence_azure_arm $ARGS"
FK="$WORK/fence_azure_arm $ARGS --ca-cert=$CA"
NAT="env -u HTTPS_PROXY AZURE_AUTHORITY_HOST=$ARM FENCEKIT_PASSWORD=$SECRET $BIN status azure://$SUB/rg-ha/node1 -l $APP --azure-tenant $TENANT --endpoint-url $ARM --ca-cert $CA"
# Every timed command must succeed (hyperfine -i would time failures too).
status_on --stderr "$UP -o status" "$FK -o status"
$NAT >/dev/null || { echo "fencekit status failed" >&2; $NAT >&2; exit 1; }

echo "== status (HTTPS: a token and one GET of the VM, median of $RUNS; upstream 5)"
up=$(median 5 "$UP -o status")
fk=$(median "$RUNS" "$FK -o status")
nat=$(median "$RUNS" "$NAT")
row 48 "upstream fence_azure_arm (python3 + Azure SDK)" "$up" ms
row 48 "fencekit as fence_azure_arm (same proxy)" "$fk" ms "$(ratio "$up" "$fk")x faster than upstream"
row 48 "fencekit status azure:// (native, direct)" "$nat" ms

echo
echo "== off then on (median of 3; each transition takes 0.2 s on the peer)"
off_on_rows 48 "upstream fence_azure_arm off+on" "fencekit as fence_azure_arm off+on"

echo
rss_rows 48 "upstream fence_azure_arm" "fencekit as fence_azure_arm"
agent_verdicts "$up" "$fk"
