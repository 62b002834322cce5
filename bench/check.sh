#!/usr/bin/env bash
# `fencekit check` over a fleet (issue 26), loopback only.
#
#   bench/check.sh [--bin PATH] [--nodes N] [--runs R] [--redfish]
#
# N `fencekit lab` BMCs (default 1000; IPMI only, or IPMI + HTTPS Redfish
# with --redfish, two levels per node). In one run, side by side on the
# same BMCs: `fencekit check --all` (a session per level: cipher suite,
# authentication, privilege, Get System GUID, status), the same against a
# recorded baseline (drift; each node's address is not probed: the lab has
# no hosts here), the same as OpenMetrics, `fencekit status --all`, and
# FreeIPMI's `ipmipower --stat` (one call naming every BMC as host:port; a
# session and a status read each, IPMI only). Wall and client CPU time
# (user+sys), medians of R runs (default 5), ratios to `check --all`.
# Target: `check --all` over 1,000 lab BMCs under 3 s.
# Needs: python3, ipmipower (tests/peers/setup.sh installs it).
set -euo pipefail
cd "$(dirname "$0")/.."

BIN=target/release/fencekit
NODES=1000
RUNS=5
REDFISH=none
while [ $# -gt 0 ]; do
  case "$1" in
    --bin) BIN=$2; shift 2 ;;
    --nodes) NODES=$2; shift 2 ;;
    --runs) RUNS=$2; shift 2 ;;
    --redfish) REDFISH=https; shift ;;
    -h|--help) sed -n '2,18p' "$0"; exit 0 ;;
    *) echo "unknown option $1" >&2; exit 64 ;;
  esac
done
[ -x "$BIN" ] || cargo build --release --locked
WORK=$(mktemp -d /tmp/fencekit-check-bench.XXXXXX)
LAB_PID=
cleanup() {
  [ -n "$LAB_PID" ] && kill "$LAB_PID" 2>/dev/null || true
  rm -rf "$WORK"
}
trap cleanup EXIT

# measure CMD… → "wall_s cpu_s" (medians over RUNS; cpu = the command's user+sys)
measure() {
  local i out walls=() cpus=()
  for i in $(seq "$RUNS"); do
    out=$(python3 - "$@" <<'PY'
import resource, subprocess, sys, time
t = time.monotonic()
subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
w = time.monotonic() - t
ru = resource.getrusage(resource.RUSAGE_CHILDREN)
print(f"{w:.3f} {ru.ru_utime + ru.ru_stime:.4f}")
PY
)
    walls+=("${out% *}")
    cpus+=("${out#* }")
  done
  printf '%s %s\n' "$(printf '%s\n' "${walls[@]}" | sort -n | sed -n "$(( (RUNS+1)/2 ))p")" \
    "$(printf '%s\n' "${cpus[@]}" | sort -n | sed -n "$(( (RUNS+1)/2 ))p")"
}

# Addresses of this run's own (127.60-99.x.y): no clash with the tests' labs.
BIND="127.$((60 + $$ % 40)).0.1"
"$BIN" lab --nodes "$NODES" --bind "$BIND" --redfish "$REDFISH" \
  --write-inventory "$WORK/lab.toml" > "$WORK/lab.out" 2>&1 &
LAB_PID=$!
for _ in $(seq 600); do grep -q '^ready' "$WORK/lab.out" 2>/dev/null && break; sleep 0.1; done
grep -q '^ready' "$WORK/lab.out" || { echo "lab did not start"; cat "$WORK/lab.out"; exit 1; }
HOSTS=$(sed -n 's|^node[0-9]* ipmi://\([0-9.]*:[0-9]*\).*|\1|p' "$WORK/lab.out" | paste -sd, -)
LEVELS=$NODES
[ "$REDFISH" = https ] && LEVELS=$((NODES * 2))

I=(-i "$WORK/lab.toml" --all)
"$BIN" check "${I[@]}" --baseline "$WORK/base.toml" --record > /dev/null 2>&1 \
  || { echo "check --record failed"; exit 1; }
"$BIN" check "${I[@]}" -o json > "$WORK/check.json" || { echo "check failed"; exit 1; }
python3 - "$WORK/check.json" "$LEVELS" <<'EOF'
import json, sys
r = json.load(open(sys.argv[1]))["checks"]
ok = sum(x["ok"] for x in r)
print(f"check: {ok}/{len(r)} levels ok")
assert ok == len(r) == int(sys.argv[2])
EOF

echo "== $NODES lab BMCs ($LEVELS levels), medians of $RUNS runs, $(nproc) cores"
read -r cw cc < <(measure "$BIN" check "${I[@]}")
read -r bw bc < <(measure "$BIN" check "${I[@]}" --baseline "$WORK/base.toml")
read -r mw mc < <(measure "$BIN" check "${I[@]}" --baseline "$WORK/base.toml" -o openmetrics)
read -r sw sc < <(measure "$BIN" status "${I[@]}" -o json)
printf '%-44s wall %6.3fs  cpu %6.3fs   (target: < 3 s)\n' "fencekit check --all" "$cw" "$cc"
row() { printf '%-44s wall %6.3fs  cpu %6.3fs   (%5.2fx the wall, %5.2fx the cpu of check)\n' \
  "$1" "$2" "$3" "$(echo "$2/$cw" | bc -l)" "$(echo "$3/$cc" | bc -l)"; }
row "fencekit check --all --baseline (drift)" "$bw" "$bc"
row "fencekit check --all --baseline -o openmetrics" "$mw" "$mc"
row "fencekit status --all" "$sw" "$sc"
if command -v ipmipower > /dev/null; then
  read -r pw pc < <(measure ipmipower -D LAN_2_0 -h "$HOSTS" -u admin -p lab -I 17 --stat)
  row "ipmipower --stat (one call, IPMI only)" "$pw" "$pc"
else
  echo "ipmipower not installed: no peer row"
fi
