#!/bin/sh
# Builds fencekit's distribution packages with cargo's packaging tools:
#
#   OUT/fencekit_VERSION-1_ARCH.deb     cargo-deb           ([package.metadata.deb])
#   OUT/fencekit-VERSION-1.ARCH.rpm     cargo-generate-rpm  ([package.metadata.generate-rpm])
#
# usage: packaging/build.sh [--bin PATH] [--out DIR] [--fast]
#   --bin   the binary to package (default target/release/fencekit: build it
#           first with `cargo build --release --locked`; tests/packages.rs
#           packages the test build's debug binary)
#   --out   where the packages go (default target/packages)
#   --fast  quick compression (a fast xz level, gzip for the .rpm), for tests
# needs: cargo-deb 3.8.0 and cargo-generate-rpm 0.21.1 (`cargo install
# --locked`, as tests/peers/setup.sh does); objcopy (binutils), if present.
#
# The binary must answer to exactly the names packaging/agents lists
# (`fencekit agents`; the packages' scripts link those names): a binary of
# another version is refused. It is packaged without its debug sections.
set -eu
cd "$(dirname "$0")/.."
bin=target/release/fencekit
out=target/packages
fast=""
while [ $# -gt 0 ]; do
  case $1 in
    --bin) bin=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --fast) fast=1; shift ;;
    *) echo "usage: packaging/build.sh [--bin PATH] [--out DIR] [--fast]" >&2; exit 64 ;;
  esac
done
if [ ! -x "$bin" ]; then
  echo "packaging/build.sh: no binary at $bin; run 'cargo build --release --locked' first" >&2
  exit 1
fi
if ! "$bin" agents | cmp -s - packaging/agents; then
  echo "packaging/build.sh: $bin answers to other agent names than packaging/agents" \
    "(a binary of another version, or run FENCEKIT_REGENERATE=1 cargo test --test generated_cli)" >&2
  exit 1
fi
# The tools take the binary from TARGET_DIR/release/fencekit (the asset
# path target/release/fencekit, rewritten to their --target-dir): a staging
# directory of this run's own, beside the packages.
mkdir -p "$out"
stage=$(mktemp -d "$out/.stage.XXXXXX")
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage/release"
if command -v objcopy >/dev/null 2>&1; then
  objcopy --strip-debug "$bin" "$stage/release/fencekit"
else
  cp "$bin" "$stage/release/fencekit"
fi
chmod 755 "$stage/release/fencekit"
if [ -n "$fast" ]; then
  deb_opts="--fast" rpm_opts="--payload-compress gzip"
else
  deb_opts="" rpm_opts=""
fi
# shellcheck disable=SC2086
CARGO_TARGET_DIR=$stage cargo deb --quiet --no-build --no-strip $deb_opts --output "$out/"
# shellcheck disable=SC2086
cargo generate-rpm --target-dir "$stage" $rpm_opts --output "$out/"
ls -l "$out"
