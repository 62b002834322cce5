#!/bin/bash
# Start the Azure peer (tests/peers/azure_api.py) on 127.0.0.1.
#
#   azure_start.sh PORT [TRANSITION_SECONDS]
#     PORT        plain HTTP (IMDS); PORT+1 HTTPS; PORT+2 the TLS-terminating proxy
#     TRANSITION  seconds a power transition takes (default 0.5)
#   env: AZURE_PARENT_PID  stop the peer when this process is gone
#
# Prints the PID on stdout (last line). Everything lives in
# $PEERS_DIR/run/UID/azure-PORT/: server.log, pid, ca.pem (the test CA
# clients trust), server.pem/key.pem (for 127.0.0.1 and Azure's real host
# names, which the proxy answers as). The peer starts empty: tests add
# service principals, identities and VMs through POST /_peer/control.
set -euo pipefail
PORT="${1:?usage: azure_start.sh PORT [TRANSITION]}"
TRANSITION="${2:-0.5}"
HERE="$(cd "$(dirname "$0")" && pwd)"
PY="${PEERS_DIR:-/tmp/fencekit-peers}/venv/bin/python"
[ -x "$PY" ] || PY="$(command -v python3)"
. "$HERE/run_dir.sh"
D="$PEER_RUN/azure-$PORT"
mkdir -p "$D"
if [ -f "$D/pid" ] && kill -0 "$(cat "$D/pid")" 2>/dev/null; then
  echo "already running on port $PORT: pid $(cat "$D/pid")" >&2; exit 1
fi
if [ ! -s "$D/server.pem" ]; then
  openssl req -x509 -newkey rsa:2048 -nodes -days 365 \
    -keyout "$D/ca.key" -out "$D/ca.pem" -subj "/CN=fencekit test Azure CA" 2>/dev/null
  openssl req -newkey rsa:2048 -nodes -keyout "$D/key.pem" -out "$D/server.csr" \
    -subj "/CN=management.azure.com" 2>/dev/null
  SANS="IP:127.0.0.1,DNS:localhost"
  for h in management.azure.com login.microsoftonline.com management.chinacloudapi.cn \
           login.chinacloudapi.cn management.usgovcloudapi.net login.microsoftonline.us \
           management.microsoftazure.de login.microsoftonline.de; do SANS="$SANS,DNS:$h"; done
  printf 'subjectAltName=%s\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n' "$SANS" > "$D/ext.cnf"
  openssl x509 -req -in "$D/server.csr" -CA "$D/ca.pem" -CAkey "$D/ca.key" \
    -CAcreateserial -days 365 -extfile "$D/ext.cnf" -out "$D/server.pem" 2>/dev/null
  # A service principal's certificate and key (one PEM, as the SDKs take it).
  openssl req -x509 -newkey rsa:2048 -nodes -days 365 -keyout "$D/sp.key" -out "$D/sp.crt" \
    -subj "/CN=fencekit test service principal" 2>/dev/null
  cat "$D/sp.crt" "$D/sp.key" > "$D/sp.pem"
  chmod 600 "$D/sp.pem" "$D/sp.key"
fi
: > "$D/server.log"
setsid "$PY" "$HERE/azure_api.py" --port "$PORT" --tls-port "$((PORT + 1))" \
  --proxy-port "$((PORT + 2))" --cert "$D/server.pem" --key "$D/key.pem" \
  --transition "$TRANSITION" >> "$D/server.log" 2>&1 < /dev/null &
PID=$!
echo "$PID" > "$D/pid"
if [ -n "${AZURE_PARENT_PID:-}" ]; then
  setsid bash -c "while kill -0 $AZURE_PARENT_PID 2>/dev/null && kill -0 $PID 2>/dev/null; do sleep 1; done; kill $PID 2>/dev/null" \
    > /dev/null 2>&1 < /dev/null &
fi
for _ in $(seq 1 200); do
  if curl -s --cacert "$D/ca.pem" -o /dev/null "https://127.0.0.1:$((PORT + 1))/_peer/state"; then
    echo "azure peer up: http://127.0.0.1:$PORT https://127.0.0.1:$((PORT + 1)) proxy 127.0.0.1:$((PORT + 2)) dir=$D" >&2
    echo "$PID"; exit 0
  fi
  kill -0 "$PID" 2>/dev/null || { echo "azure peer died; see $D/server.log" >&2; tail -20 "$D/server.log" >&2; exit 1; }
  sleep 0.05
done
echo "azure peer not answering after 10 s; see $D/server.log" >&2; exit 1
