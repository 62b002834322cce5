#!/usr/bin/env bash
# Side-by-side Redfish benchmark (issue 4, SPEC §10), loopback only: fencekit
# (native and as fence_redfish) vs upstream fence_redfish vs curl doing the
# same GETs, against one sushy-tools emulator over TLS.
#
#   bench/redfish.sh [--bin PATH] [--runs N]
#
# Rows: status with --systems-uri and with discovery (median wall), off and
# reboot (median wall), and HTTP requests per action counted from the
# emulator's trace. Targets: status >= 5x faster than fence_redfish, within
# 1.5x of curl doing the same GETs; fewer requests than upstream everywhere.
# Needs: sushy-tools venv and fence-agents (tests/peers/setup.sh), hyperfine.
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
ROOT="$(cd "$HERE/.." && pwd)"
BIN="$ROOT/target/release/fencekit"
RUNS=15
. "$HERE/lib.sh"
bench_options 2,13 "$@"
bench_binary
export PATH="$PATH:/usr/sbin"
PORT=$(( 20000 + RANDOM % 20000 ))
PEERS_DIR=${PEERS_DIR:-/tmp/fencekit-peers}
D="$PEERS_DIR/run/$(id -u)/sushy-$PORT"
WORK=$(mktemp -d /tmp/fencekit-rf-bench.XXXXXX)
cleanup() { bash "$ROOT/tests/peers/sushy_stop.sh" "$PORT" >/dev/null 2>&1 || true; rm -rf "$WORK"; }
trap cleanup EXIT
bash "$ROOT/tests/peers/sushy_start.sh" "$PORT" on >/dev/null
ln -s "$BIN" "$WORK/fence_redfish"
SYS=/redfish/v1/Systems/00000000-0000-4000-8000-000000000001
URL="https://127.0.0.1:$PORT"
CA="$D/cert.pem"
AUTH=(--username admin --password fencepass)

requests() { # command… → number of requests the emulator saw
  : > "$D/trace.jsonl"
  "$@" >/dev/null 2>&1 || true
  wc -l < "$D/trace.jsonl"
}

echo "== status (TLS, sushy-tools, median of $RUNS)"
up_sys=$(median "$RUNS" "/usr/sbin/fence_redfish --ip 127.0.0.1 --ipport $PORT ${AUTH[*]} --ssl-insecure --systems-uri $SYS -o status")
up_disc=$(median "$RUNS" "/usr/sbin/fence_redfish --ip 127.0.0.1 --ipport $PORT ${AUTH[*]} --ssl-insecure -o status")
fk_sys=$(median "$RUNS" "$WORK/fence_redfish --ip 127.0.0.1 --ipport $PORT ${AUTH[*]} --ssl-insecure --systems-uri $SYS -o status")
fk_disc=$(median "$RUNS" "$WORK/fence_redfish --ip 127.0.0.1 --ipport $PORT ${AUTH[*]} --ssl-insecure -o status")
nat_sys=$(FENCEKIT_PASSWORD=fencepass median "$RUNS" "$BIN status redfish://admin@127.0.0.1:$PORT$SYS --ca-cert $CA")
curl_sys=$(median "$RUNS" "curl -s -k -u admin:fencepass -H OData-Version:4.0 $URL$SYS")
curl_disc=$(median "$RUNS" "curl -s -k -u admin:fencepass -H OData-Version:4.0 $URL/redfish/v1 $URL/redfish/v1/Systems $URL$SYS")
printf '%-46s %8s ms\n' "upstream fence_redfish, --systems-uri" "$up_sys"
printf '%-46s %8s ms   %sx faster than upstream, %sx of curl\n' "fencekit as fence_redfish, --systems-uri" "$fk_sys" "$(ratio "$up_sys" "$fk_sys")" "$(ratio "$fk_sys" "$curl_sys")"
printf '%-46s %8s ms   %sx of curl (verified TLS with --ca-cert)\n' "fencekit status (native), systems URI" "$nat_sys" "$(ratio "$nat_sys" "$curl_sys")"
printf '%-46s %8s ms\n' "curl, the same GET" "$curl_sys"
printf '%-46s %8s ms\n' "upstream fence_redfish, discovery" "$up_disc"
printf '%-46s %8s ms   %sx faster than upstream, %sx of curl\n' "fencekit as fence_redfish, discovery" "$fk_disc" "$(ratio "$up_disc" "$fk_disc")" "$(ratio "$fk_disc" "$curl_disc")"
printf '%-46s %8s ms\n' "curl, the same 3 GETs on one connection" "$curl_disc"

echo
echo "== off and reboot (median of 3; sushy applies resets at once)"
offon() { # tool → "off_ms reboot_ms"
  local t=$1 o r
  o=$(median 3 "sh -c '$t -o on >/dev/null 2>&1; $t -o off'")
  r=$(median 3 "$t -o reboot")
  echo "$o $r"
}
UP="/usr/sbin/fence_redfish --ip 127.0.0.1 --ipport $PORT ${AUTH[*]} --ssl-insecure --systems-uri $SYS"
FK="$WORK/fence_redfish --ip 127.0.0.1 --ipport $PORT ${AUTH[*]} --ssl-insecure --systems-uri $SYS"
read -r up_off up_reboot < <(offon "$UP")
read -r fk_off fk_reboot < <(offon "$FK")
printf '%-46s %8s ms (on+off)  reboot %8s ms\n' "upstream fence_redfish" "$up_off" "$up_reboot"
printf '%-46s %8s ms (on+off)  reboot %8s ms\n' "fencekit as fence_redfish" "$fk_off" "$fk_reboot"

echo
echo "== HTTP requests per action (from the emulator's trace)"
for act in status off on reboot; do
  [ "$act" = off ] && $UP -o on >/dev/null 2>&1 || true
  [ "$act" = on ] && $UP -o off >/dev/null 2>&1 || true
  u=$(requests $UP -o "$act")
  [ "$act" = off ] && $UP -o on >/dev/null 2>&1 || true
  [ "$act" = on ] && $UP -o off >/dev/null 2>&1 || true
  f=$(requests $FK -o "$act")
  printf '%-10s upstream %3s   fencekit %3s\n' "$act" "$u" "$f"
done
