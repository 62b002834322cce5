#!/usr/bin/env bash
# Side-by-side IBM Cloud benchmark (issue 39), loopback only: fencekit as
# fence_ibm_vpc and fence_ibm_powervs vs upstream's (fence-agents 4.12.1,
# Debian's python3 and pycurl), all against one tests/peers/ibm_api.py through
# the peer's TLS-terminating proxy (--proxy; IBM's real host names, a test CA:
# fencekit trusts it with --ca-cert, upstream in a mount namespace of its own,
# the system bundle plus the test CA bound over ca-certificates.crt; needs
# root). The native fencekit run goes directly (--endpoint-url, --iam-endpoint).
#
#   bench/ibm.sh [--bin PATH] [--runs N] [--check]
#
# Rows per agent: status (median wall, hyperfine -N: warm, one GET; upstream
# VPC reuses its token file, upstream Power VS fetches a token and reads the
# instance and then the workspace's list; fencekit takes the token from its
# cache, kept in this run's own XDG_RUNTIME_DIR), off+on (the peer's transitions take 0.2 s), peak RSS of a
# status (largest of 3). Targets: agent status >= 20x faster than upstream;
# agent RSS <= 1/4 of upstream's. --check exits 1 when one is missed.
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
PORT=$(( 20000 + RANDOM % 20000 ))
D="$PEERS_DIR/run/$(id -u)/ibm-$PORT"
WORK=$(mktemp -d /tmp/fencekit-ibm-bench.XXXXXX)
cleanup() { bash "$ROOT/tests/peers/ibm_stop.sh" "$PORT" >/dev/null 2>&1 || true; rm -rf "$WORK"; }
trap cleanup EXIT
# fencekit's token cache (and locks) in this run's directory, removed after.
export XDG_RUNTIME_DIR="$WORK/run"
mkdir -m 0700 "$XDG_RUNTIME_DIR"
IBM_PARENT_PID=$$ bash "$ROOT/tests/peers/ibm_start.sh" "$PORT" 0.2 >/dev/null
API="https://127.0.0.1:$((PORT + 1))"
PROXY="http://127.0.0.1:$((PORT + 2))"
CA="$D/ca.pem"
KEY=ApiKey-bench-0123456789
WS=ws-bench
CRN="crn:v1:bluemix:public:power-iaas:dal12:a/acc0001:$WS::"
ctl() { curl -s --cacert "$CA" -X POST "$API/_peer/control" -d "$1" >/dev/null; }
ctl "{\"op\":\"key\",\"key\":\"$KEY\"}"
ctl '{"op":"vpc","id":"0717_bench","name":"node1"}'
ctl "{\"op\":\"ws\",\"id\":\"$WS\",\"crn\":\"$CRN\"}"
ctl "{\"op\":\"pvm\",\"id\":\"pvm-bench\",\"ws\":\"$WS\",\"name\":\"lpar1\"}"
for a in fence_ibm_vpc fence_ibm_powervs; do
  ln -s "$BIN" "$WORK/$a"
  printf '#!/bin/sh\nexec unshare -m sh -c '"'"'mount --bind "$0" /etc/ssl/certs/ca-certificates.crt && exec "$@"'"'"' %s /usr/sbin/%s "$@"\n' \
    "$D/bundle.pem" "$a" > "$WORK/up_$a"
  chmod +x "$WORK/up_$a"
done
VARGS="--apikey=$KEY --region=us-south --plug=0717_bench --proxy=$PROXY"
PARGS="--token=$KEY --region=us-south --api-type=public --instance=$WS --crn=$CRN --plug=pvm-bench --proxy=$PROXY"
declare -A up_st fk_st up_mem fk_mem
for a in fence_ibm_vpc fence_ibm_powervs; do
  case $a in
    fence_ibm_vpc) A="$VARGS"; UP="$WORK/up_$a $A --token-file=$WORK/[hash].token"
                   NAT="$BIN status ibmvpc://us-south/0717_bench --endpoint-url $API --ca-cert $CA" ;;
    *) A="$PARGS"; UP="$WORK/up_$a $A"
       NAT="$BIN status powervs://us-south/$WS/pvm-bench --ibm-crn $CRN --endpoint-url $API --ca-cert $CA" ;;
  esac
  FK="$WORK/$a $A --ca-cert=$CA"
  NAT="env FENCEKIT_PASSWORD=$KEY IBMCLOUD_IAM_API_ENDPOINT=$API $NAT"
  status_on --stderr "$UP -o status" "$FK -o status"
  $NAT >/dev/null || { echo "fencekit status failed" >&2; $NAT >&2; exit 1; }
  echo "== $a status (HTTPS through the proxy, median of $RUNS; upstream 5)"
  up=$(median 5 "$UP -o status")
  fk=$(median "$RUNS" "$FK -o status")
  nat=$(median "$RUNS" "$NAT")
  row 48 "upstream $a (python3 + pycurl)" "$up" ms
  row 48 "fencekit as $a (same proxy)" "$fk" ms "$(ratio "$up" "$fk")x faster than upstream"
  row 48 "fencekit status (native, direct)" "$nat" ms
  echo "== $a off then on (median of 3; transitions take 0.2 s)"
  off_on_rows 48 "upstream $a off+on" "fencekit as $a off+on"
  rss_rows 48 "upstream $a" "fencekit as $a"
  up_st[$a]=$up; fk_st[$a]=$fk; up_mem[$a]=$up_rss; fk_mem[$a]=$fk_rss
  echo
done
fail=0
for a in fence_ibm_vpc fence_ibm_powervs; do
  verdict "$a status >= 20x faster than upstream ($(ratio "${up_st[$a]}" "${fk_st[$a]}")x)" "${up_st[$a]} / ${fk_st[$a]} >= 20"
  verdict "$a RSS <= 1/4 of upstream's (1/$(ratio "${up_mem[$a]}" "${fk_mem[$a]}"))" "${fk_mem[$a]} * 4 <= ${up_mem[$a]}"
done
[ "$CHECK" = 1 ] && exit "$fail"
exit 0
