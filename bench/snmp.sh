#!/usr/bin/env bash
# Side-by-side SNMP PDU benchmark (issue 15), loopback only: fencekit (as
# fence_apc_snmp and native) vs upstream fence_apc_snmp (Python + net-snmp's
# snmpget/snmpset/snmpwalk) vs a bare snmpget, against one net-snmp snmpd
# serving a simulated APC rPDU of 24 outlets (tests/peers/snmpd_start.sh).
#
#   bench/snmp.sh [--bin PATH] [--runs N]
#
# Rows: status (v2c and v3 authPriv SHA/AES; median wall, peak RSS),
# reboot (agent mode with upstream's timing, and native), and the status of
# 24 nodes through the one PDU: fencekit's fleet (one inventory, one
# process, one session at a time per PDU) vs 24 upstream fence_apc_snmp runs
# in a row. Needs: snmpd, snmp, fence-agents, hyperfine, python3.
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
ROOT="$(cd "$HERE/.." && pwd)"
BIN="$ROOT/target/release/fencekit"
RUNS=20
. "$HERE/lib.sh"
bench_options 2,14 "$@"
bench_binary
PORT=$(( 20000 + RANDOM % 20000 ))
D="${PEERS_DIR:-/tmp/fencekit-peers}/run/$(id -u)/snmpd-$PORT"
WORK=$(mktemp -d /tmp/fencekit-snmp-bench.XXXXXX)
cleanup() { bash "$ROOT/tests/peers/snmpd_stop.sh" "$PORT" >/dev/null 2>&1 || true; rm -rf "$WORK"; }
trap cleanup EXIT
bash "$ROOT/tests/peers/snmpd_start.sh" "$PORT" apc 24 >/dev/null
ln -s "$BIN" "$WORK/fence_apc_snmp"
ALL_ON="{\"outlets\": 24, \"on\": [$(seq -s, 1 24)], \"watts\": 120, \"refuse\": []}"
RESET="sh -c 'echo \"\$0\" > $D/state.json' '$ALL_ON'"
printf 'private\n' > "$WORK/community"
cat > "$WORK/inv.toml" <<INV
[pdu.A]
endpoint = "snmp://127.0.0.1:$PORT"
snmp_version = "2c"
community_file = "$WORK/community"

[[node]]
name = "node[01-24]"
  [[node.fence]]
  driver = "snmp"
  outlets = ["A:[1-24]"]
INV

rss_sh() { rss sh -c "$1 >/dev/null 2>&1"; } # a command line → peak RSS MiB (largest of 3)

A="--ip 127.0.0.1 --ipport $PORT --plug 7"
V3="--snmp-version 3 --username fenceSha --password authpass123 --snmp-auth-prot SHA --snmp-sec-level authPriv --snmp-priv-prot AES --snmp-priv-passwd privpass123"
UP=/usr/sbin/fence_apc_snmp
FK="$WORK/fence_apc_snmp"
NAT="$BIN status -i $WORK/inv.toml node07"
GET="snmpget -v2c -c private -m '' -Oqn 127.0.0.1:$PORT .1.3.6.1.4.1.318.1.1.12.3.5.1.1.4.7"

echo "== status, one outlet (median of $RUNS; peak RSS of 3 runs)"
printf '%-46s %9s %9s %s\n' "" "ms" "RSS MiB" ""
up=$(median "$RUNS" "$UP $A --snmp-version 2c -o status"); upm=$(rss_sh "$UP $A --snmp-version 2c -o status")
fk=$(median "$RUNS" "$FK $A --snmp-version 2c -o status"); fkm=$(rss_sh "$FK $A --snmp-version 2c -o status")
nat=$(median "$RUNS" "$NAT"); natm=$(rss_sh "$NAT")
get=$(median "$RUNS" "$GET")
printf '%-46s %9s %9s\n' "upstream fence_apc_snmp v2c" "$up" "$upm"
printf '%-46s %9s %9s   %sx faster than upstream\n' "fencekit as fence_apc_snmp v2c" "$fk" "$fkm" "$(ratio "$up" "$fk")"
printf '%-46s %9s %9s   %sx faster than upstream\n' "fencekit status (native, inventory)" "$nat" "$natm" "$(ratio "$up" "$nat")"
printf '%-46s %9s %9s\n' "snmpget alone (one Get, no sysObjectID read)" "$get" "-"
up3=$(median "$RUNS" "$UP $A $V3 -o status"); fk3=$(median "$RUNS" "$FK $A $V3 -o status")
up3m=$(rss_sh "$UP $A $V3 -o status"); fk3m=$(rss_sh "$FK $A $V3 -o status")
printf '%-46s %9s %9s\n' "upstream fence_apc_snmp v3 authPriv SHA/AES" "$up3" "$up3m"
printf '%-46s %9s %9s   %sx faster than upstream\n' "fencekit as fence_apc_snmp v3 authPriv" "$fk3" "$fk3m" "$(ratio "$up3" "$fk3")"
echo
RUNS=5
echo "== reboot, one outlet (median of $RUNS, outlet set back on before each run)"
upr=$(median "$RUNS" --prepare "$RESET" "$UP $A --snmp-version 2c -o reboot")
fkr=$(median "$RUNS" --prepare "$RESET" "$FK $A --snmp-version 2c -o reboot")
natr=$(median "$RUNS" --prepare "$RESET" "$BIN reboot -i $WORK/inv.toml node07")
printf '%-46s %9s ms\n' "upstream fence_apc_snmp (stonith-status-sleep 1)" "$upr"
printf '%-46s %9s ms   %sx faster (same timing options)\n' "fencekit as fence_apc_snmp" "$fkr" "$(ratio "$upr" "$fkr")"
printf '%-46s %9s ms   %sx faster (state polling)\n' "fencekit reboot (native)" "$natr" "$(ratio "$upr" "$natr")"
echo
RUNS=3
echo "== status of 24 nodes through one PDU (median of $RUNS)"
loop="sh -c 'for i in \$(seq 1 24); do $UP --ip 127.0.0.1 --ipport $PORT --snmp-version 2c --plug \$i -o status >/dev/null || true; done'"
upf=$(median "$RUNS" "$loop")
fkf=$(median "$RUNS" "$BIN status -i $WORK/inv.toml --all")
fkfm=$(rss_sh "$BIN status -i $WORK/inv.toml --all")
printf '%-46s %9s ms\n' "24 x upstream fence_apc_snmp" "$upf"
printf '%-46s %9s ms   %sx faster, peak RSS %s MiB\n' "fencekit status --all (one PDU session at a time)" "$fkf" "$(ratio "$upf" "$fkf")" "$fkfm"
