#!/usr/bin/env bash
# Side-by-side GCE benchmark (issue 39), loopback only: fencekit (native and
# as fence_gce) vs upstream fence_gce (fence-agents 4.12.1 with the venv's
# Python and google-api-python-client / google-auth / httplib2), all against
# one tests/peers/gce_api.py through the peer's TLS-terminating proxy
# (HTTPS_PROXY; the real host names compute.googleapis.com and
# oauth2.googleapis.com, a test CA: HTTPLIB2_CA_CERTS for upstream,
# --ca-cert for fencekit), one service-account key file for all.
#
#   bench/gce.sh [--bin PATH] [--runs N] [--check]
#
# Rows: status (median wall, hyperfine -N: a JWT-bearer token and one GET of
# the instance), off+on (the peer's transitions take 0.2 s), peak RSS of a
# status (largest of 3, /usr/bin/time), and where a status's time goes (the
# peer's own time per request, from its log). Targets: agent status >= 20x
# faster than upstream; agent RSS <= 1/4 of upstream's. --check exits 1 when
# one is missed. Needs: google-api-python-client and fence-agents
# (tests/peers/setup.sh), hyperfine, curl, openssl.
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
ROOT="$(cd "$HERE/.." && pwd)"
BIN="$ROOT/target/release/fencekit"
RUNS=15
CHECK=0
. "$HERE/lib.sh"
bench_options 2,18 "$@"
bench_binary
PEERS_DIR=${PEERS_DIR:-/tmp/fencekit-peers}
export PEERS_DIR
PY="$PEERS_DIR/venv/bin/python"
PORT=$(( 20000 + RANDOM % 20000 ))
D="$PEERS_DIR/run/$(id -u)/gce-$PORT"
WORK=$(mktemp -d /tmp/fencekit-gce-bench.XXXXXX)
cleanup() { bash "$ROOT/tests/peers/gce_stop.sh" "$PORT" >/dev/null 2>&1 || true; rm -rf "$WORK"; }
trap cleanup EXIT
GCE_PARENT_PID=$$ bash "$ROOT/tests/peers/gce_start.sh" "$PORT" 0.2 >/dev/null
API="https://127.0.0.1:$((PORT + 1))"
CA="$D/ca.pem"
PROJECT=fence-project
ZONE=europe-west4-a
EMAIL=fence@fence-project.iam.gserviceaccount.com
ctl() { curl -s --cacert "$CA" -X POST "$API/_peer/control" -d "$1" >/dev/null; }
"$PY" - "$D" "$WORK/key.json" "$EMAIL" <<'PY'
import json, sys
d, out, email = sys.argv[1:]
json.dump({"type": "service_account", "project_id": "fence-project", "private_key_id": "k1",
           "private_key": open(d + "/sa.key").read(), "client_email": email, "client_id": "1",
           "token_uri": "https://oauth2.googleapis.com/token"}, open(out, "w"))
print(json.dumps({"op": "account", "email": email, "public_pem": open(d + "/sa.pub").read()}),
      file=open(out + ".ctl", "w"))
PY
ctl "$(cat "$WORK/key.json.ctl")"
ctl "{\"op\":\"instance\",\"project\":\"$PROJECT\",\"zone\":\"$ZONE\",\"name\":\"node1\"}"
ln -s "$BIN" "$WORK/fence_gce"
export HTTPS_PROXY="http://127.0.0.1:$((PORT + 2))" HTTPLIB2_CA_CERTS="$CA" PYTHONWARNINGS=ignore HOME="$WORK"
ARGS="--project=$PROJECT --zone=$ZONE --serviceaccount=$WORK/key.json --plug=node1"
UP="$PY /usr/sbin/fence_gce $ARGS"
FK="$WORK/fence_gce $ARGS --ca-cert=$CA"
NAT="env GOOGLE_APPLICATION_CREDENTIALS=$WORK/key.json $BIN status gce://$PROJECT/$ZONE/node1 --ca-cert $CA"
# Every timed command must succeed (hyperfine -i would time failures too).
status_on --stderr "$UP -o status" "$FK -o status"
$NAT >/dev/null || { echo "fencekit status failed" >&2; $NAT >&2; exit 1; }

echo "== status (HTTPS through the proxy: a token and one GET of the instance, median of $RUNS; upstream 5)"
up=$(median 5 "$UP -o status")
fk=$(median "$RUNS" "$FK -o status")
nat=$(median "$RUNS" "$NAT")
row 48 "upstream fence_gce (python3 + googleapiclient)" "$up" ms
row 48 "fencekit as fence_gce (same proxy)" "$fk" ms "$(ratio "$up" "$fk")x faster than upstream"
row 48 "fencekit status gce:// (native, same proxy)" "$nat" ms

echo
echo "== where a fencekit status spends its time (the peer's share)"
# Two requests (token, GET); the peer's time is what curl measures for one
# GET of its state through the same TLS path, the rest is fencekit's.
peer_ms=$(curl -s -o /dev/null -w '%{time_total}' --cacert "$CA" "$API/_peer/state" | awk '{printf "%.1f", $1 * 1000}')
row 48 "one HTTPS request to the peer (curl, new TLS)" "$peer_ms" ms "x2 per status (token, GET)"
# fencekit's own CPU for one status (user + sys): the rest of its wall time
# is waiting for the peer.
# shellcheck disable=SC2086
cpu_ms=$( { /usr/bin/time -f '%U %S' $FK -o status >/dev/null; } 2>&1 | tail -1 | awk '{printf "%.1f", ($1 + $2) * 1000}')
row 48 "fencekit's own CPU per status (user+sys)" "$cpu_ms" ms "(/usr/bin/time: 10 ms resolution)"

echo
echo "== off then on (median of 3; each transition takes 0.2 s on the peer)"
off_on_rows 48 "upstream fence_gce off+on" "fencekit as fence_gce off+on"

echo
rss_rows 48 "upstream fence_gce" "fencekit as fence_gce"
agent_verdicts "$up" "$fk"
