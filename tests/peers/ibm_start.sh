#!/bin/bash
# Start the IBM Cloud peer (tests/peers/ibm_api.py) on 127.0.0.1.
#
#   ibm_start.sh PORT [TRANSITION_SECONDS]
#     PORT        plain HTTP (the VPC metadata service); PORT+1 HTTPS; PORT+2 the TLS-terminating proxy
#     TRANSITION  seconds a power transition takes (default 0.5)
#   env: IBM_PARENT_PID  stop the peer when this process is gone
#
# Prints the PID on stdout (last line). Everything lives in
# $PEERS_DIR/run/UID/ibm-PORT/: server.log, pid, ca.pem (the test CA
# clients trust), server.pem/key.pem (for 127.0.0.1 and IBM Cloud's real host
# names in the test regions, which the proxy answers as), bundle.pem (the
# system's CAs and the test CA: upstream's libcurl trusts it in a mount
# namespace of its own). The peer starts empty: tests add
# API keys, instances and workspaces through POST /_peer/control.
set -euo pipefail
PORT="${1:?usage: ibm_start.sh PORT [TRANSITION]}"
TRANSITION="${2:-0.5}"
HERE="$(cd "$(dirname "$0")" && pwd)"
PY="${PEERS_DIR:-/tmp/fencekit-peers}/venv/bin/python"
[ -x "$PY" ] || PY="$(command -v python3)"
. "$HERE/run_dir.sh"
D="$PEER_RUN/ibm-$PORT"
mkdir -p "$D"
if [ -f "$D/pid" ] && kill -0 "$(cat "$D/pid")" 2>/dev/null; then
  echo "already running on port $PORT: pid $(cat "$D/pid")" >&2; exit 1
fi
if [ ! -s "$D/server.pem" ]; then
  openssl req -x509 -newkey rsa:2048 -nodes -days 365 \
    -keyout "$D/ca.key" -out "$D/ca.pem" -subj "/CN=fencekit test IBM Cloud CA" 2>/dev/null
  openssl req -newkey rsa:2048 -nodes -keyout "$D/key.pem" -out "$D/server.csr" \
    -subj "/CN=iam.cloud.ibm.com" 2>/dev/null
  SANS="IP:127.0.0.1,DNS:localhost"
  for h in iam.cloud.ibm.com private.iam.cloud.ibm.com; do SANS="$SANS,DNS:$h"; done
  for r in us-south eu-de lon; do
    SANS="$SANS,DNS:$r.iaas.cloud.ibm.com,DNS:$r.private.iaas.cloud.ibm.com"
    SANS="$SANS,DNS:$r.power-iaas.cloud.ibm.com,DNS:private.$r.power-iaas.cloud.ibm.com"
  done
  printf 'subjectAltName=%s\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n' "$SANS" > "$D/ext.cnf"
  openssl x509 -req -in "$D/server.csr" -CA "$D/ca.pem" -CAkey "$D/ca.key" \
    -CAcreateserial -days 365 -extfile "$D/ext.cnf" -out "$D/server.pem" 2>/dev/null
  cat /etc/ssl/certs/ca-certificates.crt "$D/ca.pem" > "$D/bundle.pem" 2>/dev/null || cp "$D/ca.pem" "$D/bundle.pem"
fi
: > "$D/server.log"
setsid "$PY" "$HERE/ibm_api.py" --port "$PORT" --tls-port "$((PORT + 1))" \
  --proxy-port "$((PORT + 2))" --cert "$D/server.pem" --key "$D/key.pem" \
  --transition "$TRANSITION" >> "$D/server.log" 2>&1 < /dev/null &
PID=$!
echo "$PID" > "$D/pid"
if [ -n "${IBM_PARENT_PID:-}" ]; then
  setsid bash -c "while kill -0 $IBM_PARENT_PID 2>/dev/null && kill -0 $PID 2>/dev/null; do sleep 1; done; kill $PID 2>/dev/null" \
    > /dev/null 2>&1 < /dev/null &
fi
for _ in $(seq 1 200); do
  if curl -s --cacert "$D/ca.pem" -o /dev/null "https://127.0.0.1:$((PORT + 1))/_peer/state"; then
    echo "ibm peer up: http://127.0.0.1:$PORT https://127.0.0.1:$((PORT + 1)) proxy 127.0.0.1:$((PORT + 2)) dir=$D" >&2
    echo "$PID"; exit 0
  fi
  kill -0 "$PID" 2>/dev/null || { echo "ibm peer died; see $D/server.log" >&2; tail -20 "$D/server.log" >&2; exit 1; }
  sleep 0.05
done
echo "ibm peer not answering after 10 s; see $D/server.log" >&2; exit 1
