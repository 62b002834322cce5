#!/bin/bash
# Startup cost and size of the release binary (SPEC §10: `fencekit --version`
# < 5 ms, release binary < 15 MiB). Neither command may start the async
# runtime, TLS, or anything else it does not need.
#
#   bench/startup.sh                      builds target/release/fencekit if missing
#   bench/startup.sh --bin PATH           another binary (e.g. target/debug/fencekit)
#   bench/startup.sh --check              exit 1 when a target is missed
#   bench/startup.sh --runs N             hyperfine runs per command (default 200)
#
# Needs hyperfine (apt-get install -y hyperfine; tests/peers/setup.sh installs it)
# and strace for the "no threads, no TLS" check (skipped when absent).
set -euo pipefail
cd "$(dirname "$0")/.."

bin=target/release/fencekit
check=0
runs=200
while [ $# -gt 0 ]; do
  case "$1" in
    --bin) bin=$2; shift 2 ;;
    --check) check=1; shift ;;
    --runs) runs=$2; shift 2 ;;
    *) echo "usage: $0 [--bin PATH] [--check] [--runs N]" >&2; exit 64 ;;
  esac
done
if [ ! -x "$bin" ]; then
  echo "building $bin (cargo build --release --locked; a few minutes with fat LTO)" >&2
  cargo build --release --locked >&2
fi
command -v hyperfine >/dev/null || { echo "hyperfine is not installed" >&2; exit 1; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
ln -s "$(realpath "$bin")" "$work/fence_ipmilan"

hyperfine -N --warmup 20 --runs "$runs" --export-json "$work/h.json" \
  --command-name 'fencekit --version' "$bin --version" \
  --command-name 'fence_ipmilan -o metadata' "$work/fence_ipmilan -o metadata" \
  --command-name 'fencekit man fencekit-off' "$bin man fencekit-off" \
  > "$work/hyperfine.txt"
cat "$work/hyperfine.txt"

size=$(stat -c %s "$(realpath "$bin")")
python3 - "$work/h.json" "$size" "$check" <<'PY'
import json, sys
h = json.load(open(sys.argv[1]))
size, check = int(sys.argv[2]), sys.argv[3] == "1"
fail = False
print()
print(f"{'command':32} {'median ms':>10} {'mean ms':>9} {'max ms':>8}")
for r in h["results"]:
    med = r["median"] * 1000
    print(f"{r['command']:32} {med:10.2f} {r['mean']*1000:9.2f} {r['max']*1000:8.2f}")
    if r["command"] != "fencekit man fencekit-off" and med >= 5.0:
        fail = True
        print(f"  MISSED: {r['command']} median {med:.2f} ms >= 5 ms")
mib = size / 1048576
print(f"{'binary size':32} {mib:10.2f} MiB (target < 15 MiB)")
if mib >= 15:
    fail = True
    print("  MISSED: binary size")
sys.exit(1 if (fail and check) else 0)
PY

# No runtime, no TLS: one thread (no clone of a worker), no certificate store read.
if command -v strace >/dev/null; then
  for cmd in "$bin --version" "$work/fence_ipmilan -o metadata"; do
    strace -f -qq -e trace=clone,clone3,openat -o "$work/strace" $cmd > /dev/null
    threads=$(grep -cE 'clone3?\(' "$work/strace" || true)
    certs=$(grep -E 'openat\(' "$work/strace" | grep -cE '"/etc/ssl|"/etc/pki|/certs/|\.pem"|\.crt"' || true)
    echo "${cmd#"$work/"}: threads started: $threads, certificate files opened: $certs"
    if [ "$check" = 1 ] && [ "$threads$certs" != "00" ]; then
      echo "  MISSED: ${cmd#"$work/"} starts threads or reads certificates" >&2
      exit 1
    fi
  done
else
  echo "strace not installed: thread/TLS check skipped"
fi
