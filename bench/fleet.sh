#!/usr/bin/env bash
# Fleet benchmark (issues 6 and 22, SPEC §10), loopback only.
#
#   bench/fleet.sh [--bin PATH] [--plan-nodes P] [--lab-nodes N] [--sims M]
#                  [--runs R] [--no-sims] [--check]
#
# Part 1: planning. `fencekit status --all --dry-run` of a P-node inventory
#         (default 100,000), written two ways: one [[node]] with ranges, and
#         one [[node]] per node as `fencekit lab --write-inventory` writes
#         them (IPMI + Redfish with a CA file each). Wall, CPU, peak RSS, and
#         memory per node (above a one-node inventory's run).
#         Target: < 1 s and < 200 MiB.
# Part 2: `fencekit status --all -o json --parallel 256` over N `fencekit lab`
#         BMCs (default 10,000; the lab runs in its own process, the client
#         is measured): wall, CPU, peak RSS, memory per node.
#         Target: < 3 s and < 150 MiB.
# Part 3: the same status over M OpenIPMI ipmi_sim BMCs on 127.0.0.2…M+1
#         port 623 (default 200), side by side: fencekit (one call),
#         ipmipower (one hostrange call), ipmitool and fence_ipmilan under
#         `xargs -P16`: wall and client CPU (user+sys) time.
#         Target: fencekit faster than ipmipower in wall and in CPU.
# Medians of R runs (default 3) for every figure.
# --check: exit 1 when a target of parts 1-2 is missed.
# Needs: python3; for part 3 ipmi_sim, ipmipower, ipmitool, fence_ipmilan
# (tests/peers/setup.sh installs them) and root (ipmi_sim binds port 623).
set -euo pipefail
cd "$(dirname "$0")/.."

BIN=target/release/fencekit
PLAN_NODES=100000
LAB_NODES=10000
SIMS=200
RUNS=3
SIMS_TOO=1
CHECK=0
while [ $# -gt 0 ]; do
  case "$1" in
    --bin) BIN=$2; shift 2 ;;
    --plan-nodes) PLAN_NODES=$2; shift 2 ;;
    --lab-nodes) LAB_NODES=$2; shift 2 ;;
    --sims) SIMS=$2; shift 2 ;;
    --runs) RUNS=$2; shift 2 ;;
    --no-sims) SIMS_TOO=0; shift ;;
    --check) CHECK=1; shift ;;
    -h|--help) sed -n '2,26p' "$0"; exit 0 ;;
    *) echo "unknown option $1" >&2; exit 64 ;;
  esac
done
[ -x "$BIN" ] || cargo build --release
WORK=$(mktemp -d /tmp/fencekit-fleet-bench.XXXXXX)
LAB_PID=
cleanup() {
  if [ -n "$LAB_PID" ]; then kill "$LAB_PID" 2>/dev/null || true; fi
  if [ -d "$WORK/sims" ]; then
    for pidf in "$WORK"/sims/*/pid; do [ -f "$pidf" ] && kill "$(cat "$pidf")" 2>/dev/null || true; done
  fi
  rm -rf "$WORK"
}
trap cleanup EXIT
MISSED=0

# measure CMD… → prints "wall_s cpu_s maxrss_kib" (medians over RUNS;
# stdout of CMD to /dev/null, its stderr to $WORK/stderr)
measure() {
  local i out walls=() cpus=() rsss=()
  for i in $(seq "$RUNS"); do
    out=$(python3 - "$WORK/stderr" "$@" <<'PY'
import resource, subprocess, sys, time
t = time.monotonic()
with open(sys.argv[1], "w") as err:
    subprocess.run(sys.argv[2:], stdout=subprocess.DEVNULL, stderr=err)
w = time.monotonic() - t
ru = resource.getrusage(resource.RUSAGE_CHILDREN)
print(f"{w:.3f} {ru.ru_utime:.4f} {ru.ru_stime:.4f} {ru.ru_maxrss}")
PY
)
    walls+=("$(echo "$out" | awk '{print $1}')")
    cpus+=("$(echo "$out" | awk '{printf "%.4f", $2+$3}')")
    rsss+=("$(echo "$out" | awk '{print $4}')")
  done
  printf '%s %s %s\n' "$(printf '%s\n' "${walls[@]}" | sort -n | sed -n "$(( (RUNS+1)/2 ))p")" \
    "$(printf '%s\n' "${cpus[@]}" | sort -n | sed -n "$(( (RUNS+1)/2 ))p")" \
    "$(printf '%s\n' "${rsss[@]}" | sort -n | sed -n "$(( (RUNS+1)/2 ))p")"
}

# row LABEL WALL CPU RSS_KIB BASE_RSS_KIB NODES MAX_S MAX_MIB: one figure
# against its target (a miss is counted); memory per node is the peak RSS
# above that of the same command on one node, divided by the nodes.
row() {
  local v=PASS
  if ! awk -v w="$2" -v m="$4" -v W="$7" -v M="$8" 'BEGIN { exit !(w < W && m / 1024 < M) }'; then
    v=FAIL
    MISSED=$((MISSED + 1))
  fi
  printf '%-46s wall %6.3fs  cpu %6.3fs  peak RSS %6.1f MiB  %5.0f B/node  (< %s s, < %s MiB: %s)\n' \
    "$1" "$2" "$3" "$(echo "$4/1024" | bc -l)" "$(echo "($4-$5)*1024/$6" | bc -l)" "$7" "$8" "$v"
}

echo "fencekit $("$BIN" --version | head -1); $(nproc) cores; load $(cut -d' ' -f1-3 /proc/loadavg); $RUNS runs, medians"
echo
echo "== part 1: planning $PLAN_NODES nodes (status --all --dry-run)"
echo secret > "$WORK/pw"
python3 - "$WORK" "$PLAN_NODES" <<'PY'
import sys
work, n = sys.argv[1], int(sys.argv[2])
w = len(str(n))
head = f'[defaults]\nusername = "admin"\npassword_file = "{work}/pw"\n'
with open(f"{work}/plan-ranges.toml", "w") as f:
    r = f"[{1:0{w}d}-{n:0{w}d}]"
    f.write(head + f'\n[[node]]\nname = "node{r}"\naddress = "node{r}.example"\n'
            f'  [[node.fence]]\n  endpoint = "ipmi://bmc{r}.example"\n'
            f'  [[node.fence]]\n  endpoint = "redfish://bmc{r}.example/redfish/v1/Systems/1"\n'
            f'  ca_cert = "{work}/bmc-ca.pem"\n')
with open(f"{work}/plan-nodes.toml", "w") as f:
    f.write("# as `fencekit lab --write-inventory` writes them\n" + head)
    for i in range(n):
        name, a = f"node{i + 1:0{w}d}", f"10.{(i >> 16) & 255}.{(i >> 8) & 255}.{i & 255}"
        f.write(f'\n[[node]]\nname = "{name}"\n  [[node.fence]]\n  endpoint = "ipmi://{a}:623"\n'
                f'  [[node.fence]]\n  endpoint = "redfish://{a}:443/redfish/v1/Systems/1"\n'
                f'  ca_cert = "{work}/certs/{name}.pem"\n')
with open(f"{work}/plan-one.toml", "w") as f:
    f.write(head + '\n[[node]]\nname = "node1"\n  [[node.fence]]\n  endpoint = "ipmi://10.0.0.1:623"\n'
            '  [[node.fence]]\n  endpoint = "redfish://10.0.0.1:443/redfish/v1/Systems/1"\n')
PY
for f in plan-ranges plan-nodes; do
  "$BIN" status -i "$WORK/$f.toml" --all --dry-run > "$WORK/$f.out" || { echo "the plan of $f.toml failed"; exit 1; }
  got=$(grep -c '  level 1  ' "$WORK/$f.out")
  [ "$got" = "$PLAN_NODES" ] || { echo "$f.toml: $got nodes planned, not $PLAN_NODES"; exit 1; }
done
read -r _ _ base < <(measure "$BIN" status -i "$WORK/plan-one.toml" --all --dry-run)
read -r w c m < <(measure "$BIN" status -i "$WORK/plan-ranges.toml" --all --dry-run)
row "one [[node]] with ranges ($(du -h "$WORK/plan-ranges.toml" | cut -f1)B)" "$w" "$c" "$m" "$base" "$PLAN_NODES" 1 200
read -r w c m < <(measure "$BIN" status -i "$WORK/plan-nodes.toml" --all --dry-run)
row "one [[node]] per node ($(du -h "$WORK/plan-nodes.toml" | cut -f1)B)" "$w" "$c" "$m" "$base" "$PLAN_NODES" 1 200

echo
echo "== part 2: fencekit status --all over $LAB_NODES lab BMCs (the lab in its own process)"
# IPMI and Redfish take two sockets per BMC; where the hard limit on open
# files cannot hold them, the lab serves IPMI only (status reads level 1,
# IPMI, either way).
LAB_ARGS=(--nodes "$LAB_NODES")
hard=$(ulimit -Hn)
if [ "$hard" != unlimited ] && [ "$hard" -lt $((LAB_NODES * 2 + 1024)) ]; then
  LAB_ARGS+=(--redfish none)
  echo "(the hard limit on open files is $hard: the lab serves IPMI only, --redfish none)"
fi
"$BIN" lab "${LAB_ARGS[@]}" --write-inventory "$WORK/lab.toml" > "$WORK/lab.out" 2>&1 &
LAB_PID=$!
for _ in $(seq 600); do grep -q '^ready' "$WORK/lab.out" 2>/dev/null && break; sleep 0.1; done
grep -q '^ready' "$WORK/lab.out" || { echo "lab did not start"; tail -5 "$WORK/lab.out"; exit 1; }
"$BIN" status -i "$WORK/lab.toml" --all -o json --parallel 256 > "$WORK/check.json" || {
  echo "fleet status failed"; exit 1; }
python3 - "$WORK/check.json" "$LAB_NODES" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))["results"]
ok = sum(x["ok"] for x in r)
assert ok == int(sys.argv[2]) == len(r), f"{ok}/{len(r)} statuses ok"
PY
# The same inventory with its first node only: the one-node baseline.
python3 - "$WORK/lab.toml" "$WORK/lab-one.toml" <<'PY'
import sys
parts = open(sys.argv[1]).read().split("\n[[node]]")
open(sys.argv[2], "w").write("\n[[node]]".join(parts[:2]))
PY
read -r _ _ base < <(measure "$BIN" status -i "$WORK/lab-one.toml" --all -o json)
read -r w c m < <(measure "$BIN" status -i "$WORK/lab.toml" --all -o json --parallel 256)
row "status --all, $LAB_NODES BMCs, -o json" "$w" "$c" "$m" "$base" "$LAB_NODES" 3 150
read -r w c m < <(measure "$BIN" status -i "$WORK/lab.toml" --all --parallel 256)
row "status --all, $LAB_NODES BMCs, table" "$w" "$c" "$m" "$base" "$LAB_NODES" 3 150
kill "$LAB_PID"; wait "$LAB_PID" 2>/dev/null || true; LAB_PID=

if [ "$SIMS_TOO" = 1 ]; then
echo
echo "== part 3: $SIMS ipmi_sim BMCs on 127.0.0.2-$((SIMS+1)):623"
mkdir -p "$WORK/sims"
for i in $(seq 2 $((SIMS+1))); do
  IPMI_SIM_RUNDIR="$WORK/sims" sh tests/peers/ipmi_sim_start.sh "127.0.0.$i" 623 admin password 1 >/dev/null
done
echo password > "$WORK/pw"
{
  echo "[defaults]"; echo 'username = "admin"'; echo "password_file = \"$WORK/pw\""; echo "cipher = 3"
  echo "[[node]]"; echo "name = \"sim[2-$((SIMS+1))]\""
  echo "[[node.fence]]"; echo "endpoint = \"ipmi://127.0.0.[2-$((SIMS+1))]:623\""
} > "$WORK/sims.toml"
"$BIN" status -i "$WORK/sims.toml" --all -o json > "$WORK/sims.json" || { echo "fencekit failed on the sims"; exit 1; }
python3 - "$WORK/sims.json" "$SIMS" <<'EOF'
import json, sys
r = json.load(open(sys.argv[1]))["results"]
ok = sum(x["ok"] for x in r)
print(f"fencekit: {ok}/{len(r)} statuses ok")
assert ok == int(sys.argv[2])
EOF
HOSTS=$(seq 2 $((SIMS+1)) | sed 's/^/127.0.0./')
read -r fw fc fm < <(measure "$BIN" status -i "$WORK/sims.toml" --all -o json)
read -r pw_ pc pm < <(measure ipmipower -D LAN_2_0 -h "127.0.0.[2-$((SIMS+1))]" -u admin -p password -I 3 -W opensesspriv --stat)
read -r tw tc tm < <(measure sh -c "echo '$HOSTS' | xargs -P16 -I{} ipmitool -I lanplus -C 3 -H {} -U admin -P password chassis power status")
read -r aw ac am < <(measure sh -c "echo '$HOSTS' | xargs -P16 -I{} fence_ipmilan --ip {} --username admin --password password --lanplus -C 3 -o status")
cmp_row() { printf '%-34s wall %6.3fs  client cpu %7.4fs  (fencekit is %5.1fx faster in wall, %6.1fx in cpu)\n' \
  "$1" "$2" "$3" "$(echo "$2/$fw" | bc -l)" "$(echo "$3/$fc" | bc -l)"; }
printf '%-34s wall %6.3fs  client cpu %7.4fs\n' "fencekit (one call)" "$fw" "$fc"
cmp_row "ipmipower (one hostrange call)" "$pw_" "$pc"
cmp_row "ipmitool (xargs -P16)" "$tw" "$tc"
cmp_row "fence_ipmilan (xargs -P16)" "$aw" "$ac"
fi

echo
if [ "$MISSED" -gt 0 ]; then
  echo "$MISSED target(s) of parts 1-2 missed"
  [ "$CHECK" = 1 ] && exit 1
else
  echo "all targets of parts 1-2 met"
fi
