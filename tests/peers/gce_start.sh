#!/bin/bash
# Start the GCE peer (tests/peers/gce_api.py) on 127.0.0.1.
#
#   gce_start.sh PORT [TRANSITION_SECONDS]
#     PORT        plain HTTP (the metadata server); PORT+1 HTTPS; PORT+2 the TLS-terminating proxy
#     TRANSITION  seconds a power transition takes (default 0.5)
#   env: GCE_PARENT_PID  stop the peer when this process is gone
#
# Prints the PID on stdout (last line). Everything lives in
# $PEERS_DIR/run/UID/gce-PORT/: server.log, pid, ca.pem (the test CA
# clients trust), server.pem/key.pem (for 127.0.0.1 and Google's real host
# names, which the proxy answers as), sa.key/sa.pub (a service account's
# key). The peer starts empty: tests add accounts and instances through POST /_peer/control.
set -euo pipefail
PORT="${1:?usage: gce_start.sh PORT [TRANSITION]}"
TRANSITION="${2:-0.5}"
HERE="$(cd "$(dirname "$0")" && pwd)"
PY="${PEERS_DIR:-/tmp/fencekit-peers}/venv/bin/python"
[ -x "$PY" ] || PY="$(command -v python3)"
. "$HERE/run_dir.sh"
D="$PEER_RUN/gce-$PORT"
mkdir -p "$D"
if [ -f "$D/pid" ] && kill -0 "$(cat "$D/pid")" 2>/dev/null; then
  echo "already running on port $PORT: pid $(cat "$D/pid")" >&2; exit 1
fi
if [ ! -s "$D/server.pem" ]; then
  openssl req -x509 -newkey rsa:2048 -nodes -days 365 \
    -keyout "$D/ca.key" -out "$D/ca.pem" -subj "/CN=fencekit test GCE CA" 2>/dev/null
  openssl req -newkey rsa:2048 -nodes -keyout "$D/key.pem" -out "$D/server.csr" \
    -subj "/CN=compute.googleapis.com" 2>/dev/null
  SANS="IP:127.0.0.1,DNS:localhost"
  for h in compute.googleapis.com oauth2.googleapis.com www.googleapis.com; do SANS="$SANS,DNS:$h"; done
  printf 'subjectAltName=%s\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n' "$SANS" > "$D/ext.cnf"
  openssl x509 -req -in "$D/server.csr" -CA "$D/ca.pem" -CAkey "$D/ca.key" \
    -CAcreateserial -days 365 -extfile "$D/ext.cnf" -out "$D/server.pem" 2>/dev/null
  # A service account's key (PKCS#8), as a key file carries it.
  openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out "$D/sa.key" 2>/dev/null
  openssl pkey -in "$D/sa.key" -pubout -out "$D/sa.pub" 2>/dev/null
  chmod 600 "$D/sa.key"
fi
: > "$D/server.log"
setsid "$PY" "$HERE/gce_api.py" --port "$PORT" --tls-port "$((PORT + 1))" \
  --proxy-port "$((PORT + 2))" --cert "$D/server.pem" --key "$D/key.pem" \
  --transition "$TRANSITION" >> "$D/server.log" 2>&1 < /dev/null &
PID=$!
echo "$PID" > "$D/pid"
if [ -n "${GCE_PARENT_PID:-}" ]; then
  setsid bash -c "while kill -0 $GCE_PARENT_PID 2>/dev/null && kill -0 $PID 2>/dev/null; do sleep 1; done; kill $PID 2>/dev/null" \
    > /dev/null 2>&1 < /dev/null &
fi
for _ in $(seq 1 200); do
  if curl -s --cacert "$D/ca.pem" -o /dev/null "https://127.0.0.1:$((PORT + 1))/_peer/state"; then
    echo "gce peer up: http://127.0.0.1:$PORT https://127.0.0.1:$((PORT + 1)) proxy 127.0.0.1:$((PORT + 2)) dir=$D" >&2
    echo "$PID"; exit 0
  fi
  kill -0 "$PID" 2>/dev/null || { echo "gce peer died; see $D/server.log" >&2; tail -20 "$D/server.log" >&2; exit 1; }
  sleep 0.05
done
echo "gce peer not answering after 10 s; see $D/server.log" >&2; exit 1
