#!/bin/sh
# Sourced by the peers' start and stop scripts. Sets PEER_RUN, this user's
# own directory for the peers' run state: $PEERS_DIR/run/UID (created 0700).
# Run state is never shared between users (a directory left by root's run
# must not stop an ordinary user's, nor the other way round); the installed
# peers ($PEERS_DIR/venv, $PEERS_DIR/bin, ...) stay shared, read-only.
# $PEERS_DIR/run itself is sticky and open to all (1777), like /tmp.
_peers="${PEERS_DIR:-/tmp/fencekit-peers}"
PEER_RUN="$_peers/run/$(id -u)"
if [ ! -d "$_peers/run" ]; then
  mkdir -p "$_peers" && { mkdir -m 1777 "$_peers/run" 2>/dev/null || [ -d "$_peers/run" ]; } \
    || { echo "cannot make $_peers/run (tests/peers/setup.sh makes it)" >&2; exit 1; }
fi
[ -L "$PEER_RUN" ] || [ -d "$PEER_RUN" ] || mkdir -m 0700 "$PEER_RUN" 2>/dev/null || true
if [ -L "$PEER_RUN" ] || [ ! -d "$PEER_RUN" ] || [ ! -O "$PEER_RUN" ]; then
  echo "$PEER_RUN is not a directory of this user's own: remove it" >&2
  exit 1
fi
chmod 0700 "$PEER_RUN"
unset _peers
