# The measuring loop the side-by-side benches share; sourced, never run:
#
#   . "$(dirname "$0")/lib.sh"
#   BIN=…; RUNS=…; CHECK=0           # defaults (leave CHECK unset: no --check)
#   WARMUP=1                         # optional: warm-up runs of median (default 2)
#   bench_options HELP_RANGE "$@"    # --bin, --runs, [--check], -h (sed range of the header)
#   bench_binary                     # release build when missing, absolute path, hyperfine
#   WORK=$(mktemp -d …)              # median and rss write their scratch files here
#   x=$(median RUNS [--prepare CMD] COMMAND…)   # median wall ms, hyperfine -N, $WARMUP warm-ups
#   r=$(rss COMMAND…)                # largest peak RSS of 3 runs, MiB (/usr/bin/time -f %M)
#   ratio A B [DECIMALS]             # A/B, 1 decimal unless told
#   fail=0; verdict TEXT CONDITION   # PASS/FAIL line (CONDITION: a Python expression); FAIL sets fail=1
#
# The drop-in agents' benches (upstream's agent UP and fencekit's FK, each a
# command line without the action) also share:
#   status_on [--stderr] COMMAND…    # each must print just "Status: ON" (--stderr: stderr counts)
#   row WIDTH LABEL VALUE UNIT [NOTE]  # one aligned result row
#   off_on_rows WIDTH UP_LABEL FK_LABEL [OPTION…]  # off then on, median of 3 → $up_oo $fk_oo
#   rss_rows WIDTH UP_LABEL FK_LABEL # peak RSS of a status → $up_rss $fk_rss
#   agent_verdicts UP_MS FK_MS       # the targets (status >= 20x, RSS <= 1/4); exits, 1 on a miss with --check
#
# Timed commands must succeed: hyperfine -i times failures too, so each
# bench checks its commands' answers before timing them.

# shellcheck shell=bash

bench_options() { # help range ("2,15"), the script's arguments → BIN, RUNS, CHECK
  local help=$1; shift
  while [ $# -gt 0 ]; do
    case "$1" in
      --bin) BIN=$2; shift 2 ;;
      --runs) RUNS=$2; shift 2 ;;
      --check) [ -n "${CHECK+x}" ] || { echo "unknown option $1" >&2; exit 64; }; CHECK=1; shift ;;
      -h|--help) sed -n "${help}p" "$0"; exit 0 ;;
      *) echo "unknown option $1" >&2; exit 64 ;;
    esac
  done
}

bench_binary() { # the binary measured: built (release) when missing, made absolute; hyperfine present
  [ -x "$BIN" ] || (cd "$ROOT" && cargo build --release --quiet)
  BIN="$(cd "$(dirname "$BIN")" && pwd)/$(basename "$BIN")"
  command -v hyperfine >/dev/null || { echo "hyperfine is needed (apt-get install hyperfine)" >&2; exit 1; }
}

median() { # runs, [--prepare command], command… → median ms
  local runs=$1; shift
  local prep=()
  if [ "${1:-}" = --prepare ]; then prep=(--prepare "$2"); shift 2; fi
  hyperfine -N -i --style none --warmup "${WARMUP:-2}" --runs "$runs" "${prep[@]}" --export-json "$WORK/h.json" "$*" \
    >"$WORK/h.log" 2>&1 || { cat "$WORK/h.log" >&2; return 1; }
  python3 -c "import json;print('%.1f' % (json.load(open('$WORK/h.json'))['results'][0]['median']*1000))"
}

rss() { # command… → largest peak RSS of 3 runs, MiB
  local best=0 r
  for _ in 1 2 3; do
    r=$(/usr/bin/time -f %M "$@" 2>&1 >/dev/null | tail -1)
    [ "$r" -gt "$best" ] && best=$r
  done
  python3 -c "print('%.1f' % ($best/1024))"
}

ratio() { # a, b, [decimals] → a/b
  python3 -c "print('%.${3:-1}f' % ($1/$2))"
}

verdict() { # description, Python condition → PASS/FAIL line; a FAIL sets fail=1
  if python3 -c "import sys; sys.exit(0 if $2 else 1)"; then
    echo "PASS $1"
  else
    echo "FAIL $1"
    fail=1
  fi
}

status_on() { # [--stderr] command… → exits 1 unless each prints just "Status: ON"
  local err=/dev/null c out
  if [ "${1:-}" = --stderr ]; then err=/dev/stdout; shift; fi
  for c in "$@"; do
    out=$($c 2>"$err") || true
    [ "$out" = "Status: ON" ] || { echo "not 'Status: ON': $c" >&2; $c >&2; exit 1; }
  done
}

row() { # width, label, value, unit, [note] → one aligned row
  if [ -n "${5:-}" ]; then
    printf "%-${1}s %8s %s   %s\n" "$2" "$3" "$4" "$5"
  else
    printf "%-${1}s %8s %s\n" "$2" "$3" "$4"
  fi
}

off_on_rows() { # width, upstream's label, fencekit's label, [option…] → $up_oo, $fk_oo and their rows
  local w=$1 ul=$2 fl=$3; shift 3
  local x="${*:+ $*}"
  up_oo=$(median 3 "sh -c '$UP -o off$x >/dev/null; $UP -o on$x'")
  fk_oo=$(median 3 "sh -c '$FK -o off$x >/dev/null; $FK -o on$x'")
  row "$w" "$ul" "$up_oo" ms
  row "$w" "$fl" "$fk_oo" ms "$(ratio "$up_oo" "$fk_oo")x faster"
}

rss_rows() { # width, upstream's label, fencekit's label → $up_rss, $fk_rss and their rows
  echo "== peak RSS of a status (largest of 3)"
  # shellcheck disable=SC2086
  up_rss=$(rss $UP -o status)
  # shellcheck disable=SC2086
  fk_rss=$(rss $FK -o status)
  row "$1" "$2" "$up_rss" MiB
  row "$1" "$3" "$fk_rss" MiB "1/$(ratio "$up_rss" "$fk_rss") of upstream"
}

agent_verdicts() { # upstream's status ms, fencekit's → the targets' lines; exits (1 on a miss with --check)
  echo
  fail=0
  verdict "agent status >= 20x faster than upstream ($(ratio "$1" "$2")x)" "$1 / $2 >= 20"
  verdict "agent RSS <= 1/4 of upstream's (1/$(ratio "$up_rss" "$fk_rss"))" "$fk_rss * 4 <= $up_rss"
  [ "$CHECK" = 1 ] && exit "$fail"
  exit 0
}
