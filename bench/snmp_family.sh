#!/usr/bin/env bash
# Side-by-side status benchmark for the SNMP family beyond APC and Eaton
# (issue 41), loopback only: fencekit as fence_ibmblade, fence_intelmodular,
# fence_ipdu, fence_emerson and fence_ifmib (a switch's IF-MIB ports) vs upstream's (Python + net-snmp's tools),
# each against a net-snmp snmpd serving that device's MIB subtree
# (tests/peers/snmpd_start.sh KIND 8), v2c.
#
#   bench/snmp_family.sh [--bin PATH] [--runs N] [--check]
#
# Per agent: median wall of `status` and peak RSS, and the ratios; with
# --check, a FAIL line (exit 1) unless ours is >= 10x faster and its RSS
# <= 1/4 of upstream's. Needs: snmpd, snmp, fence-agents, hyperfine, python3.
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
ROOT="$(cd "$HERE/.." && pwd)"
BIN="$ROOT/target/release/fencekit"
RUNS=20
CHECK=0
. "$HERE/lib.sh"
bench_options 2,12 "$@"
bench_binary
WORK=$(mktemp -d /tmp/fencekit-snmp-family.XXXXXX)
PORTS=()
cleanup() {
  for p in "${PORTS[@]}"; do bash "$ROOT/tests/peers/snmpd_stop.sh" "$p" >/dev/null 2>&1 || true; done
  rm -rf "$WORK"
}
trap cleanup EXIT
fail=0
printf '%-20s %9s %9s %9s %9s %8s %8s\n' "agent (status, v2c)" "up ms" "ours ms" "up MiB" "ours MiB" "faster" "RSS"
for kind in ibmblade intelmodular ipdu emerson ifmib; do
  agent=fence_$kind
  port=$(( 20000 + RANDOM % 20000 ))
  PORTS+=("$port")
  bash "$ROOT/tests/peers/snmpd_start.sh" "$port" "$kind" 8 >/dev/null
  ln -s "$BIN" "$WORK/$agent"
  plug=3; [ "$kind" = emerson ] && plug=1.1.3
  args="--ip 127.0.0.1 --ipport $port --snmp-version 2c --community private --plug $plug -o status"
  # Timed commands must succeed: check both answers first.
  for prog in "/usr/sbin/$agent" "$WORK/$agent"; do
    out=$($prog $args 2>&1) || { echo "$prog failed: $out" >&2; exit 1; }
    [ "$out" = "Status: ON" ] || { echo "$prog: $out" >&2; exit 1; }
  done
  up=$(median "$RUNS" "/usr/sbin/$agent $args"); upm=$(rss sh -c "/usr/sbin/$agent $args >/dev/null 2>&1")
  fk=$(median "$RUNS" "$WORK/$agent $args"); fkm=$(rss sh -c "$WORK/$agent $args >/dev/null 2>&1")
  speed=$(ratio "$up" "$fk"); mem=$(ratio "$fkm" "$upm" 2)
  printf '%-20s %9s %9s %9s %9s %7sx %8s\n' "$agent" "$up" "$fk" "$upm" "$fkm" "$speed" "$mem"
  if [ "$CHECK" = 1 ]; then
    verdict "$agent status >= 10x faster ($speed x)" "$speed >= 10"
    verdict "$agent RSS <= 1/4 of upstream's ($mem)" "$mem <= 0.25"
  fi
done
exit "$fail"
