#!/usr/bin/env bash
# Side-by-side SSH benchmark (issue 5, SPEC §10), loopback only: fencekit
# (native and as fence_virsh) vs upstream fence_virsh vs plain
# `ssh … virsh domstate`, against one private sshd (tests/peers/sshd_start.sh).
#
#   bench/ssh.sh [--bin PATH] [--runs N]
#
# Rows: status (median wall) and reboot. Targets: status >= 2x faster than
# fence_virsh, within 1.2x of plain ssh (key auth; the plain ssh row uses the
# same key exchange fencekit negotiates, curve25519-sha256, as well as
# OpenSSH's default). Needs: root (the peer script creates a user), sshd,
# libvirt-clients, fence-agents, hyperfine.
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
ROOT="$(cd "$HERE/.." && pwd)"
BIN="$ROOT/target/release/fencekit"
RUNS=10
. "$HERE/lib.sh"
bench_options 2,12 "$@"
bench_binary
PORT=$(( 20000 + RANDOM % 20000 ))
D="${PEERS_DIR:-/tmp/fencekit-peers}/run/$(id -u)/sshd-$PORT"
WORK=$(mktemp -d /tmp/fencekit-ssh-bench.XXXXXX)
cleanup() { bash "$ROOT/tests/peers/sshd_stop.sh" "$PORT" >/dev/null 2>&1 || true; rm -rf "$WORK"; }
trap cleanup EXIT
bash "$ROOT/tests/peers/sshd_start.sh" "$PORT" >/dev/null 2>&1
ln -s "$BIN" "$WORK/fence_virsh"
KEY="$D/client_ed25519"; KH="$D/known_hosts"


UP="/usr/sbin/fence_virsh --ip 127.0.0.1 --ipport $PORT --username fencetest --identity-file $KEY --ssh-path $D/ssh-wrap --plug node1"
FK="$WORK/fence_virsh --ip 127.0.0.1 --ipport $PORT --username fencetest --identity-file $KEY --ssh-known-hosts $KH --plug node1"
NAT="$BIN status ssh://fencetest@127.0.0.1:$PORT/virsh/node1 -k $KEY --ssh-known-hosts $KH"
SSH="$D/ssh-wrap -i $KEY -o BatchMode=yes -p $PORT fencetest@127.0.0.1 virsh domstate node1"
SSH25519="$D/ssh-wrap -i $KEY -o BatchMode=yes -o KexAlgorithms=curve25519-sha256 -p $PORT fencetest@127.0.0.1 virsh domstate node1"

up=$(median "$RUNS" "$UP -o status"); fk=$(median "$RUNS" "$FK -o status"); nat=$(median "$RUNS" "$NAT")
ssh=$(median "$RUNS" "$SSH"); ssh2=$(median "$RUNS" "$SSH25519")
echo "== status of a running domain (key auth, median of $RUNS)"
printf '%-44s %8s ms\n' "upstream fence_virsh" "$up"
printf '%-44s %8s ms   %sx faster than upstream\n' "fencekit as fence_virsh" "$fk" "$(ratio "$up" "$fk" 2)"
printf '%-44s %8s ms   %sx of plain ssh (same kex)\n' "fencekit status (native)" "$nat" "$(ratio "$nat" "$ssh2" 2)"
printf '%-44s %8s ms\n' "ssh … virsh domstate (OpenSSH default kex)" "$ssh"
printf '%-44s %8s ms\n' "ssh … virsh domstate (curve25519-sha256)" "$ssh2"
echo
RUNS=3
upr=$(median "$RUNS" "$UP -o reboot"); fkr=$(median "$RUNS" "$FK -o reboot")
echo "== reboot (median of 3)"
printf '%-44s %8s ms\n' "upstream fence_virsh" "$upr"
printf '%-44s %8s ms   %sx faster\n' "fencekit as fence_virsh" "$fkr" "$(ratio "$upr" "$fkr" 2)"
