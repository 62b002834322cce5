#!/bin/bash
# Start-up cost and size of release binaries, side by side in one run
# (issue 17): `fence_ipmilan --version` and `fence_ipmilan -o metadata`
# (target: median <= 1 ms), and the CPU time (user + sys) of one agent
# `status` against a lab BMC (target: <= 1.5 ms). Neither of the first two
# may start the async runtime, TLS, or anything else it does not need.
#
#   bench/startup.sh                         target/release/fencekit (built if missing)
#   bench/startup.sh --bin NAME=PATH ...     compare binaries (e.g. before=… after=… slim=…)
#   bench/startup.sh --check                 exit 1 when the first binary misses a target
#   bench/startup.sh --runs N                hyperfine runs per command (default 300)
#
# Builds for comparison (see bench/README.md, "Start-up"):
#   cargo build --release                                   default (with the lab)
#   cargo build --release --no-default-features             slim, for images
# Needs hyperfine (tests/peers/setup.sh installs it); strace for the "no
# threads, no TLS" check (skipped when absent). The lab is started from the
# first binary that has one, on a loopback address of its own.
set -euo pipefail
cd "$(dirname "$0")/.."

bins=()
check=0
runs=300
while [ $# -gt 0 ]; do
  case "$1" in
    --bin) bins+=("$2"); shift 2 ;;
    --check) check=1; shift ;;
    --runs) runs=$2; shift 2 ;;
    *) echo "usage: $0 [--bin NAME=PATH]... [--check] [--runs N]" >&2; exit 64 ;;
  esac
done
if [ ${#bins[@]} -eq 0 ]; then
  if [ ! -x target/release/fencekit ]; then
    echo "building target/release/fencekit (cargo build --release --locked; minutes with fat LTO)" >&2
    cargo build --release --locked >&2
  fi
  bins=("release=target/release/fencekit")
fi
command -v hyperfine >/dev/null || { echo "hyperfine is not installed" >&2; exit 1; }

work=$(mktemp -d)
lab_pid=""
cleanup() {
  if [ -n "$lab_pid" ]; then kill "$lab_pid" 2>/dev/null || true; wait "$lab_pid" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT

# A lab BMC on an address of its own (the per-BMC lock is keyed by address).
addr="127.$((200 + $$ % 50)).$(($$ / 50 % 250)).1"
for b in "${bins[@]}"; do
  path=${b#*=}
  if "$path" lab --help >/dev/null 2>&1; then
    "$path" lab --nodes 1 --bind "$addr" --redfish none > "$work/lab.out" 2>"$work/lab.err" &
    lab_pid=$!
    break
  fi
done
[ -n "$lab_pid" ] || { echo "no binary with a lab (all built without the lab feature?)" >&2; exit 1; }
for _ in $(seq 100); do grep -q '^ready' "$work/lab.out" && break; sleep 0.05; done
port=$(sed -n 's/^node01 ipmi:\/\/[^:]*:\([0-9]*\).*/\1/p' "$work/lab.out")
[ -n "$port" ] || { echo "the lab did not start:" >&2; cat "$work/lab.err" >&2; exit 1; }

args=(-N --warmup 30 --runs "$runs" --export-json "$work/h.json")
# The floor: what starting any process costs on this machine.
args+=(--command-name "floor: /bin/true" "/bin/true")
for b in "${bins[@]}"; do
  name=${b%%=*}
  path=$(realpath "${b#*=}")
  mkdir -p "$work/$name"
  ln -s "$path" "$work/$name/fence_ipmilan"
  a="$work/$name/fence_ipmilan"
  args+=(--command-name "$name: fence_ipmilan --version" "$a --version")
  args+=(--command-name "$name: fence_ipmilan -o metadata" "$a -o metadata")
  args+=(--command-name "$name: fence_ipmilan -o status" \
    "$a --ip $addr --ipport $port --username admin --password lab --lanplus -o status")
done
hyperfine "${args[@]}" > "$work/hyperfine.txt"
cat "$work/hyperfine.txt"

sizes=""
for b in "${bins[@]}"; do
  sizes="$sizes ${b%%=*}=$(stat -c %s "$(realpath "${b#*=}")")"
done
python3 - "$work/h.json" "$check" $sizes <<'PY'
import json, sys
h = json.load(open(sys.argv[1]))
check = sys.argv[2] == "1"
sizes = dict(a.split("=", 1) for a in sys.argv[3:])
first = next(iter(sizes))
fail = []
print()
print(f"{'command':44} {'median ms':>9} {'mean ms':>8} {'cpu ms':>7}  target")
for r in h["results"]:
    name, what = r["command"].split(": ", 1)
    med = r["median"] * 1000
    if name == "floor":
        print(f"{r['command']:44} {med:9.3f} {r['mean']*1000:8.3f} {(r['user'] + r['system']) * 1000:7.3f}  (process start-up on this machine)")
        continue
    cpu = (r["user"] + r["system"]) * 1000
    if what.endswith("-o status"):
        target, ok = "cpu <= 1.5 ms", cpu <= 1.5
    else:
        target, ok = "median <= 1 ms", med <= 1.0
    mark = "" if ok else "  MISSED"
    print(f"{r['command']:44} {med:9.3f} {r['mean']*1000:8.3f} {cpu:7.3f}  {target}{mark}")
    if not ok and name == first:
        fail.append(r["command"])
base = {}
for r in h["results"]:
    name, what = r["command"].split(": ", 1)
    if name == "floor":
        continue
    base.setdefault(what, (name, r["median"], r["user"] + r["system"]))
if len(sizes) > 1:
    print()
    print("ratios to", first, "(median wall; cpu for status):")
    for r in h["results"]:
        name, what = r["command"].split(": ", 1)
        if name == "floor":
            continue
        b = base[what]
        if name == b[0]:
            continue
        if what.endswith("-o status"):
            print(f"  {r['command']:44} {(r['user'] + r['system']) / b[2]:.2f}x cpu")
        else:
            print(f"  {r['command']:44} {r['median'] / b[1]:.2f}x")
print()
for name, size in sizes.items():
    print(f"{'binary size: ' + name:44} {int(size) / 1048576:9.2f} MiB")
sys.exit(1 if (fail and check) else 0)
PY

# No runtime, no TLS: one thread (no clone of a worker), no certificate store
# read; for every binary (--check fails on the first one only).
if command -v strace >/dev/null; then
  first=1
  for b in "${bins[@]}"; do
    a="$work/${b%%=*}/fence_ipmilan"
    for cmd in "$a --version" "$a -o metadata"; do
      strace -f -qq -e trace=clone,clone3,openat -o "$work/strace" $cmd > /dev/null
      threads=$(grep -cE 'clone3?\(' "$work/strace" || true)
      certs=$(grep -E 'openat\(' "$work/strace" | grep -cE '"/etc/ssl|"/etc/pki|/certs/|\.pem"|\.crt"' || true)
      libs=$(grep -E 'openat\(' "$work/strace" | grep -v ENOENT | grep -oE '[^/"]+\.so(\.[0-9]+)*"' | tr -d '"' | sort -u | tr '\n' ' ' || true)
      echo "${cmd#"$work/"}: threads started: $threads, certificate files opened: $certs, shared libraries opened: ${libs:-none}"
      if [ "$check" = 1 ] && [ "$first" = 1 ] && [ "$threads$certs" != "00" ]; then
        echo "  MISSED: ${cmd#"$work/"} starts threads or reads certificates" >&2
        exit 1
      fi
      # The C library only: libgcc_s (build.rs) and libm (src/main.rs) each
      # cost tens of microseconds at every start.
      if [ "$check" = 1 ] && [ "$first" = 1 ] && [ "$libs" != "libc.so.6 " ]; then
        echo "  MISSED: ${cmd#"$work/"} loads more than the C library: $libs" >&2
        exit 1
      fi
    done
    first=0
  done
else
  echo "strace not installed: thread/TLS check skipped"
fi
