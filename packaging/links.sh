#!/bin/sh
# fencekit's agent names beside fence-agents, installed as
# /usr/libexec/fencekit/links and run by the package's scripts:
#
#   links install dpkg|rpm    after the package's files are in place
#   links remove  dpkg|rpm    before they go (package removal, not upgrade)
#   links status              what is linked and what is kept aside
#
# For every name in /usr/share/fencekit/agents (made from `fencekit agents`),
# /usr/sbin/NAME becomes a symlink to /usr/bin/fencekit, where Pacemaker's
# fencer and FAR look for agents, and the agent's man page in
# /usr/share/man/man8 one to fencekit's (/usr/share/fencekit/man8: the
# package owns no path fence-agents owns). An upstream agent of that name
# (and its man page, /usr/share/man/man8/NAME.8.gz) is kept aside under
# /usr/libexec/fencekit/fence-agents/ while fencekit is installed, and put
# back when it is removed:
#
#   dpkg  by a diversion (dpkg-divert --package fencekit), added for every
#         name whether fence-agents is installed or not, so that dpkg itself
#         puts a fence-agents installed or upgraded later aside too;
#   rpm   by moving the file (RPM has no diversions): a fence-agents-*
#         package installed or upgraded later puts its agent back in
#         /usr/sbin, which wins until `links install rpm` runs again.
#
# Names linked are recorded in /var/lib/fencekit/linked, so that a name a
# newer fencekit no longer serves is given back to upstream on upgrade.
#
# Paths below are as seen on the installed system; $DPKG_ROOT (set by dpkg
# when it installs into another root without chroot, `dpkg --root DIR
# --force-script-chrootless`, as tests/packages.rs does) is put in front of
# them for every file operation, and dpkg-divert reads it itself.
set -eu
R=${DPKG_ROOT:-}

LIST=/usr/share/fencekit/agents
BIN=/usr/bin/fencekit
SBIN=/usr/sbin
MAN8=/usr/share/man/man8
OWN_MAN8=/usr/share/fencekit/man8
KEEP=/usr/libexec/fencekit/fence-agents
STATE_DIR=/var/lib/fencekit
STATE=$STATE_DIR/linked

usage() {
  echo "usage: links install|remove dpkg|rpm, or links status" >&2
  exit 64
}

# ours PATH [TARGET]: PATH is our link (to TARGET, by default the binary).
ours() { [ -L "$R$1" ] && [ "$(readlink "$R$1")" = "${2:-$BIN}" ]; }

# The agent's own man page (its name as the package installed it, which
# may be compressed), or nothing.
own_page() {
  for p in "$OWN_MAN8/$1.8.gz" "$OWN_MAN8/$1.8"; do
    if [ -e "$R$p" ]; then
      echo "$p"
      return
    fi
  done
}

# put_aside MODE PATH KEPT: upstream's PATH goes to KEPT.
put_aside() {
  case $1 in
    dpkg)
      dpkg-divert --package fencekit --quiet --rename --divert "$3" --add "$2" ;;
    rpm)
      if { [ -e "$R$2" ] || [ -L "$R$2" ]; } && ! ours "$2"; then
        mv -f "$R$2" "$R$3"
      fi ;;
  esac
}

# give_back MODE PATH KEPT: KEPT goes back to PATH.
give_back() {
  case $1 in
    dpkg)
      if dpkg-divert --list "$2" | grep -q 'by fencekit$'; then
        dpkg-divert --package fencekit --quiet --rename --remove "$2"
      fi ;;
    rpm)
      if [ -e "$R$3" ] || [ -L "$R$3" ]; then
        if [ -e "$R$2" ] || [ -L "$R$2" ]; then
          rm -f "$R$3" # upstream put a newer one back meanwhile
        else
          mv -f "$R$3" "$R$2"
        fi
      fi ;;
  esac
}

# drop_links NAME: our links of NAME (the agent, its man page), if any.
drop_links() {
  if ours "$SBIN/$1"; then rm -f "$R$SBIN/$1"; fi
  for p in "$MAN8/$1.8.gz" "$MAN8/$1.8"; do
    if [ -L "$R$p" ]; then
      case $(readlink "$R$p") in "$OWN_MAN8"/*) rm -f "$R$p" ;; esac
    fi
  done
}

link() { # MODE NAME
  page=$(own_page "$2")
  # Linked before (or by hand): the diversion must not move our links.
  drop_links "$2"
  put_aside "$1" "$SBIN/$2" "$KEEP/$2"
  put_aside "$1" "$MAN8/$2.8.gz" "$KEEP/man8/$2.8.gz"
  ln -sfn "$BIN" "$R$SBIN/$2"
  if [ -n "$page" ]; then
    ln -sfn "$page" "$R$MAN8/${page##*/}"
  fi
}

unlink_name() { # MODE NAME
  drop_links "$2"
  give_back "$1" "$SBIN/$2" "$KEEP/$2"
  give_back "$1" "$MAN8/$2.8.gz" "$KEEP/man8/$2.8.gz"
}

names() { cut -d' ' -f1 "$R$LIST"; }

case ${1:-} in
  install)
    mode=${2:-}
    case $mode in dpkg | rpm) ;; *) usage ;; esac
    mkdir -p "$R$KEEP/man8" "$R$STATE_DIR"
    if [ -f "$R$STATE" ]; then
      for old in $(cat "$R$STATE"); do
        names | grep -qx "$old" || unlink_name "$mode" "$old"
      done
    fi
    for n in $(names); do
      link "$mode" "$n"
    done
    names > "$R$STATE.new"
    mv -f "$R$STATE.new" "$R$STATE"
    ;;
  remove)
    mode=${2:-}
    case $mode in dpkg | rpm) ;; *) usage ;; esac
    if [ -f "$R$STATE" ]; then
      for n in $(cat "$R$STATE"); do
        unlink_name "$mode" "$n"
      done
    fi
    rm -f "$R$STATE"
    rmdir "$R$KEEP/man8" "$R$KEEP" "$R$STATE_DIR" 2>/dev/null || true
    ;;
  status)
    for n in $(names); do
      if ours "$SBIN/$n"; then what=fencekit; else what="not linked"; fi
      if [ -e "$R$KEEP/$n" ]; then what="$what (fence-agents' kept in $KEEP)"; fi
      echo "$SBIN/$n: $what"
    done
    ;;
  *) usage ;;
esac
