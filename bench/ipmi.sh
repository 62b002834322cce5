#!/usr/bin/env bash
# Side-by-side IPMI benchmark: fencekit vs ipmitool, ipmipower and upstream
# fence_ipmilan, in one run, against the same OpenIPMI ipmi_sim on loopback.
# See bench/README.md for what each row means and the targets (SPEC §10).
#
# usage: bench/ipmi.sh [--quick] [--bin PATH] [--runs N] [--no-agent] [--check]
#                      [--bmc ipmi_sim|lab]
#   --quick     few runs, for a smoke test (CI runs this on the debug binary)
#   --bmc       the BMC everyone talks to: OpenIPMI ipmi_sim (default; its
#               Get Chassis Status forks a shell hook, ~6 ms of the total) or
#               `fencekit lab` (answers in microseconds: client-bound figures)
#   --bin PATH  fencekit binary to measure (default: target/release/fencekit,
#               built with `cargo build --release` if missing or stale)
#   --runs N    timed runs per status command (default 30; off/reboot: 5)
#   --no-agent  skip the agent-mode rows (our fence_ipmilan)
#   --check     exit 1 when a target in SPEC §10 is missed
# env: PEERS_DIR (default /tmp/fencekit-peers): venv with python for udp_proxy
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
ROOT="$(cd "$HERE/.." && pwd)"
PEERS="$ROOT/tests/peers"
export PATH="$PATH:/usr/sbin:/sbin"

QUICK=0; BIN=""; RUNS=30; AGENT=1; CHECK=0; BMC=ipmi_sim
while [ $# -gt 0 ]; do
  case "$1" in
    --quick) QUICK=1; RUNS=3 ;;
    --bin) BIN="$2"; shift ;;
    --runs) RUNS="$2"; shift ;;
    --no-agent) AGENT=0 ;;
    --check) CHECK=1 ;;
    --bmc) BMC="$2"; shift ;;
    -h|--help) sed -n '2,18p' "$0"; exit 0 ;;
    *) echo "unknown option $1" >&2; exit 64 ;;
  esac
  shift
done
SLOW_RUNS=$(( QUICK ? 1 : 5 ))
WARMUP=$(( QUICK ? 1 : 3 ))

if [ -z "$BIN" ]; then
  BIN="$ROOT/target/release/fencekit"
  echo "building release binary (cargo build --release)..." >&2
  (cd "$ROOT" && cargo build --release --quiet)
fi
BIN="$(cd "$(dirname "$BIN")" && pwd)/$(basename "$BIN")"
[ -x "$BIN" ] || { echo "no fencekit binary at $BIN" >&2; exit 1; }

PY="${PEERS_DIR:-/tmp/fencekit-peers}/venv/bin/python"
[ -x "$PY" ] || PY=python3
have() { command -v "$1" >/dev/null 2>&1; }
case "$BMC" in
  ipmi_sim) have ipmi_sim || { echo "ipmi_sim not installed: run tests/peers/setup.sh" >&2; exit 1; } ;;
  lab) ;;
  *) echo "--bmc takes ipmi_sim or lab" >&2; exit 64 ;;
esac
have ipmitool || { echo "ipmitool not installed: run tests/peers/setup.sh" >&2; exit 1; }

WORK="$(mktemp -d /tmp/fencekit-bench.XXXXXX)"
PIDS=()
cleanup() {
  for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
  rm -rf "$WORK"
}
trap cleanup EXIT

free_port() {
  "$PY" -c 'import socket
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.bind(("127.0.0.1", 0))
print(s.getsockname()[1])'
}

# --- the BMC ---------------------------------------------------------------
if [ "$BMC" = ipmi_sim ]; then
  SIM_PORT="$(free_port)"
  export IPMI_SIM_RUNDIR="$WORK/sim"
  SIM_PID="$(sh "$PEERS/ipmi_sim_start.sh" 127.0.0.1 "$SIM_PORT" admin password 1 | tail -1)"
  PIDS+=("$SIM_PID")
  SIM_DIR="$IPMI_SIM_RUNDIR/127.0.0.1-$SIM_PORT"
  BMC_DESC="ipmi_sim $(dpkg-query -W -f='${Version}' openipmi 2>/dev/null)"
  # set the simulator's power file back to on (before each off/reboot run)
  PREP="sh -c 'echo 1 > $SIM_DIR/power'"
else
  "$BIN" lab --nodes 1 --bind 127.0.0.1 --password password > "$WORK/lab.out" 2>"$WORK/lab.err" &
  SIM_PID=$!; PIDS+=("$SIM_PID")
  for _ in $(seq 200); do grep -q '^ready' "$WORK/lab.out" && break; sleep 0.05; done
  SIM_PORT="$(grep -o 'ipmi://127.0.0.1:[0-9]*' "$WORK/lab.out" | head -1 | sed 's/.*://')"
  [ -n "$SIM_PORT" ] || { echo "fencekit lab did not start:" >&2; cat "$WORK/lab.err" >&2; exit 1; }
  BMC_DESC="fencekit lab ($BIN)"
  PREP="ipmitool -I lanplus -H 127.0.0.1 -p $SIM_PORT -U admin -P password -C 3 chassis power on"
fi
power_on() { sh -c "$PREP" >/dev/null 2>&1; }
export FENCEKIT_PASSWORD=password

# our agent front: a symlink named fence_ipmilan (argv[0] dispatch)
mkdir -p "$WORK/ours"
ln -s "$BIN" "$WORK/ours/fence_ipmilan"
OURS_AGENT="$WORK/ours/fence_ipmilan"

# --- commands (PORT is substituted: the sim, or a counting proxy) -----------
fk_status()   { echo "$BIN status ipmi://admin@127.0.0.1:$1 --cipher 3"; }
fk_reboot()   { echo "$BIN reboot ipmi://admin@127.0.0.1:$1 --cipher 3"; }
it_status()   { echo "ipmitool -I lanplus -H 127.0.0.1 -p $1 -U admin -P password -C 3 chassis power status"; }
ip_status()   { echo "ipmipower -D LAN_2_0 -h 127.0.0.1:$1 -u admin -p password -I 3 -W opensesspriv --stat"; }
fa_args()     { echo "--ip 127.0.0.1 --ipport $1 --username admin --password password --lanplus -C 3"; }
up_agent()    { echo "fence_ipmilan $(fa_args "$1") -o $2"; }
our_agent()   { echo "$OURS_AGENT $(fa_args "$1") -o $2"; }

# median wall time (ms) of a command over RUNS runs; prepare runs before each
median_ms() { # runs cmd [prepare]
  local runs="$1" cmd="$2" prep="${3:-}" json="$WORK/hf.json"
  local warm=$(( runs >= 10 ? WARMUP : (runs > 1 ? 1 : 0) ))
  if have hyperfine; then
    local extra=()
    [ -n "$prep" ] && extra=(--prepare "$prep")
    hyperfine -N -i --style none --warmup "$warm" --runs "$runs" \
      "${extra[@]}" --export-json "$json" "$cmd" >/dev/null 2>&1 || return 1
    "$PY" -c 'import json,sys; print("%.1f" % (json.load(open(sys.argv[1]))["results"][0]["median"]*1000))' "$json"
  else
    local i t0 t1 f="$WORK/times"; : > "$f"
    for ((i = 0; i < runs; i++)); do
      [ -n "$prep" ] && sh -c "$prep" >/dev/null 2>&1
      t0=$(date +%s%N); $cmd >/dev/null 2>&1 || true; t1=$(date +%s%N)
      echo $(( (t1 - t0) / 1000 )) >> "$f"
    done
    sort -n "$f" | awk '{a[NR]=$1} END {m=(NR%2)?a[(NR+1)/2]:(a[NR/2]+a[NR/2+1])/2; printf "%.1f\n", m/1000}'
  fi
}

# peak RSS (MiB): the largest over 3 runs (1 with --quick)
peak_rss() { # cmd [prepare]
  local cmd="$1" prep="${2:-}" max=0 kb i
  for ((i = 0; i < (QUICK ? 1 : 3); i++)); do
    [ -n "$prep" ] && sh -c "$prep" >/dev/null 2>&1
    /usr/bin/time -f %M -o "$WORK/rss" $cmd >/dev/null 2>&1 || true
    kb=$(tail -1 "$WORK/rss"); [ "$kb" -gt "$max" ] 2>/dev/null && max=$kb
  done
  awk -v k="$max" 'BEGIN { printf "%.1f\n", k / 1024 }'
}

# client datagrams of one run through a fresh counting proxy
datagrams() { # cmdfn [action]
  local fn="$1" act="${2:-}" port log pid n
  port="$(free_port)"; log="$WORK/proxy-$port.log"
  "$PY" "$PEERS/udp_proxy.py" --listen "127.0.0.1:$port" --target "127.0.0.1:$SIM_PORT" --log "$log" &
  pid=$!; PIDS+=("$pid")
  for _ in $(seq 100); do [ -s "$log" ] && break; sleep 0.02; done
  power_on
  $($fn "$port" $act) >/dev/null 2>&1 || true
  n=$(grep -c 'client#' "$log" || true)
  kill "$pid" 2>/dev/null || true
  echo "$n"
}

# --- measure -----------------------------------------------------------------
ROWS=()   # "op|tool|median|rss|datagrams"
NOTES=()
row() { ROWS+=("$1|$2|$3|$4|$5"); }

# runs cmd once; true when it exits 0 and stdout matches the regex, else
# prints the first line of its output (the reason) and returns false
check_works() { # cmd stdout-regex
  local out rc=0
  out="$($1 2>"$WORK/check.err")" || rc=$?
  if [ "$rc" = 0 ] && grep -Eq "$2" <<<"$out"; then return 0; fi
  echo "exit $rc: $(head -c 300 "$WORK/check.err" | head -1)${out:+ / stdout: ${out%%$'\n'*}}"
  return 1
}

echo "measuring against $BMC on 127.0.0.1:$SIM_PORT (runs: status $RUNS, off/reboot $SLOW_RUNS)..." >&2

# status
power_on
if why=$(check_works "$(fk_status "$SIM_PORT")" '.'); then
  row status "fencekit status --cipher 3" \
    "$(median_ms "$RUNS" "$(fk_status "$SIM_PORT")")" "$(peak_rss "$(fk_status "$SIM_PORT")")" "$(datagrams fk_status)"
else
  NOTES+=("fencekit status does not work yet: $why"); row status "fencekit status --cipher 3" - - -
fi
row status "ipmitool -C 3 chassis power status" \
  "$(median_ms "$RUNS" "$(it_status "$SIM_PORT")")" "$(peak_rss "$(it_status "$SIM_PORT")")" "$(datagrams it_status)"
if have ipmipower; then
  row status "ipmipower -I 3 -W opensesspriv --stat" \
    "$(median_ms "$RUNS" "$(ip_status "$SIM_PORT")")" "$(peak_rss "$(ip_status "$SIM_PORT")")" "$(datagrams ip_status)"
fi
if have fence_ipmilan; then
  export PYTHONWARNINGS=ignore
  row status "fence_ipmilan (upstream) -o status" \
    "$(median_ms "$(( QUICK ? RUNS : 10 ))" "$(up_agent "$SIM_PORT" status)")" \
    "$(peak_rss "$(up_agent "$SIM_PORT" status)")" "$(datagrams up_agent status)"
fi

AGENT_OK=0
if [ "$AGENT" = 1 ]; then
  power_on
  if why=$(check_works "$(our_agent "$SIM_PORT" status)" '^Status: ON$'); then
    AGENT_OK=1
    row status "fence_ipmilan (fencekit) -o status" \
      "$(median_ms "$RUNS" "$(our_agent "$SIM_PORT" status)")" \
      "$(peak_rss "$(our_agent "$SIM_PORT" status)")" "$(datagrams our_agent status)"
  else
    NOTES+=("agent mode skipped: our fence_ipmilan does not answer 'Status: ON' yet ($why)")
  fi
fi

# off / reboot, agent mode, same (default) power_wait on both sides
for op in off reboot; do
  if have fence_ipmilan; then
    row "$op" "fence_ipmilan (upstream) -o $op" \
      "$(median_ms "$SLOW_RUNS" "$(up_agent "$SIM_PORT" "$op")" "$PREP")" \
      "$(peak_rss "$(up_agent "$SIM_PORT" "$op")" "$PREP")" "$(datagrams up_agent "$op")"
  fi
  if [ "$AGENT_OK" = 1 ]; then
    row "$op" "fence_ipmilan (fencekit) -o $op" \
      "$(median_ms "$SLOW_RUNS" "$(our_agent "$SIM_PORT" "$op")" "$PREP")" \
      "$(peak_rss "$(our_agent "$SIM_PORT" "$op")" "$PREP")" "$(datagrams our_agent "$op")"
  fi
done

# native reboot with state polling (no blind sleeps)
power_on
if why=$(check_works "$(fk_reboot "$SIM_PORT")" '.'); then
  row reboot "fencekit reboot --cipher 3 (native)" \
    "$(median_ms "$RUNS" "$(fk_reboot "$SIM_PORT")" "$PREP")" \
    "$(peak_rss "$(fk_reboot "$SIM_PORT")" "$PREP")" "$(datagrams fk_reboot)"
else
  NOTES+=("fencekit reboot (native) failed: $why")
fi

# binary facts
VERSION_MS="$(median_ms "$RUNS" "$BIN --version")"
SIZE_MIB="$(awk -v b="$(stat -c %s "$BIN")" 'BEGIN { printf "%.1f", b / 1048576 }')"

# --- report ------------------------------------------------------------------
value() { # op tool-prefix field(3=median,4=rss,5=dgrams)
  local r
  for r in "${ROWS[@]}"; do
    IFS='|' read -r o t m s d <<<"$r"
    if [ "$o" = "$1" ] && [[ "$t" == "$2"* ]]; then
      case "$3" in 3) echo "$m" ;; 4) echo "$s" ;; 5) echo "$d" ;; esac
      return
    fi
  done
  echo -
}
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a+0 > 0 && b+0 > 0) printf "%.1fx", a / b; else printf "-" }'; }

FK_STATUS="$(value status "fencekit status" 3)"
echo
echo "fencekit IPMI bench — $(date -u +%FT%TZ) — $(nproc) cores — $("$BIN" --version 2>/dev/null | head -1)"
echo "binary: $BIN ($SIZE_MIB MiB); BMC: $BMC_DESC on loopback"
[ "$QUICK" = 1 ] && echo "QUICK MODE: few runs, figures are indicative only"
echo
printf '%-7s %-40s %11s %9s %10s %14s\n' op tool "median ms" "RSS MiB" datagrams "x fencekit"
printf '%-7s %-40s %11s %9s %10s %14s\n' ------- ---------------------------------------- ----------- --------- ---------- --------------
for r in "${ROWS[@]}"; do
  IFS='|' read -r o t m s d <<<"$r"
  base="$FK_STATUS"
  [ "$o" != status ] && base="$(value "$o" "fence_ipmilan (fencekit)" 3)"
  [[ "$t" == fencekit* || "$t" == "fence_ipmilan (fencekit)"* ]] && vs="" || vs="$(ratio "$m" "$base")"
  printf '%-7s %-40s %11s %9s %10s %14s\n' "$o" "$t" "$m" "$s" "$d" "$vs"
done
echo
echo "fencekit --version: $VERSION_MS ms median"
for n in "${NOTES[@]}"; do echo "note: $n"; done

# --- targets (SPEC §10) --------------------------------------------------------
echo
echo "targets:"
FAILS=0
verdict() { # description ok(1/0/-)
  case "$2" in
    1) echo "  PASS  $1" ;;
    0) echo "  FAIL  $1"; FAILS=$((FAILS + 1)) ;;
    *) echo "  n/a   $1" ;;
  esac
}
cmp() { awk -v a="$1" -v b="$2" -v op="$3" 'BEGIN {
  if (a == "-" || b == "-" || a == "" || b == "") { print "-"; exit }
  if (op == "<=") print (a + 0 <= b + 0) ? 1 : 0; else print (a + 0 < b + 0) ? 1 : 0 }'; }
mul() { awk -v a="$1" -v k="$2" 'BEGIN { if (a == "-" || a == "") print "-"; else printf "%.3f", a * k }'; }

AG_STATUS="$(value status "fence_ipmilan (fencekit)" 3)"
UP_STATUS="$(value status "fence_ipmilan (upstream)" 3)"
IT_STATUS="$(value status "ipmitool" 3)"
verdict "agent status >= 30x faster than upstream fence_ipmilan ($AG_STATUS vs $UP_STATUS ms)" \
  "$(cmp "$(mul "$AG_STATUS" 30)" "$UP_STATUS" "<=")"
verdict "native status not slower than ipmitool ($FK_STATUS vs $IT_STATUS ms)" "$(cmp "$FK_STATUS" "$IT_STATUS" "<=")"
FK_DG="$(value status "fencekit status" 5)"; IT_DG="$(value status "ipmitool" 5)"
IT_MAX=$(awk -v d="$IT_DG" 'BEGIN { if (d == "-" || d == "") print "-"; else print (d + 0 < 11) ? d : 11 }')
verdict "datagrams per status <= ipmitool's and <= 11 ($FK_DG vs $IT_DG)" "$(cmp "$FK_DG" "$IT_MAX" "<=")"
for op in off reboot; do
  ours="$(value "$op" "fence_ipmilan (fencekit)" 3)"; up="$(value "$op" "fence_ipmilan (upstream)" 3)"
  # both wait power_wait (2 s) after each switch: off 1x, reboot 2x
  waits=$([ "$op" = off ] && echo 2000 || echo 4000)
  over=$(awk -v a="$ours" -v w="$waits" 'BEGIN { if (a == "-" || a == "") print "-"; else printf "%.1f", a - w }')
  verdict "agent $op overhead beyond power_wait < 10 ms ($over ms; upstream $up ms)" "$(cmp "$over" 10 "<")"
done
NR="$(value reboot "fencekit reboot" 3)"
verdict "native reboot against an instantly-switching BMC < 100 ms ($NR ms)" "$(cmp "$NR" 100 "<")"
verdict "fencekit --version < 5 ms ($VERSION_MS ms)" "$(cmp "$VERSION_MS" 5 "<")"
verdict "binary < 15 MiB ($SIZE_MIB MiB)" "$(cmp "$SIZE_MIB" 15 "<")"

if [ "$CHECK" = 1 ] && [ "$FAILS" -gt 0 ]; then
  echo "$FAILS target(s) missed" >&2
  exit 1
fi
exit 0
