#!/bin/bash
# Start vsphere_rest.py, the vSphere Automation API (REST) peer, on 127.0.0.1
# over HTTPS with its own certificate (CN/SAN 127.0.0.1; not a CA: clients
# that trust cert.pem as its own anchor, rustls/webpki included, accept it).
#
#   vsphere_rest_start.sh PORT
#   env: VSREST_USER / VSREST_PASS  credentials (default fence / rest-secret;
#                                   the user viewer / viewer-secret may only read)
#        VSREST_BULK=N              N extra VMs (the 1000-VM list limit)
#
# Waits until it serves and prints its JSON line (url, port, user, password,
# cert, pid). Everything lives in $PEERS_DIR/run/UID/vsrest-PORT/: cert.pem, key.pem,
# info.json, pid, requests.log.
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
PORT="${1:?usage: vsphere_rest_start.sh PORT}"
. "$(cd "$(dirname "$0")" && pwd)/run_dir.sh"
D="$PEER_RUN/vsrest-$PORT"
mkdir -p "$D"
if [ -f "$D/pid" ] && kill -0 "$(cat "$D/pid")" 2>/dev/null; then
  echo "already running on port $PORT: pid $(cat "$D/pid")" >&2; exit 1
fi
if [ ! -s "$D/cert.pem" ]; then
  openssl req -x509 -newkey rsa:2048 -nodes -days 365 \
    -keyout "$D/key.pem" -out "$D/cert.pem" \
    -subj "/CN=127.0.0.1" -addext "subjectAltName=IP:127.0.0.1,DNS:localhost" \
    -addext "basicConstraints=critical,CA:FALSE" -addext "extendedKeyUsage=serverAuth" 2>/dev/null
fi
rm -f "$D/info.json"
python3 "$HERE/vsphere_rest.py" --port "$PORT" --cert "$D/cert.pem" --key "$D/key.pem" \
  --user "${VSREST_USER:-fence}" --password "${VSREST_PASS:-rest-secret}" \
  --bulk "${VSREST_BULK:-0}" --info "$D/info.json" --log "$D/requests.log" \
  >/dev/null 2>"$D/stderr.log" &
pid=$!
echo "$pid" > "$D/pid"
for _ in $(seq 1 100); do
  [ -s "$D/info.json" ] && break
  kill -0 "$pid" 2>/dev/null || { echo "vsphere_rest.py exited:" >&2; cat "$D/stderr.log" >&2; rm -f "$D/pid"; exit 1; }
  sleep 0.1
done
[ -s "$D/info.json" ] || { echo "vsphere_rest.py did not start in 10 s" >&2; exit 1; }
cat "$D/info.json"
