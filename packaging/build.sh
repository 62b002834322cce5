#!/bin/sh
# Builds fencekit's distribution packages with cargo's packaging tools:
#
#   OUT/fencekit_VERSION-1_ARCH.deb     cargo-deb           ([package.metadata.deb])
#   OUT/fencekit-VERSION-1.ARCH.rpm     cargo-generate-rpm  ([package.metadata.generate-rpm])
#
# usage: packaging/build.sh [--bin PATH] [--out DIR]
#   --bin  the binary to package (default target/release/fencekit: build it
#          first with `cargo build --release --locked`; CI packages its debug
#          binary, see .ci/run)
#   --out  where the packages go (default target/packages)
# needs: cargo install --locked cargo-deb cargo-generate-rpm
#
# The binary must answer to exactly the names packaging/agents lists
# (`fencekit agents`; the packages' scripts link those names): a binary of
# another version is refused. It is packaged without its debug sections.
set -eu
cd "$(dirname "$0")/.."
bin=target/release/fencekit
out=target/packages
while [ $# -gt 0 ]; do
  case $1 in
    --bin) bin=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    *) echo "usage: packaging/build.sh [--bin PATH] [--out DIR]" >&2; exit 64 ;;
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
# path target/release/fencekit, rewritten to their --target-dir).
stage=target/packaging
rm -rf "$stage/release"
mkdir -p "$stage/release" "$out"
if command -v objcopy >/dev/null 2>&1; then
  objcopy --strip-debug "$bin" "$stage/release/fencekit"
else
  cp "$bin" "$stage/release/fencekit"
fi
chmod 755 "$stage/release/fencekit"
CARGO_TARGET_DIR=$stage cargo deb --no-build --no-strip --output "$out/"
cargo generate-rpm --target-dir "$stage" --output "$out/"
ls -l "$out"
