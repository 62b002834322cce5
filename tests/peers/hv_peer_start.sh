#!/bin/bash
# Start one of the hypervisor API peers of issue 40 over HTTPS with its own
# certificate (SAN: the bind address and localhost; not a CA: a client that
# trusts cert.pem as its own anchor accepts it):
#
#   hv_peer_start.sh pve|nutanix PORT [BIND]      (BIND: 127.0.0.1 unless given)
#   env: PEER_ARGS   more arguments for the peer (e.g. "--task-ms 500")
#
# Runs tests/peers/pve_api.py or nutanix_api.py; waits until it serves and
# prints its JSON line. Everything lives in $PEERS_DIR/run/UID/KIND-BIND-PORT/:
# cert.pem, key.pem (kept when present), info.json, pid, requests.log.
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
KIND="${1:?usage: hv_peer_start.sh pve|nutanix PORT [BIND]}"
PORT="${2:?usage: hv_peer_start.sh pve|nutanix PORT [BIND]}"
BIND="${3:-127.0.0.1}"
case "$KIND" in pve|nutanix|ovirt|openstack|ucs|ribcl) ;; *) echo "unknown peer $KIND" >&2; exit 64 ;; esac
. "$HERE/run_dir.sh"
D="$PEER_RUN/$KIND-$BIND-$PORT"
mkdir -p "$D"
if [ -f "$D/pid" ] && kill -0 "$(cat "$D/pid")" 2>/dev/null; then
  echo "already running on $BIND:$PORT: pid $(cat "$D/pid")" >&2; exit 1
fi
if [ ! -s "$D/cert.pem" ]; then
  openssl req -x509 -newkey rsa:2048 -nodes -days 365 \
    -keyout "$D/key.pem" -out "$D/cert.pem" \
    -subj "/CN=$BIND" -addext "subjectAltName=IP:$BIND,DNS:localhost" \
    -addext "basicConstraints=critical,CA:FALSE" -addext "extendedKeyUsage=serverAuth" 2>/dev/null
fi
rm -f "$D/info.json"
# shellcheck disable=SC2086
script="${KIND}_api.py"; [ "$KIND" = ribcl ] && script=ribcl_peer.py
python3 "$HERE/$script" --port "$PORT" --bind "$BIND" --cert "$D/cert.pem" --key "$D/key.pem" \
  --info "$D/info.json" --log "$D/requests.log" ${PEER_ARGS:-} >/dev/null 2>"$D/stderr.log" &
pid=$!
echo "$pid" > "$D/pid"
for _ in $(seq 1 100); do
  [ -s "$D/info.json" ] && break
  kill -0 "$pid" 2>/dev/null || { echo "${KIND}_api.py exited:" >&2; cat "$D/stderr.log" >&2; rm -f "$D/pid"; exit 1; }
  sleep 0.1
done
[ -s "$D/info.json" ] || { echo "${KIND}_api.py did not start in 10 s" >&2; exit 1; }
cat "$D/info.json"
