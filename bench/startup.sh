#!/bin/bash
# Start-up cost and size of release binaries, side by side in one run
# (issue 17): `fence_ipmilan --version` and `fence_ipmilan -o metadata`
# (target: median <= 1 ms), and the CPU time (user + sys) of one agent
# `status` against a lab BMC (target: <= 1.5 ms). Neither of the first two
# may start the async runtime, TLS, or anything else it does not need.
# Issue 34 adds: `--version` median <= 1.5x `/bin/true`'s (the median of
# seven paired rounds' ratios), the peak RSS of
# each command (target: `-o status` <= 5.5 MiB), the binary <= 12 MiB, and
# where a start's memory goes (with gdb: each mapping's resident size at
# the process's exit, grouped: the binary's code, its read-only data and
# relocation records, its relocated and writable data, heap and other
# anonymous memory, the C library and loader).
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

# The --version ratio from paired rounds: each round times /bin/true and every
# binary's --version back to back, and the ratio is taken within the round,
# so a drift of the machine between the long run above's floor and its
# --version (seen: the floor's median moving by 15% from one run to the
# next) does not enter it. Reported: the median of the rounds' ratios, and
# their spread.
rounds=7
for i in $(seq "$rounds"); do
  pair=(-N --warmup 20 --runs 200 --export-json "$work/round$i.json" --command-name "floor" /bin/true)
  for b in "${bins[@]}"; do
    pair+=(--command-name "${b%%=*}" "$work/${b%%=*}/fence_ipmilan --version")
  done
  hyperfine "${pair[@]}" > /dev/null
done

# Peak RSS (kernel's maxrss, /usr/bin/time -f %M): the largest of 5 runs.
rss_of() {
  local m=0 v
  for _ in 1 2 3 4 5; do
    /usr/bin/time -f %M -o "$work/rss" "$@" > /dev/null 2>&1 || true
    v=$(tail -1 "$work/rss")
    [ "$v" -gt "$m" ] 2>/dev/null && m=$v
  done
  echo "$m"
}
rss=""
if [ -x /usr/bin/time ]; then
  rss="floor=$(rss_of /bin/true)"
  for b in "${bins[@]}"; do
    name=${b%%=*}
    a="$work/$name/fence_ipmilan"
    rss="$rss $name:version=$(rss_of "$a" --version)"
    rss="$rss $name:metadata=$(rss_of "$a" -o metadata)"
    rss="$rss $name:status=$(rss_of "$a" --ip "$addr" --ipport "$port" --username admin --password lab --lanplus -o status)"
  done
else
  echo "/usr/bin/time not installed (Debian package time): peak RSS not measured"
fi

sizes=""
for b in "${bins[@]}"; do
  sizes="$sizes ${b%%=*}=$(stat -c %s "$(realpath "${b#*=}")")"
done
python3 - "$work/h.json" "$check" "$rss" "$rounds" $sizes <<'PY'
import json, statistics, sys
h = json.load(open(sys.argv[1]))
rounds = [json.load(open(f"{sys.argv[1].rsplit('/', 1)[0]}/round{i}.json"))["results"]
          for i in range(1, int(sys.argv[4]) + 1)]
del sys.argv[4]
check = sys.argv[2] == "1"
rss = dict(a.split("=", 1) for a in sys.argv[3].split())
sizes = dict(a.split("=", 1) for a in sys.argv[4:])
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
print(f"{'--version median / /bin/true median':44} {'ratio':>9}  target      rounds' ratios")
for name in sizes:
    each = sorted(
        next(r["median"] for r in rnd if r["command"] == name)
        / next(r["median"] for r in rnd if r["command"] == "floor")
        for rnd in rounds
    )
    ratio = statistics.median(each)
    ok = ratio <= 1.5
    spread = " ".join(f"{x:.2f}" for x in each)
    print(f"{name + f' (median of {len(each)} paired rounds)':44} {ratio:8.2f}x  <= 1.5x{'' if ok else '  MISSED'}  {spread}")
    if not ok and name == first:
        fail.append(f"{name}: fence_ipmilan --version (ratio to /bin/true)")
if rss:
    print()
    print(f"{'peak RSS (largest of 5 runs)':44} {'MiB':>9}  target")
    print(f"{'floor: /bin/true':44} {int(rss['floor']) / 1024:9.2f}")
    for name in sizes:
        for what in ("version", "metadata", "status"):
            kib = int(rss.get(f"{name}:{what}", 0))
            label = f"{name}: fence_ipmilan " + {"version": "--version", "metadata": "-o metadata", "status": "-o status"}[what]
            if what == "status":
                ok = kib <= 5.5 * 1024
                print(f"{label:44} {kib / 1024:9.2f}  <= 5.5 MiB{'' if ok else '  MISSED'}")
                if not ok and name == first:
                    fail.append(label + " (peak RSS)")
            else:
                print(f"{label:44} {kib / 1024:9.2f}")
print()
for name, size in sizes.items():
    ok = int(size) <= 12 * 1048576
    print(f"{'binary size: ' + name:44} {int(size) / 1048576:9.2f} MiB  <= 12 MiB{'' if ok else '  MISSED'}")
    if not ok and name == first:
        fail.append(f"binary size of {name}")
sys.exit(1 if (fail and check) else 0)
PY

# Where a start's memory goes: each mapping's resident size when the process
# exits (gdb stops it at exit_group), grouped. The binary's code and
# read-only data are file pages (the kernel maps 64 kB around each page a
# process touches), shared with every other process running the binary but
# counted in each one's RSS; relocated data and the heap are its own.
if command -v gdb >/dev/null; then
  for b in "${bins[@]}"; do
    name=${b%%=*}
    a="$work/$name/fence_ipmilan"
    real=$(realpath "${b#*=}")
    for cmd in "--version" "--ip $addr --ipport $port --username admin --password lab --lanplus -o status"; do
      # shellcheck disable=SC2086
      gdb -q -batch -ex 'set startup-with-shell off' -ex 'catch syscall exit_group' -ex run \
        -ex "python import gdb; open('$work/smaps', 'w').write(open('/proc/%d/smaps' % gdb.selected_inferior().pid).read())" \
        --args "$a" $cmd > /dev/null 2>&1 || true
      python3 - "$work/smaps" "$real" "$name: fence_ipmilan ${cmd##* }" <<'PY'
import re, sys
text, binary, label = open(sys.argv[1]).read(), sys.argv[2], sys.argv[3]
groups = {}
cur = None
for line in text.splitlines():
    m = re.match(r"^[0-9a-f]+-[0-9a-f]+ (\S+) \S+ \S+ \d+\s*(.*)$", line)
    if m:
        perms, path = m.group(1), m.group(2)
        if path == binary:
            cur = {"r-xp": "binary: code (.text)", "r--p": "binary: read-only data, relocation records",
                   "rw-p": "binary: writable data"}.get(perms, "binary: other")
        elif "libc.so" in path or "ld-linux" in path:
            cur = "C library and loader"
        elif path == "[stack]":
            cur = "stack"
        elif path in ("[vvar]", "[vdso]", "[vvar_vclock]"):
            cur = "vdso"
        else:
            cur = "heap and other anonymous"
        continue
    m = re.match(r"^Rss:\s+(\d+) kB", line)
    if m and cur:
        groups[cur] = groups.get(cur, 0) + int(m.group(1))
if not groups:
    print(f"{label}: no breakdown (gdb could not stop the process)")
    sys.exit(0)
total = sum(groups.values())
print(f"{label}: {total / 1024:.2f} MiB resident at exit, of which")
for k, v in sorted(groups.items(), key=lambda kv: -kv[1]):
    print(f"  {k:44} {v / 1024:6.2f} MiB")
PY
    done
  done
else
  echo "gdb not installed: no breakdown of the resident set"
fi

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
