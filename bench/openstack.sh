#!/usr/bin/env bash
# Side-by-side OpenStack benchmark (issue 40), loopback only: fencekit (native
# and as fence_openstack) vs upstream fence_openstack (fence-agents 4.12.1 with
# keystoneauth1 and python-novaclient from the peers' venv), both against one
# tests/peers/openstack_api.py (a Keystone v3 token, then Nova, over HTTPS).
# Both agents run with --ssl-insecure; the native row verifies the peer's
# certificate (clouds.yaml's cacert).
#
#   bench/openstack.sh [--bin PATH] [--runs N] [--check]
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
WORK=$(mktemp -d /tmp/fencekit-openstack-bench.XXXXXX)
cleanup() { bash "$ROOT/tests/peers/hv_peer_stop.sh" openstack "$PORT" "$ADDR" >/dev/null 2>&1 || true; rm -rf "$WORK"; }
trap cleanup EXIT
bash "$ROOT/tests/peers/hv_peer_start.sh" openstack "$PORT" "$ADDR" > "$WORK/info.json"
CA=$(python3 -c "import json;print(json.load(open('$WORK/info.json'))['cert'])")
ln -s "$BIN" "$WORK/fence_openstack"
export PYTHONWARNINGS=ignore
ID=$(curl -s --cacert "$CA" "https://$ADDR:$PORT/fencekit/servers" | python3 -c "import json,sys;print([s['id'] for s in json.load(sys.stdin) if s['name']=='node1'][0])")
cat > "$WORK/clouds.yaml" <<EOC
clouds:
  bench:
    auth:
      auth_url: https://$ADDR:$PORT/identity/v3
      username: fence
      password: fence-secret
      project_name: fencing
      user_domain_name: Default
      project_domain_name: Default
    cacert: $CA
EOC
export OS_CLIENT_CONFIG_FILE="$WORK/clouds.yaml"
ARGS="--auth-url=https://$ADDR:$PORT/identity/v3 --ssl-insecure --username=fence --password=fence-secret --project-name=fencing --plug=$ID"
UP="$PEERS_DIR/venv/bin/python /usr/sbin/fence_openstack $ARGS"
FK="$WORK/fence_openstack $ARGS"
NAT="$BIN status openstack://bench/$ID"
for c in "$UP -o status" "$FK -o status"; do
  [ "$($c 2>/dev/null)" = "Status: ON" ] || { echo "not 'Status: ON': $c" >&2; $c >&2; exit 1; }
done
$NAT >/dev/null || { echo "fencekit status failed: $NAT" >&2; exit 1; }

echo "== status (HTTPS, Keystone token + Nova, median of $RUNS; upstream 5)"
up=$(median 5 "$UP -o status")
fk=$(median "$RUNS" "$FK -o status")
nat=$(median "$RUNS" "$NAT")
printf '%-44s %8s ms\n' "upstream fence_openstack (python3 + novaclient)" "$up"
printf '%-44s %8s ms   %sx faster than upstream\n' "fencekit as fence_openstack" "$fk" "$(ratio "$up" "$fk")"
printf '%-44s %8s ms   %sx faster than upstream\n' "fencekit status openstack:// (native)" "$nat" "$(ratio "$up" "$nat")"

echo
echo "== off then on (median of 3)"
up_oo=$(median 3 "sh -c '$UP -o off --power-wait=0 >/dev/null; $UP -o on --power-wait=0'")
fk_oo=$(median 3 "sh -c '$FK -o off --power-wait=0 >/dev/null; $FK -o on --power-wait=0'")
printf '%-44s %8s ms\n' "upstream fence_openstack off+on" "$up_oo"
printf '%-44s %8s ms   %sx faster\n' "fencekit as fence_openstack off+on" "$fk_oo" "$(ratio "$up_oo" "$fk_oo")"

echo
echo "== peak RSS of a status (largest of 3)"
up_rss=$(rss $UP -o status)
fk_rss=$(rss $FK -o status)
printf '%-44s %8s MiB\n' "upstream fence_openstack" "$up_rss"
printf '%-44s %8s MiB   1/%s of upstream\n' "fencekit as fence_openstack" "$fk_rss" "$(ratio "$up_rss" "$fk_rss")"

echo
fail=0
verdict "agent status >= 20x faster than upstream ($(ratio "$up" "$fk")x)" "$up / $fk >= 20"
verdict "agent RSS <= 1/4 of upstream's (1/$(ratio "$up_rss" "$fk_rss"))" "$fk_rss * 4 <= $up_rss"
[ "$CHECK" = 1 ] && exit "$fail"
exit 0
