#!/usr/bin/env bash
# Fleet benchmark (issue 6, SPEC §10), loopback only.
#
#   bench/fleet.sh [--bin PATH] [--lab-nodes N] [--sims M] [--runs R]
#
# Part 1: `fencekit status --inventory … --all` over N `fencekit lab` BMCs
#         (default 1000): wall time and peak RSS (target < 3 s, < 100 MiB).
# Part 2: the same status over M OpenIPMI ipmi_sim BMCs on 127.0.0.2…M+1
#         port 623 (default 200), side by side: fencekit (one call),
#         ipmipower (one hostrange call), ipmitool and fence_ipmilan under
#         `xargs -P16`: wall and client CPU (user+sys) time, medians of R runs.
#         Target: fencekit faster than ipmipower in wall and in CPU.
# Needs: /usr/bin/time, ipmi_sim, ipmipower, ipmitool, fence_ipmilan
# (tests/peers/setup.sh installs them). Run as root (ipmi_sim binds port 623).
set -euo pipefail
cd "$(dirname "$0")/.."

BIN=target/release/fencekit
LAB_NODES=1000
SIMS=200
RUNS=3
while [ $# -gt 0 ]; do
  case "$1" in
    --bin) BIN=$2; shift 2 ;;
    --lab-nodes) LAB_NODES=$2; shift 2 ;;
    --sims) SIMS=$2; shift 2 ;;
    --runs) RUNS=$2; shift 2 ;;
    -h|--help) sed -n '2,16p' "$0"; exit 0 ;;
    *) echo "unknown option $1" >&2; exit 64 ;;
  esac
done
[ -x "$BIN" ] || cargo build --release
WORK=$(mktemp -d /tmp/fencekit-fleet-bench.XXXXXX)
LAB_PID=
cleanup() {
  [ -n "$LAB_PID" ] && kill "$LAB_PID" 2>/dev/null || true
  if [ -d "$WORK/sims" ]; then
    for pidf in "$WORK"/sims/*/pid; do [ -f "$pidf" ] && kill "$(cat "$pidf")" 2>/dev/null || true; done
  fi
  rm -rf "$WORK"
}
trap cleanup EXIT

# measure CMD… → prints "wall_s cpu_s maxrss_kib" (medians over RUNS)
measure() {
  local i out walls=() cpus=() rsss=()
  for i in $(seq "$RUNS"); do
    out=$(python3 - "$@" <<'PY'
import resource, subprocess, sys, time
t = time.monotonic()
subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
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

echo "== part 1: fencekit status over $LAB_NODES lab BMCs"
"$BIN" lab --nodes "$LAB_NODES" --write-inventory "$WORK/lab.toml" > "$WORK/lab.out" 2>&1 &
LAB_PID=$!
for _ in $(seq 100); do grep -q '^ready' "$WORK/lab.out" 2>/dev/null && break; sleep 0.1; done
grep -q '^ready' "$WORK/lab.out" || { echo "lab did not start"; cat "$WORK/lab.out"; exit 1; }
"$BIN" status -i "$WORK/lab.toml" --all -o json --parallel 256 > "$WORK/check.json" || {
  echo "fleet status failed"; exit 1; }
read -r w c m < <(measure "$BIN" status -i "$WORK/lab.toml" --all -o json --parallel 256)
printf '%-42s wall %6.3fs  cpu %6.3fs  peak RSS %6.1f MiB   (targets: < 3 s, < 100 MiB)\n' \
  "fencekit status --all ($LAB_NODES lab BMCs)" "$w" "$c" "$(echo "$m/1024" | bc -l)"
kill "$LAB_PID"; LAB_PID=

echo
echo "== part 2: $SIMS ipmi_sim BMCs on 127.0.0.2-$((SIMS+1)):623"
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
row() { printf '%-34s wall %6.3fs  client cpu %7.4fs  (fencekit is %5.1fx faster in wall, %6.1fx in cpu)\n' \
  "$1" "$2" "$3" "$(echo "$2/$fw" | bc -l)" "$(echo "$3/$fc" | bc -l)"; }
printf '%-34s wall %6.3fs  client cpu %7.4fs\n' "fencekit (one call)" "$fw" "$fc"
row "ipmipower (one hostrange call)" "$pw_" "$pc"
row "ipmitool (xargs -P16)" "$tw" "$tc"
row "fence_ipmilan (xargs -P16)" "$aw" "$ac"
