#!/bin/bash
# Regenerates bench/startup.order: the functions a fence agent's start runs
# (`fence_ipmilan --version`, `-o metadata`, `-o status` against a lab BMC,
# then `fence_ilo -o status` against tests/peers/ribcl_peer.py: the TLS
# handshake's code; then `fence_ipdu -o status` and `fence_ifmib -o status`
# against net-snmp snmpd peers: the SNMP family's code; then
# `fence_ibm_vpc -o status` through tests/peers/ibm_api.py's proxy: the REST
# platforms' HTTP layer),
# in the order they first run, by their symbol names. build.rs hands the
# list to the linker (LLD's --symbol-ordering-file) for release builds, so
# that this code sits together in the binary instead of spread over all of
# its .text (bench/README.md, "Start-up": what a start's memory is).
#
#   bench/startup-order.sh   relink the release binary with a linker map
#                            (target/release/fencekit.map; minutes: fat LTO),
#                            trace it, write the list
#
# The names come from the map of the very link that is traced: a build with
# other profile settings (e.g. symbols kept) has other symbol hashes, whose
# names the release link would not find. Needs valgrind (callgrind). Names
# the code no longer has are skipped by the linker, so a stale list costs
# only locality; rerun after large changes.
set -euo pipefail
cd "$(dirname "$0")/.."
[ $# -eq 0 ] || { echo "usage: $0" >&2; exit 64; }
command -v valgrind >/dev/null || { echo "valgrind is not installed" >&2; exit 1; }
map=$PWD/target/release/fencekit.map
cargo rustc --release --locked --bin fencekit -- -C link-arg=-Wl,-Map="$map" \
  -C link-arg=-Wl,--no-demangle >&2
bin=$(realpath target/release/fencekit)
work=$(mktemp -d)
lab_pid=""
ilo_port=""
snmp_ports=()
ibm_port=""
cleanup() {
  if [ -n "$lab_pid" ]; then kill "$lab_pid" 2>/dev/null || true; wait "$lab_pid" 2>/dev/null || true; fi
  if [ -n "$ilo_port" ]; then bash tests/peers/hv_peer_stop.sh ribcl "$ilo_port" >/dev/null 2>&1 || true; fi
  for p in "${snmp_ports[@]}"; do bash tests/peers/snmpd_stop.sh "$p" >/dev/null 2>&1 || true; done
  if [ -n "$ibm_port" ]; then bash tests/peers/ibm_stop.sh "$ibm_port" >/dev/null 2>&1 || true; fi
  rm -rf "$work"
}
trap cleanup EXIT
addr="127.$((200 + $$ % 50)).$(($$ / 50 % 250)).2"
"$bin" lab --nodes 1 --bind "$addr" --redfish none > "$work/lab.out" 2>"$work/lab.err" &
lab_pid=$!
for _ in $(seq 100); do grep -q '^ready' "$work/lab.out" && break; sleep 0.05; done
port=$(sed -n 's/^node01 ipmi:\/\/[^:]*:\([0-9]*\).*/\1/p' "$work/lab.out")
[ -n "$port" ] || { echo "the lab did not start:" >&2; cat "$work/lab.err" >&2; exit 1; }
ln -s "$bin" "$work/fence_ipmilan"
a="$work/fence_ipmilan"
n=0
for cmd in "--version" "-o metadata" "--ip $addr --ipport $port --username admin --password lab --lanplus -o status"; do
  n=$((n + 1))
  # shellcheck disable=SC2086
  valgrind -q --tool=callgrind --demangle=no --callgrind-out-file="$work/cg.$n" "$a" $cmd > /dev/null
done
export PEERS_DIR=${PEERS_DIR:-/tmp/fencekit-peers}
ilo_port=$(( 20000 + RANDOM % 20000 ))
PEER_ARGS="--flavour ilo2 --power-ms 0" bash tests/peers/hv_peer_start.sh ribcl "$ilo_port" > /dev/null
ln -s "$bin" "$work/fence_ilo"
valgrind -q --tool=callgrind --demangle=no --callgrind-out-file="$work/cg.4" "$work/fence_ilo" \
  --ip 127.0.0.1 --ipport "$ilo_port" --ssl-insecure -l admin -p ilo-secret -o status > /dev/null
n=4
for kind in ipdu ifmib; do
  n=$((n + 1))
  p=$(( 20000 + RANDOM % 20000 ))
  snmp_ports+=("$p")
  bash tests/peers/snmpd_start.sh "$p" "$kind" 8 > /dev/null
  ln -s "$bin" "$work/fence_$kind"
  valgrind -q --tool=callgrind --demangle=no --callgrind-out-file="$work/cg.$n" "$work/fence_$kind" \
    --ip 127.0.0.1 --ipport "$p" --snmp-version 2c --community private --plug 3 -o status > /dev/null
done
# The REST platforms' path (the shared HTTP layer, a token from IAM and the
# API's connection opened meanwhile, both through a CONNECT proxy):
# fence_ibm_vpc -o status against tests/peers/ibm_api.py.
ibm_port=$(( 20000 + RANDOM % 20000 ))
IBM_PARENT_PID=$$ bash tests/peers/ibm_start.sh "$ibm_port" 0.2 > /dev/null
ibm_dir="$PEERS_DIR/run/$(id -u)/ibm-$ibm_port"
ibm_ctl() { curl -s --cacert "$ibm_dir/ca.pem" -X POST "https://127.0.0.1:$((ibm_port + 1))/_peer/control" -d "$1" > /dev/null; }
ibm_ctl '{"op":"key","key":"ApiKey-order-0123456789"}'
ibm_ctl '{"op":"vpc","id":"0717_order","name":"node1"}'
ln -s "$bin" "$work/fence_ibm_vpc"
n=$((n + 1))
valgrind -q --tool=callgrind --demangle=no --callgrind-out-file="$work/cg.$n" "$work/fence_ibm_vpc" \
  --apikey=ApiKey-order-0123456789 --region=us-south --plug=0717_order \
  --proxy="http://127.0.0.1:$((ibm_port + 2))" --ca-cert="$ibm_dir/ca.pem" -o status > /dev/null
python3 - "$bin" "$map" "$work"/cg.* > "$work/order" <<'PY'
import bisect, re, sys
binary, mapfile, files = sys.argv[1], sys.argv[2], sys.argv[3:]
# The map: every symbol's address (lld's -Map: VMA LMA SIZE ALIGN ... NAME).
syms = []
for line in open(mapfile, errors="replace"):
    f = line.split()
    if len(f) == 5 and re.fullmatch(r"[0-9a-f]+", f[0]) and not f[4].startswith((".", "/", "<")) \
            and ":(" not in f[4]:
        syms.append((int(f[0], 16), f[4]))
syms.sort()
keys = [a for a, _ in syms]
def name_at(addr):
    i = bisect.bisect_right(keys, addr) - 1
    return syms[i][1] if i >= 0 else None
def mangled(sym):
    # A map written with demangled names (without --no-demangle) gives Rust's
    # legacy names as a::b::hHASH: mangled again (_ZN1a1b17hHASHE); other
    # demangled names cannot be, and are left out.
    if sym and re.fullmatch(r"(?:[^:]+::)+h[0-9a-f]{16}", sym):
        return "_ZN" + "".join(f"{len(c)}{c}" for c in sym.split("::")) + "E"
    if sym and "::" in sym:
        return None
    return sym
out, seen = [], set()
for path in files:
    obs, fns = {}, {}
    ob = cob = None
    for line in open(path, errors="replace"):
        m = re.match(r"^(ob|cob|fn|cfn)=\((\d+)\)(?: (.*))?$", line.rstrip("\n"))
        if not m:
            continue
        kind, idx, name = m.groups()
        table = obs if kind in ("ob", "cob") else fns
        if name is not None:
            table[idx] = name
        name = table.get(idx)
        if kind == "ob":
            ob = cob = name
            continue
        if kind == "cob":
            cob = name
            continue
        owner = ob if kind == "fn" else cob
        cob = ob
        if owner != binary or not name or not name.startswith("0x"):
            continue
        # callgrind names a function by its address, with 'N for another context.
        sym = mangled(name_at(int(name.split("'")[0], 16)))
        if sym and sym not in seen:
            seen.add(sym)
            out.append(sym)
print("\n".join(out))
PY
[ -s "$work/order" ] || { echo "no function of $bin found in the traces" >&2; exit 1; }
cp "$work/order" bench/startup.order
echo "bench/startup.order: $(wc -l < bench/startup.order) functions" >&2
echo "rebuild (cargo build --release) to link with it" >&2
