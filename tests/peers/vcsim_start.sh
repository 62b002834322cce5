#!/bin/bash
# Start fencekit-vcsim, the vSphere (vim25 SOAP) peer built by setup.sh from
# tests/peers/vcsim/main.go (govmomi's simulator, a vCenter with 2 datacenters,
# hosts, clusters and VMs; see main.go for the inventory and the /fencekit/
# control API), on 127.0.0.1 over HTTPS with its own certificate.
#
#   vcsim_start.sh PORT        PORT 0: any free port
#   env: VCSIM_USER / VCSIM_PASS  credentials (default fence / vcsim-secret)
#        VCSIM_DC=N               datacenters (default 2)
#        VCSIM_WSDL=1             serve vSphere 4.1's WSDL (setup.sh fetches it)
#                                 and cut newer elements from the answers, for
#                                 upstream fence_vmware_soap (see main.go)
#
# Waits until it serves, prints its JSON line (url, host, port, user, password,
# cert, fingerprint, pid) on stdout. Everything lives in $PEERS_DIR/run/UID/vcsim-PORT/:
# cert.pem, key.pem, info.json, pid, vcsim.log.
set -euo pipefail
PORT="${1:?usage: vcsim_start.sh PORT}"
PEERS="${PEERS_DIR:-/tmp/fencekit-peers}"
BIN="$PEERS/bin/fencekit-vcsim"
[ -x "$BIN" ] || { echo "no $BIN: run tests/peers/setup.sh" >&2; exit 1; }
. "$(cd "$(dirname "$0")" && pwd)/run_dir.sh"
D="$PEER_RUN/vcsim-$PORT"
mkdir -p "$D"
if [ -f "$D/pid" ] && kill -0 "$(cat "$D/pid")" 2>/dev/null; then
  echo "already running (port $PORT): pid $(cat "$D/pid")" >&2; exit 1
fi
rm -f "$D/info.json"
wsdl=()
if [ "${VCSIM_WSDL:-0}" = 1 ]; then
  [ -s "$PEERS/vsphere-wsdl/vimService.wsdl" ] || { echo "no $PEERS/vsphere-wsdl: run tests/peers/setup.sh" >&2; exit 1; }
  wsdl=(-wsdl "$PEERS/vsphere-wsdl")
fi
"$BIN" "${wsdl[@]}" -listen "127.0.0.1:$PORT" -dir "$D" -info "$D/info.json" \
  -user "${VCSIM_USER:-fence}" -password "${VCSIM_PASS:-vcsim-secret}" \
  -dc "${VCSIM_DC:-2}" >/dev/null 2>"$D/vcsim.log" &
pid=$!
echo "$pid" > "$D/pid"
for _ in $(seq 1 100); do
  [ -s "$D/info.json" ] && break
  kill -0 "$pid" 2>/dev/null || { echo "fencekit-vcsim exited:" >&2; cat "$D/vcsim.log" >&2; rm -f "$D/pid"; exit 1; }
  sleep 0.1
done
[ -s "$D/info.json" ] || { echo "fencekit-vcsim did not start in 10 s" >&2; exit 1; }
cat "$D/info.json"
