#!/bin/bash
# Start moto (the AWS service emulator) in server mode on 127.0.0.1.
#
#   moto_start.sh PORT [tls]
#     PORT  TCP port on 127.0.0.1
#     tls   serve HTTPS with a certificate for 127.0.0.1 from a private CA
#           ($PEERS_DIR/run/UID/moto-PORT/cert.pem, the CA: give it to clients as
#           AWS_CA_BUNDLE or curl --cacert)
#   env: MOTO_PARENT_PID  stop moto when this process is gone (a test suite
#                         that cannot stop what it started at exit)
#
# Prints moto's PID on stdout (last line). Everything for the instance lives
# in $PEERS_DIR/run/UID/moto-PORT/: server.log, pid, cert.pem/key.pem. moto keeps
# its state in memory: a fresh start is empty (tests/peers/moto_setup.py
# creates users, keys and a role and turns IAM authentication on).
set -euo pipefail
PORT="${1:?usage: moto_start.sh PORT [tls]}"
TLS="${2:-}"
VENV="${PEERS_DIR:-/tmp/fencekit-peers}/venv"
if [ ! -x "$VENV/bin/moto_server" ]; then
  echo "moto is not installed in $VENV (run tests/peers/setup.sh)" >&2; exit 1
fi
. "$(cd "$(dirname "$0")" && pwd)/run_dir.sh"
D="$PEER_RUN/moto-$PORT"
mkdir -p "$D"
if [ -f "$D/pid" ] && kill -0 "$(cat "$D/pid")" 2>/dev/null; then
  echo "already running on port $PORT: pid $(cat "$D/pid")" >&2; exit 1
fi
: > "$D/server.log"
args=(-H 127.0.0.1 -p "$PORT")
SCHEME=http
if [ "$TLS" = tls ]; then
  if [ ! -s "$D/server.pem" ]; then
    # A private CA (cert.pem, what clients trust) and the server's own
    # certificate signed by it, as a private endpoint would have.
    openssl req -x509 -newkey rsa:2048 -nodes -days 365 \
      -keyout "$D/ca.key" -out "$D/cert.pem" -subj "/CN=fencekit test CA" 2>/dev/null
    openssl req -newkey rsa:2048 -nodes -keyout "$D/key.pem" -out "$D/server.csr" \
      -subj "/CN=127.0.0.1" 2>/dev/null
    printf 'subjectAltName=IP:127.0.0.1,DNS:localhost\nbasicConstraints=CA:FALSE\n' > "$D/ext.cnf"
    openssl x509 -req -in "$D/server.csr" -CA "$D/cert.pem" -CAkey "$D/ca.key" \
      -CAcreateserial -days 365 -extfile "$D/ext.cnf" -out "$D/server.pem" 2>/dev/null
  fi
  args+=(-c "$D/server.pem" -k "$D/key.pem")
  SCHEME=https
fi
cd "$D"
MOTO_EC2_LOAD_DEFAULT_AMIS=false setsid "$VENV/bin/moto_server" "${args[@]}" >> "$D/server.log" 2>&1 < /dev/null &
PID=$!
echo "$PID" > "$D/pid"
if [ -n "${MOTO_PARENT_PID:-}" ]; then
  # A watcher of its own session: stops moto (by its PID) once the parent is gone.
  setsid bash -c "while kill -0 $MOTO_PARENT_PID 2>/dev/null && kill -0 $PID 2>/dev/null; do sleep 1; done; kill $PID 2>/dev/null" \
    > /dev/null 2>&1 < /dev/null &
fi
for _ in $(seq 1 200); do
  if curl -s --cacert "$D/cert.pem" -o /dev/null "$SCHEME://127.0.0.1:$PORT/moto-api/"; then
    echo "moto up: $SCHEME://127.0.0.1:$PORT dir=$D" >&2
    echo "$PID"; exit 0
  fi
  kill -0 "$PID" 2>/dev/null || { echo "moto died; see $D/server.log" >&2; tail -20 "$D/server.log" >&2; exit 1; }
  sleep 0.05
done
echo "moto not answering after 10 s; see $D/server.log" >&2; exit 1
