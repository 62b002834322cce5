#!/bin/bash
# Start the KubeVirt API peer (tests/peers/kubevirt_api.py) on 127.0.0.1.
#
#   kubevirt_start.sh PORT [GRACE_SECONDS] [BOOT_SECONDS]
#     PORT    TCP port on 127.0.0.1 (HTTPS)
#     GRACE   default terminationGracePeriodSeconds of new VMs (KubeVirt's is 180)
#     BOOT    seconds a new VMI takes from Pending to Running (default 1)
#   env: KUBEVIRT_PARENT_PID  stop the peer when this process is gone
#
# Prints the PID on stdout (last line). Everything lives in
# $PEERS_DIR/run/UID/kubevirt-PORT/: server.log, pid, ca.pem (the CA clients
# trust), server.pem/key.pem. The server starts empty: tests create tokens,
# nodes and VMs through POST /fencekit/control.
set -euo pipefail
PORT="${1:?usage: kubevirt_start.sh PORT [GRACE] [BOOT]}"
GRACE="${2:-180}"
BOOT="${3:-1}"
HERE="$(cd "$(dirname "$0")" && pwd)"
PY="${PEERS_DIR:-/tmp/fencekit-peers}/venv/bin/python"
[ -x "$PY" ] || PY="$(command -v python3)"
. "$(cd "$(dirname "$0")" && pwd)/run_dir.sh"
D="$PEER_RUN/kubevirt-$PORT"
mkdir -p "$D"
if [ -f "$D/pid" ] && kill -0 "$(cat "$D/pid")" 2>/dev/null; then
  echo "already running on port $PORT: pid $(cat "$D/pid")" >&2; exit 1
fi
if [ ! -s "$D/server.pem" ]; then
  # A private CA (ca.pem, what clients trust) and a server certificate for
  # 127.0.0.1 signed by it, as a cluster's API server has.
  openssl req -x509 -newkey rsa:2048 -nodes -days 365 \
    -keyout "$D/ca.key" -out "$D/ca.pem" -subj "/CN=fencekit test cluster CA" 2>/dev/null
  openssl req -newkey rsa:2048 -nodes -keyout "$D/key.pem" -out "$D/server.csr" \
    -subj "/CN=kube-apiserver" 2>/dev/null
  printf 'subjectAltName=IP:127.0.0.1,DNS:localhost,DNS:kubernetes.default.svc\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n' > "$D/ext.cnf"
  openssl x509 -req -in "$D/server.csr" -CA "$D/ca.pem" -CAkey "$D/ca.key" \
    -CAcreateserial -days 365 -extfile "$D/ext.cnf" -out "$D/server.pem" 2>/dev/null
fi
: > "$D/server.log"
setsid "$PY" "$HERE/kubevirt_api.py" --port "$PORT" --cert "$D/server.pem" --key "$D/key.pem" \
  --grace "$GRACE" --boot "$BOOT" >> "$D/server.log" 2>&1 < /dev/null &
PID=$!
echo "$PID" > "$D/pid"
if [ -n "${KUBEVIRT_PARENT_PID:-}" ]; then
  setsid bash -c "while kill -0 $KUBEVIRT_PARENT_PID 2>/dev/null && kill -0 $PID 2>/dev/null; do sleep 1; done; kill $PID 2>/dev/null" \
    > /dev/null 2>&1 < /dev/null &
fi
for _ in $(seq 1 200); do
  if curl -s --cacert "$D/ca.pem" -o /dev/null "https://127.0.0.1:$PORT/fencekit/state"; then
    echo "kubevirt peer up: https://127.0.0.1:$PORT dir=$D" >&2
    echo "$PID"; exit 0
  fi
  kill -0 "$PID" 2>/dev/null || { echo "kubevirt peer died; see $D/server.log" >&2; tail -20 "$D/server.log" >&2; exit 1; }
  sleep 0.05
done
echo "kubevirt peer not answering after 10 s; see $D/server.log" >&2; exit 1
