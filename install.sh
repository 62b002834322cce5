#!/bin/sh
# Installs fencekit under a prefix:
#
#   PREFIX/bin/fencekit                         the binary
#   PREFIX/sbin/fence_ipmilan, fence_redfish, … symlinks to it (the agent names)
#   PREFIX/share/man/man1/fencekit*.1           native man pages
#   PREFIX/share/man/man8/fence_*.8             agent man pages
#   PREFIX/share/bash-completion/completions/fencekit
#   PREFIX/share/zsh/site-functions/_fencekit
#   PREFIX/share/fish/vendor_completions.d/fencekit.fish
#   PREFIX/share/doc/fencekit/                  README, docs, examples, CHANGELOG, LICENSE
#
# usage: ./install.sh [PREFIX]          (default /usr/local)
# env:   DESTDIR       staging root for packagers (files go to $DESTDIR$PREFIX)
#        FENCEKIT_BIN  the binary to install (default target/release/fencekit;
#                      build it first with `cargo build --release --locked`)
set -eu
cd "$(dirname "$0")"
prefix=${1:-/usr/local}
dest=${DESTDIR:-}$prefix
bin=${FENCEKIT_BIN:-target/release/fencekit}
if [ ! -x "$bin" ]; then
  echo "install.sh: no binary at $bin; run 'cargo build --release --locked' first" >&2
  exit 1
fi

install -d "$dest/bin" "$dest/sbin" "$dest/share/man/man1" "$dest/share/man/man8" \
  "$dest/share/bash-completion/completions" "$dest/share/zsh/site-functions" \
  "$dest/share/fish/vendor_completions.d" "$dest/share/doc/fencekit/docs" \
  "$dest/share/doc/fencekit/examples"
install -m 0755 "$bin" "$dest/bin/fencekit"

# One symlink per agent name; man/fence_*.8 is generated from agents/ and
# drift-tested, so it lists every name (main names and aliases).
for page in man/fence_*.8; do
  name=$(basename "$page" .8)
  ln -sf ../bin/fencekit "$dest/sbin/$name"
done

install -m 0644 man/fencekit*.1 "$dest/share/man/man1/"
install -m 0644 man/fence_*.8 "$dest/share/man/man8/"
install -m 0644 completions/fencekit.bash "$dest/share/bash-completion/completions/fencekit"
install -m 0644 completions/_fencekit "$dest/share/zsh/site-functions/_fencekit"
install -m 0644 completions/fencekit.fish "$dest/share/fish/vendor_completions.d/fencekit.fish"
install -m 0644 README.md CHANGELOG.md LICENSE "$dest/share/doc/fencekit/"
for f in docs/*.md; do
  [ "$f" = docs/design.md ] || install -m 0644 "$f" "$dest/share/doc/fencekit/docs/"
done
install -m 0644 examples/* "$dest/share/doc/fencekit/examples/"
echo "installed fencekit in $dest"
