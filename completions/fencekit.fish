# Print an optspec for argparse to handle cmd's options that are independent of any subcommand.
function __fish_fencekit_global_optspecs
    string join \n h/help V/version
end

function __fish_fencekit_needs_command
    # Figure out if the current invocation already has a command.
    set -l cmd (commandline -opc)
    set -e cmd[1]
    argparse -s (__fish_fencekit_global_optspecs) -- $cmd 2>/dev/null
    or return
    if set -q argv[1]
        # Also print the command, so this can be used to figure out what it is.
        echo $argv[1]
        return 1
    end
    return 0
end

function __fish_fencekit_using_subcommand
    set -l cmd (__fish_fencekit_needs_command)
    test -z "$cmd"
    and return 1
    contains -- $cmd[1] $argv
end

complete -c fencekit -n "__fish_fencekit_needs_command" -s h -l help -d 'Print help'
complete -c fencekit -n "__fish_fencekit_needs_command" -s V -l version -d 'Print version'
complete -c fencekit -n "__fish_fencekit_needs_command" -f -a "status" -d 'Read the power state (exit 0 on, 2 off, 1 unreadable)'
complete -c fencekit -n "__fish_fencekit_needs_command" -f -a "on" -d 'Power on and confirm'
complete -c fencekit -n "__fish_fencekit_needs_command" -f -a "off" -d 'Hard power off and confirm: the fencing action'
complete -c fencekit -n "__fish_fencekit_needs_command" -f -a "reboot" -d 'Power off (confirmed), then on (confirmed); or one cycle with --method cycle'
complete -c fencekit -n "__fish_fencekit_needs_command" -f -a "monitor" -d 'Check that the BMC answers and authenticates, without touching power'
complete -c fencekit -n "__fish_fencekit_needs_command" -f -a "verify" -d 'Prove a node is off (or back on) with independent evidence (exit 0 proven, 3 not, 1 no evidence)'
complete -c fencekit -n "__fish_fencekit_needs_command" -f -a "check" -d 'Check that every fencing level would work, without touching power (exit 0 all fine); compare with a recorded baseline, export metrics, or keep watching'
complete -c fencekit -n "__fish_fencekit_needs_command" -f -a "list" -d 'List what is behind a device: systems of a Redfish service, domains of a hypervisor'
complete -c fencekit -n "__fish_fencekit_needs_command" -f -a "hold" -d 'Hold nodes: refuse on/off/reboot on them until released or expired (exit 1 when refused)'
complete -c fencekit -n "__fish_fencekit_needs_command" -f -a "release" -d 'Release held nodes'
complete -c fencekit -n "__fish_fencekit_needs_command" -f -a "ack" -d 'Acknowledge that a node was fenced by hand (manual method)'
complete -c fencekit -n "__fish_fencekit_needs_command" -f -a "lab" -d 'Serve simulated BMCs on loopback until interrupted'
complete -c fencekit -n "__fish_fencekit_needs_command" -f -a "demo" -d 'Start an in-process lab and fence a simulated node, step by step'
complete -c fencekit -n "__fish_fencekit_needs_command" -f -a "agents" -d 'List the fence agent names, each with the fence-agents package it stands in for'
complete -c fencekit -n "__fish_fencekit_needs_command" -f -a "agent" -d 'Run as a ClusterLabs fence agent (same as invoking fencekit as NAME)'
complete -c fencekit -n "__fish_fencekit_needs_command" -f -a "completions" -d 'Print shell completions (bash, zsh, fish, powershell, elvish)'
complete -c fencekit -n "__fish_fencekit_needs_command" -f -a "man" -d 'Print a man page (fencekit, fencekit-SUBCOMMAND, or a fence agent name)'
complete -c fencekit -n "__fish_fencekit_using_subcommand status" -s i -l inventory -d 'Inventory file (TOML) naming nodes and their fencing methods' -r -F
complete -c fencekit -n "__fish_fencekit_using_subcommand status" -l parallel -d 'Most targets in flight at once' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand status" -l stagger -d 'For on and reboot: start node i after i × DUR (spreads inrush current)' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand status" -l bmc-interval -d 'Least time between two sessions on one device (nodes sharing a BMC, or systems of one Redfish service; not PDUs, which serve their rack one request at a time)' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand status" -l max-per-address -d 'Most sessions at once to one address, within this run (several devices behind one address: VirtualBMC ports, sushy-tools systems)' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand status" -l level -d 'Use only this fencing level of each inventory node (1 = first method)' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand status" -l audit -d 'Append one JSON line per finished target to this file' -r -F
complete -c fencekit -n "__fish_fencekit_using_subcommand status" -l address -d 'The node\'s own (data-plane) address, probed by verify (URL targets; inventories set `address`)' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand status" -l probe-port -d 'A TCP port the node\'s host answers on when up (repeatable)' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand status" -l max-off-watts -d 'Verify: the most watts a node reported off may draw; more is a contradiction (inventory: max_off_watts)' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand status" -l expect-uuid -d 'Refuse to act unless the machine reports this system UUID (read in the same session, before any power command; IPMI GUIDs match in either byte order). For one URL or --ip target; inventories use `uuid = "…"`' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand status" -l expect-serial -d 'Refuse to act unless the machine reports this serial number (same rules as --expect-uuid)' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand status" -l driver -d 'Driver for --ip targets' -r -f -a "ipmi\t'IPMI over LAN (RMCP+ or 1.5)'
redfish\t'Redfish over HTTPS'
ssh\t'SSH to a hypervisor (virsh; --plug names the domain)'
aws\t'Amazon EC2 (--region, --plug names the instance)'"
complete -c fencekit -n "__fish_fencekit_using_subcommand status" -s a -l ip -d 'BMC address (instead of a target URL)' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand status" -s u -l ipport -d 'BMC UDP port' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand status" -s l -l username -d 'BMC user name' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand status" -s p -l password -d 'Password on the command line: visible to other local users (prefer the options below)' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand status" -l password-file -d 'Read the password from a file (first line)' -r -F
complete -c fencekit -n "__fish_fencekit_using_subcommand status" -l password-env -d 'Read the password from this environment variable' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand status" -s S -l password-script -d 'Run this command (sh -c) and use its output as the password' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand status" -s n -l plug -d 'Which machine behind the device: a Redfish system (Id, Name, UUID or @odata.id), a hypervisor\'s domain, an EC2 instance (--driver aws)' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand status" -l ca-cert -d 'HTTPS: trust this PEM file (a private CA, or the device\'s own self-signed certificate)' -r -F
complete -c fencekit -n "__fish_fencekit_using_subcommand status" -l ssl-fingerprint -d 'HTTPS: accept exactly the certificate with this SHA-256 fingerprint (SHA256:…)' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand status" -s C -l cipher -d 'RMCP+ cipher suite: auto (prefer 17), 3 or 17' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand status" -s L -l privlvl -d 'Session privilege level' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand status" -l ipmi-version -d 'IPMI version: 2.0 (RMCP+, the default) or 1.5 (legacy BMCs); --auth alone implies 1.5' -r -f -a "2.0\t'RMCP+ (lanplus)'
1.5\t'IPMI 1.5 (lan)'"
complete -c fencekit -n "__fish_fencekit_using_subcommand status" -s A -l auth -d 'IPMI 1.5 authentication type (md5, password, none); implies --ipmi-version 1.5' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand status" -l hexadecimal-kg -d 'BMC key K_g in hexadecimal' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand status" -s W -l workaround -d 'IPMI vendor workarounds, FreeIPMI\'s names, comma-separated (docs/ipmi.md; those that drop a check are warned about on every use)' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand status" -l systems-uri -d 'Redfish: the ComputerSystem URI (skips discovery)' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand status" -l redfish-uri -d 'Redfish: the service root used for discovery' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand status" -s k -l identity-file -d 'SSH: authenticate with this private key (its passphrase from the password options)' -r -F
complete -c fencekit -n "__fish_fencekit_using_subcommand status" -l ssh-known-hosts -d 'SSH: check the host key against this known_hosts file (default ~/.ssh/known_hosts)' -r -F
complete -c fencekit -n "__fish_fencekit_using_subcommand status" -l ssh-host-key -d 'SSH: accept exactly the host key with this fingerprint (SHA256:…)' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand status" -l region -d 'AWS: the region (default AWS_REGION / AWS_DEFAULT_REGION)' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand status" -l access-key -d 'AWS: the access key ID; its secret access key comes from the password options (--password-file …, FENCEKIT_PASSWORD). Without it: the SDKs\' credential chain (environment, shared files, web identity, instance metadata)' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand status" -l endpoint-url -d 'AWS: the EC2 endpoint (default: AWS_ENDPOINT_URL_EC2, AWS_ENDPOINT_URL, or the region\'s public one)' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand status" -l expect-node-name -d 'AWS: refuse to act (before any state change) unless the instance\'s PrivateDnsName is NAME (how OpenShift and most Kubernetes on EC2 name nodes). Inventories use node_name' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand status" -l expect-tag -d 'AWS: refuse to act unless the instance carries this tag (KEY=VALUE, e.g. Name=worker-0). Inventories use expect_tag' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand status" -l kubeconfig -d 'KubeVirt: the kubeconfig file (default: KUBECONFIG, ~/.kube/config, then the pod\'s service account). Inventories use kubeconfig. With `check --far`: read the Secrets and nodes with `kubectl` (or `oc`) through this kubeconfig' -r -F
complete -c fencekit -n "__fish_fencekit_using_subcommand status" -l expect-vm-uid -d 'KubeVirt: refuse to act (before any state change) unless the VirtualMachine\'s metadata.uid is UID. Inventories use vm_uid; --expect-uuid compares the VMI\'s firmware UUID' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand status" -l azure-tenant -d 'Azure: the tenant of the service principal (--username is its client ID, the password options its secret; default AZURE_TENANT_ID). Inventories use settings.tenant' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand status" -l azure-client-certificate -d 'Azure: a PEM file with the service principal\'s certificate and key, instead of a secret' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand status" -l azure-cloud -d 'Azure: the cloud (china, usgov, germany, stack; default public)' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand status" -l azure-metadata-endpoint -d 'Azure: an Azure Stack Hub\'s Resource Manager URL (with --azure-cloud stack)' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand status" -l expect-vm-id -d 'Azure: refuse to act (before any state change) unless the VM\'s vmId is this. Inventories use settings.vm_id; --expect-uuid compares the SMBIOS UUID (the vmId in either byte order)' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand status" -l pve-vmtype -d 'Proxmox VE: the guest\'s type, qemu or lxc (default: found in the cluster\'s resources). Inventories use settings.vmtype' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand status" -l os-auth-url -d 'OpenStack: Keystone\'s URL (https://keystone:5000/v3), instead of the cloud of clouds.yaml the target names. Inventories use settings.auth_url' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand status" -l os-project-name -d 'OpenStack: the project to scope the token to (with --os-auth-url)' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand status" -l os-domain-name -d 'OpenStack: the users\' and the project\'s domain (default: Default)' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand status" -l os-region-name -d 'OpenStack: the catalog\'s region to take compute from' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand status" -l os-interface -d 'OpenStack: the catalog\'s interface: public (default), internal or admin' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand status" -l ovirt-api-path -d 'oVirt: the API\'s path (default /ovirt-engine/api). Inventories use settings.api_path' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand status" -l ibm-crn -d 'IBM Power VS: the workspace\'s CRN, sent with every request (crn:v1:bluemix:public:power-iaas:ZONE:a/ACCOUNT:WORKSPACE::). Inventories use settings.crn' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand status" -l ibm-proxy -d 'IBM Cloud: an HTTP proxy for IAM and the API (default HTTPS_PROXY)' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand status" -l power-wait -d 'Blind wait after each power command before polling' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand status" -l power-timeout -d 'How long a power transition may take to be observed' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand status" -l poll-interval -d 'First interval between status polls (grows up to 1s while nothing changes)' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand status" -l confirm -d 'Consecutive identical reads needed to confirm a state' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand status" -l retry-on -d 'Extra attempts of the power-on command' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand status" -s m -l method -d 'Reboot method' -r -f -a "onoff\t'Off (confirmed) then on (confirmed)'
cycle\t'One power-cycle command; unverified (with --verify: seen off, then on)'"
complete -c fencekit -n "__fish_fencekit_using_subcommand status" -l timeout -d 'Deadline for the whole action' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand status" -l login-timeout -d 'Bound on session set-up and on each request (within an action\'s --timeout, an IPMI set-up the BMC answered in part starts once more)' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand status" -s o -l output -d 'Output format' -r -f -a "human\t'Short lines for people'
json\t'One JSON document'
jsonl\t'One JSON object per event, as it happens, then one per result'
openmetrics\t'`check` only: OpenMetrics / Prometheus text (node_exporter\'s textfile collector)'"
complete -c fencekit -n "__fish_fencekit_using_subcommand status" -l all -d 'Act on every node of the inventory'
complete -c fencekit -n "__fish_fencekit_using_subcommand status" -l dry-run -d 'Resolve targets, methods and credential references; print the plan; contact nothing'
complete -c fencekit -n "__fish_fencekit_using_subcommand status" -l no-lock -d 'Do not take the per-BMC lock that serialises fencekit processes on this host'
complete -c fencekit -n "__fish_fencekit_using_subcommand status" -l verify -d 'After off / reboot: verify the result (off, or back on) and fold it into the result'
complete -c fencekit -n "__fish_fencekit_using_subcommand status" -l accept-bmc-only -d 'Verify: accept the BMC\'s reads alone (verdict bmc-only) as proof for these nodes; recorded in the evidence and the audit (inventory: accept_bmc_only = true)'
complete -c fencekit -n "__fish_fencekit_using_subcommand status" -l allow-host-only -d 'Allow a host profile (ssh://NODE/host) as a node\'s only fencing level: the node is asked to power itself off, which nothing can observe, so off is "sent, unverified" (exit 3) unless --verify proves it (inventory: allow_host_only = true)'
complete -c fencekit -n "__fish_fencekit_using_subcommand status" -l ssl-insecure -d 'HTTPS: do not verify the certificate (anyone on the path can impersonate the BMC or the API server)'
complete -c fencekit -n "__fish_fencekit_using_subcommand status" -l accept-unauthenticated-replies -d 'IPMI 1.5: accept replies without an authentication code when the BMC says per-message authentication is disabled (anyone on the path can then forge its answers)'
complete -c fencekit -n "__fish_fencekit_using_subcommand status" -l redfish-session -d 'Redfish: log in through SessionService (X-Auth-Token) and log out at the end'
complete -c fencekit -n "__fish_fencekit_using_subcommand status" -l ssh-agent -d 'SSH: authenticate through the ssh-agent ($SSH_AUTH_SOCK)'
complete -c fencekit -n "__fish_fencekit_using_subcommand status" -l ssh-accept-new -d 'SSH: accept and record an unknown host key (a changed one is still refused)'
complete -c fencekit -n "__fish_fencekit_using_subcommand status" -l use-sudo -d 'SSH: run the remote commands through sudo'
complete -c fencekit -n "__fish_fencekit_using_subcommand status" -l missing-as-off -d 'SSH (virsh): a domain that does not exist counts as off'
complete -c fencekit -n "__fish_fencekit_using_subcommand status" -l allow-self-fence -d 'AWS: allow off/reboot of the instance this process runs on (the metadata service tells; refused otherwise)'
complete -c fencekit -n "__fish_fencekit_using_subcommand status" -l azure-msi -d 'Azure: authenticate as the managed identity (a workload identity\'s AZURE_FEDERATED_TOKEN_FILE first, then the metadata service; --username names a user-assigned one). Without credentials given, the SDKs\' order is used'
complete -c fencekit -n "__fish_fencekit_using_subcommand status" -l pve-skiplock -d 'Proxmox VE: send skiplock=1 with power requests, so that a locked guest (backup, migration, snapshot) is powered anyway (root@pam only; warned). Inventories use settings.skiplock'
complete -c fencekit -n "__fish_fencekit_using_subcommand status" -l ovirt-no-filter -d 'oVirt: send `Filter: false` (an administrator\'s view of every VM; default: `Filter: true`, what a user\'s permissions show). Inventories use settings.filter'
complete -c fencekit -n "__fish_fencekit_using_subcommand status" -l ovirt-cookies -d 'oVirt: keep the engine\'s session cookie for the run (logged in again once when it expires). Inventories use settings.cookies'
complete -c fencekit -n "__fish_fencekit_using_subcommand status" -l ibm-private -d 'IBM Cloud: the private endpoints (IAM and the service, from inside IBM Cloud) instead of the public ones'
complete -c fencekit -n "__fish_fencekit_using_subcommand status" -s v -l verbose -d 'More detail on stderr (-v, -vv, -vvv); never shows secrets'
complete -c fencekit -n "__fish_fencekit_using_subcommand status" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c fencekit -n "__fish_fencekit_using_subcommand status" -s V -l version -d 'Print version'
complete -c fencekit -n "__fish_fencekit_using_subcommand on" -s i -l inventory -d 'Inventory file (TOML) naming nodes and their fencing methods' -r -F
complete -c fencekit -n "__fish_fencekit_using_subcommand on" -l parallel -d 'Most targets in flight at once' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand on" -l stagger -d 'For on and reboot: start node i after i × DUR (spreads inrush current)' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand on" -l bmc-interval -d 'Least time between two sessions on one device (nodes sharing a BMC, or systems of one Redfish service; not PDUs, which serve their rack one request at a time)' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand on" -l max-per-address -d 'Most sessions at once to one address, within this run (several devices behind one address: VirtualBMC ports, sushy-tools systems)' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand on" -l level -d 'Use only this fencing level of each inventory node (1 = first method)' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand on" -l audit -d 'Append one JSON line per finished target to this file' -r -F
complete -c fencekit -n "__fish_fencekit_using_subcommand on" -l address -d 'The node\'s own (data-plane) address, probed by verify (URL targets; inventories set `address`)' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand on" -l probe-port -d 'A TCP port the node\'s host answers on when up (repeatable)' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand on" -l max-off-watts -d 'Verify: the most watts a node reported off may draw; more is a contradiction (inventory: max_off_watts)' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand on" -l expect-uuid -d 'Refuse to act unless the machine reports this system UUID (read in the same session, before any power command; IPMI GUIDs match in either byte order). For one URL or --ip target; inventories use `uuid = "…"`' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand on" -l expect-serial -d 'Refuse to act unless the machine reports this serial number (same rules as --expect-uuid)' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand on" -l driver -d 'Driver for --ip targets' -r -f -a "ipmi\t'IPMI over LAN (RMCP+ or 1.5)'
redfish\t'Redfish over HTTPS'
ssh\t'SSH to a hypervisor (virsh; --plug names the domain)'
aws\t'Amazon EC2 (--region, --plug names the instance)'"
complete -c fencekit -n "__fish_fencekit_using_subcommand on" -s a -l ip -d 'BMC address (instead of a target URL)' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand on" -s u -l ipport -d 'BMC UDP port' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand on" -s l -l username -d 'BMC user name' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand on" -s p -l password -d 'Password on the command line: visible to other local users (prefer the options below)' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand on" -l password-file -d 'Read the password from a file (first line)' -r -F
complete -c fencekit -n "__fish_fencekit_using_subcommand on" -l password-env -d 'Read the password from this environment variable' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand on" -s S -l password-script -d 'Run this command (sh -c) and use its output as the password' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand on" -s n -l plug -d 'Which machine behind the device: a Redfish system (Id, Name, UUID or @odata.id), a hypervisor\'s domain, an EC2 instance (--driver aws)' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand on" -l ca-cert -d 'HTTPS: trust this PEM file (a private CA, or the device\'s own self-signed certificate)' -r -F
complete -c fencekit -n "__fish_fencekit_using_subcommand on" -l ssl-fingerprint -d 'HTTPS: accept exactly the certificate with this SHA-256 fingerprint (SHA256:…)' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand on" -s C -l cipher -d 'RMCP+ cipher suite: auto (prefer 17), 3 or 17' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand on" -s L -l privlvl -d 'Session privilege level' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand on" -l ipmi-version -d 'IPMI version: 2.0 (RMCP+, the default) or 1.5 (legacy BMCs); --auth alone implies 1.5' -r -f -a "2.0\t'RMCP+ (lanplus)'
1.5\t'IPMI 1.5 (lan)'"
complete -c fencekit -n "__fish_fencekit_using_subcommand on" -s A -l auth -d 'IPMI 1.5 authentication type (md5, password, none); implies --ipmi-version 1.5' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand on" -l hexadecimal-kg -d 'BMC key K_g in hexadecimal' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand on" -s W -l workaround -d 'IPMI vendor workarounds, FreeIPMI\'s names, comma-separated (docs/ipmi.md; those that drop a check are warned about on every use)' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand on" -l systems-uri -d 'Redfish: the ComputerSystem URI (skips discovery)' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand on" -l redfish-uri -d 'Redfish: the service root used for discovery' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand on" -s k -l identity-file -d 'SSH: authenticate with this private key (its passphrase from the password options)' -r -F
complete -c fencekit -n "__fish_fencekit_using_subcommand on" -l ssh-known-hosts -d 'SSH: check the host key against this known_hosts file (default ~/.ssh/known_hosts)' -r -F
complete -c fencekit -n "__fish_fencekit_using_subcommand on" -l ssh-host-key -d 'SSH: accept exactly the host key with this fingerprint (SHA256:…)' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand on" -l region -d 'AWS: the region (default AWS_REGION / AWS_DEFAULT_REGION)' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand on" -l access-key -d 'AWS: the access key ID; its secret access key comes from the password options (--password-file …, FENCEKIT_PASSWORD). Without it: the SDKs\' credential chain (environment, shared files, web identity, instance metadata)' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand on" -l endpoint-url -d 'AWS: the EC2 endpoint (default: AWS_ENDPOINT_URL_EC2, AWS_ENDPOINT_URL, or the region\'s public one)' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand on" -l expect-node-name -d 'AWS: refuse to act (before any state change) unless the instance\'s PrivateDnsName is NAME (how OpenShift and most Kubernetes on EC2 name nodes). Inventories use node_name' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand on" -l expect-tag -d 'AWS: refuse to act unless the instance carries this tag (KEY=VALUE, e.g. Name=worker-0). Inventories use expect_tag' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand on" -l kubeconfig -d 'KubeVirt: the kubeconfig file (default: KUBECONFIG, ~/.kube/config, then the pod\'s service account). Inventories use kubeconfig. With `check --far`: read the Secrets and nodes with `kubectl` (or `oc`) through this kubeconfig' -r -F
complete -c fencekit -n "__fish_fencekit_using_subcommand on" -l expect-vm-uid -d 'KubeVirt: refuse to act (before any state change) unless the VirtualMachine\'s metadata.uid is UID. Inventories use vm_uid; --expect-uuid compares the VMI\'s firmware UUID' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand on" -l azure-tenant -d 'Azure: the tenant of the service principal (--username is its client ID, the password options its secret; default AZURE_TENANT_ID). Inventories use settings.tenant' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand on" -l azure-client-certificate -d 'Azure: a PEM file with the service principal\'s certificate and key, instead of a secret' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand on" -l azure-cloud -d 'Azure: the cloud (china, usgov, germany, stack; default public)' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand on" -l azure-metadata-endpoint -d 'Azure: an Azure Stack Hub\'s Resource Manager URL (with --azure-cloud stack)' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand on" -l expect-vm-id -d 'Azure: refuse to act (before any state change) unless the VM\'s vmId is this. Inventories use settings.vm_id; --expect-uuid compares the SMBIOS UUID (the vmId in either byte order)' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand on" -l pve-vmtype -d 'Proxmox VE: the guest\'s type, qemu or lxc (default: found in the cluster\'s resources). Inventories use settings.vmtype' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand on" -l os-auth-url -d 'OpenStack: Keystone\'s URL (https://keystone:5000/v3), instead of the cloud of clouds.yaml the target names. Inventories use settings.auth_url' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand on" -l os-project-name -d 'OpenStack: the project to scope the token to (with --os-auth-url)' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand on" -l os-domain-name -d 'OpenStack: the users\' and the project\'s domain (default: Default)' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand on" -l os-region-name -d 'OpenStack: the catalog\'s region to take compute from' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand on" -l os-interface -d 'OpenStack: the catalog\'s interface: public (default), internal or admin' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand on" -l ovirt-api-path -d 'oVirt: the API\'s path (default /ovirt-engine/api). Inventories use settings.api_path' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand on" -l ibm-crn -d 'IBM Power VS: the workspace\'s CRN, sent with every request (crn:v1:bluemix:public:power-iaas:ZONE:a/ACCOUNT:WORKSPACE::). Inventories use settings.crn' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand on" -l ibm-proxy -d 'IBM Cloud: an HTTP proxy for IAM and the API (default HTTPS_PROXY)' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand on" -l power-wait -d 'Blind wait after each power command before polling' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand on" -l power-timeout -d 'How long a power transition may take to be observed' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand on" -l poll-interval -d 'First interval between status polls (grows up to 1s while nothing changes)' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand on" -l confirm -d 'Consecutive identical reads needed to confirm a state' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand on" -l retry-on -d 'Extra attempts of the power-on command' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand on" -s m -l method -d 'Reboot method' -r -f -a "onoff\t'Off (confirmed) then on (confirmed)'
cycle\t'One power-cycle command; unverified (with --verify: seen off, then on)'"
complete -c fencekit -n "__fish_fencekit_using_subcommand on" -l timeout -d 'Deadline for the whole action' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand on" -l login-timeout -d 'Bound on session set-up and on each request (within an action\'s --timeout, an IPMI set-up the BMC answered in part starts once more)' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand on" -s o -l output -d 'Output format' -r -f -a "human\t'Short lines for people'
json\t'One JSON document'
jsonl\t'One JSON object per event, as it happens, then one per result'
openmetrics\t'`check` only: OpenMetrics / Prometheus text (node_exporter\'s textfile collector)'"
complete -c fencekit -n "__fish_fencekit_using_subcommand on" -l all -d 'Act on every node of the inventory'
complete -c fencekit -n "__fish_fencekit_using_subcommand on" -l dry-run -d 'Resolve targets, methods and credential references; print the plan; contact nothing'
complete -c fencekit -n "__fish_fencekit_using_subcommand on" -l no-lock -d 'Do not take the per-BMC lock that serialises fencekit processes on this host'
complete -c fencekit -n "__fish_fencekit_using_subcommand on" -l verify -d 'After off / reboot: verify the result (off, or back on) and fold it into the result'
complete -c fencekit -n "__fish_fencekit_using_subcommand on" -l accept-bmc-only -d 'Verify: accept the BMC\'s reads alone (verdict bmc-only) as proof for these nodes; recorded in the evidence and the audit (inventory: accept_bmc_only = true)'
complete -c fencekit -n "__fish_fencekit_using_subcommand on" -l allow-host-only -d 'Allow a host profile (ssh://NODE/host) as a node\'s only fencing level: the node is asked to power itself off, which nothing can observe, so off is "sent, unverified" (exit 3) unless --verify proves it (inventory: allow_host_only = true)'
complete -c fencekit -n "__fish_fencekit_using_subcommand on" -l ssl-insecure -d 'HTTPS: do not verify the certificate (anyone on the path can impersonate the BMC or the API server)'
complete -c fencekit -n "__fish_fencekit_using_subcommand on" -l accept-unauthenticated-replies -d 'IPMI 1.5: accept replies without an authentication code when the BMC says per-message authentication is disabled (anyone on the path can then forge its answers)'
complete -c fencekit -n "__fish_fencekit_using_subcommand on" -l redfish-session -d 'Redfish: log in through SessionService (X-Auth-Token) and log out at the end'
complete -c fencekit -n "__fish_fencekit_using_subcommand on" -l ssh-agent -d 'SSH: authenticate through the ssh-agent ($SSH_AUTH_SOCK)'
complete -c fencekit -n "__fish_fencekit_using_subcommand on" -l ssh-accept-new -d 'SSH: accept and record an unknown host key (a changed one is still refused)'
complete -c fencekit -n "__fish_fencekit_using_subcommand on" -l use-sudo -d 'SSH: run the remote commands through sudo'
complete -c fencekit -n "__fish_fencekit_using_subcommand on" -l missing-as-off -d 'SSH (virsh): a domain that does not exist counts as off'
complete -c fencekit -n "__fish_fencekit_using_subcommand on" -l allow-self-fence -d 'AWS: allow off/reboot of the instance this process runs on (the metadata service tells; refused otherwise)'
complete -c fencekit -n "__fish_fencekit_using_subcommand on" -l azure-msi -d 'Azure: authenticate as the managed identity (a workload identity\'s AZURE_FEDERATED_TOKEN_FILE first, then the metadata service; --username names a user-assigned one). Without credentials given, the SDKs\' order is used'
complete -c fencekit -n "__fish_fencekit_using_subcommand on" -l pve-skiplock -d 'Proxmox VE: send skiplock=1 with power requests, so that a locked guest (backup, migration, snapshot) is powered anyway (root@pam only; warned). Inventories use settings.skiplock'
complete -c fencekit -n "__fish_fencekit_using_subcommand on" -l ovirt-no-filter -d 'oVirt: send `Filter: false` (an administrator\'s view of every VM; default: `Filter: true`, what a user\'s permissions show). Inventories use settings.filter'
complete -c fencekit -n "__fish_fencekit_using_subcommand on" -l ovirt-cookies -d 'oVirt: keep the engine\'s session cookie for the run (logged in again once when it expires). Inventories use settings.cookies'
complete -c fencekit -n "__fish_fencekit_using_subcommand on" -l ibm-private -d 'IBM Cloud: the private endpoints (IAM and the service, from inside IBM Cloud) instead of the public ones'
complete -c fencekit -n "__fish_fencekit_using_subcommand on" -s v -l verbose -d 'More detail on stderr (-v, -vv, -vvv); never shows secrets'
complete -c fencekit -n "__fish_fencekit_using_subcommand on" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c fencekit -n "__fish_fencekit_using_subcommand on" -s V -l version -d 'Print version'
complete -c fencekit -n "__fish_fencekit_using_subcommand off" -s i -l inventory -d 'Inventory file (TOML) naming nodes and their fencing methods' -r -F
complete -c fencekit -n "__fish_fencekit_using_subcommand off" -l parallel -d 'Most targets in flight at once' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand off" -l stagger -d 'For on and reboot: start node i after i × DUR (spreads inrush current)' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand off" -l bmc-interval -d 'Least time between two sessions on one device (nodes sharing a BMC, or systems of one Redfish service; not PDUs, which serve their rack one request at a time)' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand off" -l max-per-address -d 'Most sessions at once to one address, within this run (several devices behind one address: VirtualBMC ports, sushy-tools systems)' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand off" -l level -d 'Use only this fencing level of each inventory node (1 = first method)' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand off" -l audit -d 'Append one JSON line per finished target to this file' -r -F
complete -c fencekit -n "__fish_fencekit_using_subcommand off" -l address -d 'The node\'s own (data-plane) address, probed by verify (URL targets; inventories set `address`)' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand off" -l probe-port -d 'A TCP port the node\'s host answers on when up (repeatable)' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand off" -l max-off-watts -d 'Verify: the most watts a node reported off may draw; more is a contradiction (inventory: max_off_watts)' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand off" -l expect-uuid -d 'Refuse to act unless the machine reports this system UUID (read in the same session, before any power command; IPMI GUIDs match in either byte order). For one URL or --ip target; inventories use `uuid = "…"`' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand off" -l expect-serial -d 'Refuse to act unless the machine reports this serial number (same rules as --expect-uuid)' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand off" -l driver -d 'Driver for --ip targets' -r -f -a "ipmi\t'IPMI over LAN (RMCP+ or 1.5)'
redfish\t'Redfish over HTTPS'
ssh\t'SSH to a hypervisor (virsh; --plug names the domain)'
aws\t'Amazon EC2 (--region, --plug names the instance)'"
complete -c fencekit -n "__fish_fencekit_using_subcommand off" -s a -l ip -d 'BMC address (instead of a target URL)' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand off" -s u -l ipport -d 'BMC UDP port' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand off" -s l -l username -d 'BMC user name' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand off" -s p -l password -d 'Password on the command line: visible to other local users (prefer the options below)' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand off" -l password-file -d 'Read the password from a file (first line)' -r -F
complete -c fencekit -n "__fish_fencekit_using_subcommand off" -l password-env -d 'Read the password from this environment variable' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand off" -s S -l password-script -d 'Run this command (sh -c) and use its output as the password' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand off" -s n -l plug -d 'Which machine behind the device: a Redfish system (Id, Name, UUID or @odata.id), a hypervisor\'s domain, an EC2 instance (--driver aws)' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand off" -l ca-cert -d 'HTTPS: trust this PEM file (a private CA, or the device\'s own self-signed certificate)' -r -F
complete -c fencekit -n "__fish_fencekit_using_subcommand off" -l ssl-fingerprint -d 'HTTPS: accept exactly the certificate with this SHA-256 fingerprint (SHA256:…)' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand off" -s C -l cipher -d 'RMCP+ cipher suite: auto (prefer 17), 3 or 17' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand off" -s L -l privlvl -d 'Session privilege level' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand off" -l ipmi-version -d 'IPMI version: 2.0 (RMCP+, the default) or 1.5 (legacy BMCs); --auth alone implies 1.5' -r -f -a "2.0\t'RMCP+ (lanplus)'
1.5\t'IPMI 1.5 (lan)'"
complete -c fencekit -n "__fish_fencekit_using_subcommand off" -s A -l auth -d 'IPMI 1.5 authentication type (md5, password, none); implies --ipmi-version 1.5' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand off" -l hexadecimal-kg -d 'BMC key K_g in hexadecimal' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand off" -s W -l workaround -d 'IPMI vendor workarounds, FreeIPMI\'s names, comma-separated (docs/ipmi.md; those that drop a check are warned about on every use)' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand off" -l systems-uri -d 'Redfish: the ComputerSystem URI (skips discovery)' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand off" -l redfish-uri -d 'Redfish: the service root used for discovery' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand off" -s k -l identity-file -d 'SSH: authenticate with this private key (its passphrase from the password options)' -r -F
complete -c fencekit -n "__fish_fencekit_using_subcommand off" -l ssh-known-hosts -d 'SSH: check the host key against this known_hosts file (default ~/.ssh/known_hosts)' -r -F
complete -c fencekit -n "__fish_fencekit_using_subcommand off" -l ssh-host-key -d 'SSH: accept exactly the host key with this fingerprint (SHA256:…)' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand off" -l region -d 'AWS: the region (default AWS_REGION / AWS_DEFAULT_REGION)' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand off" -l access-key -d 'AWS: the access key ID; its secret access key comes from the password options (--password-file …, FENCEKIT_PASSWORD). Without it: the SDKs\' credential chain (environment, shared files, web identity, instance metadata)' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand off" -l endpoint-url -d 'AWS: the EC2 endpoint (default: AWS_ENDPOINT_URL_EC2, AWS_ENDPOINT_URL, or the region\'s public one)' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand off" -l expect-node-name -d 'AWS: refuse to act (before any state change) unless the instance\'s PrivateDnsName is NAME (how OpenShift and most Kubernetes on EC2 name nodes). Inventories use node_name' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand off" -l expect-tag -d 'AWS: refuse to act unless the instance carries this tag (KEY=VALUE, e.g. Name=worker-0). Inventories use expect_tag' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand off" -l kubeconfig -d 'KubeVirt: the kubeconfig file (default: KUBECONFIG, ~/.kube/config, then the pod\'s service account). Inventories use kubeconfig. With `check --far`: read the Secrets and nodes with `kubectl` (or `oc`) through this kubeconfig' -r -F
complete -c fencekit -n "__fish_fencekit_using_subcommand off" -l expect-vm-uid -d 'KubeVirt: refuse to act (before any state change) unless the VirtualMachine\'s metadata.uid is UID. Inventories use vm_uid; --expect-uuid compares the VMI\'s firmware UUID' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand off" -l azure-tenant -d 'Azure: the tenant of the service principal (--username is its client ID, the password options its secret; default AZURE_TENANT_ID). Inventories use settings.tenant' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand off" -l azure-client-certificate -d 'Azure: a PEM file with the service principal\'s certificate and key, instead of a secret' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand off" -l azure-cloud -d 'Azure: the cloud (china, usgov, germany, stack; default public)' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand off" -l azure-metadata-endpoint -d 'Azure: an Azure Stack Hub\'s Resource Manager URL (with --azure-cloud stack)' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand off" -l expect-vm-id -d 'Azure: refuse to act (before any state change) unless the VM\'s vmId is this. Inventories use settings.vm_id; --expect-uuid compares the SMBIOS UUID (the vmId in either byte order)' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand off" -l pve-vmtype -d 'Proxmox VE: the guest\'s type, qemu or lxc (default: found in the cluster\'s resources). Inventories use settings.vmtype' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand off" -l os-auth-url -d 'OpenStack: Keystone\'s URL (https://keystone:5000/v3), instead of the cloud of clouds.yaml the target names. Inventories use settings.auth_url' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand off" -l os-project-name -d 'OpenStack: the project to scope the token to (with --os-auth-url)' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand off" -l os-domain-name -d 'OpenStack: the users\' and the project\'s domain (default: Default)' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand off" -l os-region-name -d 'OpenStack: the catalog\'s region to take compute from' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand off" -l os-interface -d 'OpenStack: the catalog\'s interface: public (default), internal or admin' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand off" -l ovirt-api-path -d 'oVirt: the API\'s path (default /ovirt-engine/api). Inventories use settings.api_path' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand off" -l ibm-crn -d 'IBM Power VS: the workspace\'s CRN, sent with every request (crn:v1:bluemix:public:power-iaas:ZONE:a/ACCOUNT:WORKSPACE::). Inventories use settings.crn' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand off" -l ibm-proxy -d 'IBM Cloud: an HTTP proxy for IAM and the API (default HTTPS_PROXY)' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand off" -l power-wait -d 'Blind wait after each power command before polling' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand off" -l power-timeout -d 'How long a power transition may take to be observed' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand off" -l poll-interval -d 'First interval between status polls (grows up to 1s while nothing changes)' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand off" -l confirm -d 'Consecutive identical reads needed to confirm a state' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand off" -l retry-on -d 'Extra attempts of the power-on command' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand off" -s m -l method -d 'Reboot method' -r -f -a "onoff\t'Off (confirmed) then on (confirmed)'
cycle\t'One power-cycle command; unverified (with --verify: seen off, then on)'"
complete -c fencekit -n "__fish_fencekit_using_subcommand off" -l timeout -d 'Deadline for the whole action' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand off" -l login-timeout -d 'Bound on session set-up and on each request (within an action\'s --timeout, an IPMI set-up the BMC answered in part starts once more)' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand off" -s o -l output -d 'Output format' -r -f -a "human\t'Short lines for people'
json\t'One JSON document'
jsonl\t'One JSON object per event, as it happens, then one per result'
openmetrics\t'`check` only: OpenMetrics / Prometheus text (node_exporter\'s textfile collector)'"
complete -c fencekit -n "__fish_fencekit_using_subcommand off" -l max-fence -d 'Refuse (exit 64, nothing contacted) to act on more nodes than N, or than P% of the inventory (of the targets named, without one); default: the inventory\'s `max_fence`' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand off" -l reason -d 'Why --force is used (recorded in the audit trail with who used it)' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand off" -l on-confirmed-off -d 'Run CMD (sh -c) once while the node is observed off: after off is confirmed; during reboot, between the confirmed off and the power-on. It gets FENCEKIT_NODE, FENCEKIT_ACTION, FENCEKIT_METHOD, FENCEKIT_LEVEL, FENCEKIT_EVIDENCE and more, never a secret. Default: the inventory\'s `on_confirmed_off`' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand off" -l hook-timeout -d 'Time limit of the confirmed-off hook (cut to the action\'s deadline)' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand off" -l crashdump-wait -d '--crashdump: the longest wait for the dump, from the NMI; it must fit in --timeout with the power-off (--power-timeout, --login-timeout)' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand off" -l kdump-port -d '--crashdump: UDP port the node\'s fence_kdump_send messages arrive on' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand off" -l kdump-quiet -d '--crashdump: once the node reports, the dump counts as done when no message came for this long (fence_kdump_send repeats every 10s by default)' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand off" -l all -d 'Act on every node of the inventory'
complete -c fencekit -n "__fish_fencekit_using_subcommand off" -l dry-run -d 'Resolve targets, methods and credential references; print the plan; contact nothing'
complete -c fencekit -n "__fish_fencekit_using_subcommand off" -l no-lock -d 'Do not take the per-BMC lock that serialises fencekit processes on this host'
complete -c fencekit -n "__fish_fencekit_using_subcommand off" -l verify -d 'After off / reboot: verify the result (off, or back on) and fold it into the result'
complete -c fencekit -n "__fish_fencekit_using_subcommand off" -l accept-bmc-only -d 'Verify: accept the BMC\'s reads alone (verdict bmc-only) as proof for these nodes; recorded in the evidence and the audit (inventory: accept_bmc_only = true)'
complete -c fencekit -n "__fish_fencekit_using_subcommand off" -l allow-host-only -d 'Allow a host profile (ssh://NODE/host) as a node\'s only fencing level: the node is asked to power itself off, which nothing can observe, so off is "sent, unverified" (exit 3) unless --verify proves it (inventory: allow_host_only = true)'
complete -c fencekit -n "__fish_fencekit_using_subcommand off" -l ssl-insecure -d 'HTTPS: do not verify the certificate (anyone on the path can impersonate the BMC or the API server)'
complete -c fencekit -n "__fish_fencekit_using_subcommand off" -l accept-unauthenticated-replies -d 'IPMI 1.5: accept replies without an authentication code when the BMC says per-message authentication is disabled (anyone on the path can then forge its answers)'
complete -c fencekit -n "__fish_fencekit_using_subcommand off" -l redfish-session -d 'Redfish: log in through SessionService (X-Auth-Token) and log out at the end'
complete -c fencekit -n "__fish_fencekit_using_subcommand off" -l ssh-agent -d 'SSH: authenticate through the ssh-agent ($SSH_AUTH_SOCK)'
complete -c fencekit -n "__fish_fencekit_using_subcommand off" -l ssh-accept-new -d 'SSH: accept and record an unknown host key (a changed one is still refused)'
complete -c fencekit -n "__fish_fencekit_using_subcommand off" -l use-sudo -d 'SSH: run the remote commands through sudo'
complete -c fencekit -n "__fish_fencekit_using_subcommand off" -l missing-as-off -d 'SSH (virsh): a domain that does not exist counts as off'
complete -c fencekit -n "__fish_fencekit_using_subcommand off" -l allow-self-fence -d 'AWS: allow off/reboot of the instance this process runs on (the metadata service tells; refused otherwise)'
complete -c fencekit -n "__fish_fencekit_using_subcommand off" -l azure-msi -d 'Azure: authenticate as the managed identity (a workload identity\'s AZURE_FEDERATED_TOKEN_FILE first, then the metadata service; --username names a user-assigned one). Without credentials given, the SDKs\' order is used'
complete -c fencekit -n "__fish_fencekit_using_subcommand off" -l pve-skiplock -d 'Proxmox VE: send skiplock=1 with power requests, so that a locked guest (backup, migration, snapshot) is powered anyway (root@pam only; warned). Inventories use settings.skiplock'
complete -c fencekit -n "__fish_fencekit_using_subcommand off" -l ovirt-no-filter -d 'oVirt: send `Filter: false` (an administrator\'s view of every VM; default: `Filter: true`, what a user\'s permissions show). Inventories use settings.filter'
complete -c fencekit -n "__fish_fencekit_using_subcommand off" -l ovirt-cookies -d 'oVirt: keep the engine\'s session cookie for the run (logged in again once when it expires). Inventories use settings.cookies'
complete -c fencekit -n "__fish_fencekit_using_subcommand off" -l ibm-private -d 'IBM Cloud: the private endpoints (IAM and the service, from inside IBM Cloud) instead of the public ones'
complete -c fencekit -n "__fish_fencekit_using_subcommand off" -s v -l verbose -d 'More detail on stderr (-v, -vv, -vvv); never shows secrets'
complete -c fencekit -n "__fish_fencekit_using_subcommand off" -l force -d 'Act beyond --max-fence anyway; needs --reason and an audit trail'
complete -c fencekit -n "__fish_fencekit_using_subcommand off" -l on-despite-hook-failure -d 'reboot: power the node on even if the confirmed-off hook failed (the result still fails); without it the node is left off'
complete -c fencekit -n "__fish_fencekit_using_subcommand off" -l crashdump -d 'Send an NMI first and let the node\'s kdump save a crash dump (it reports with fence_kdump_send) before the hard power-off'
complete -c fencekit -n "__fish_fencekit_using_subcommand off" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c fencekit -n "__fish_fencekit_using_subcommand off" -s V -l version -d 'Print version'
complete -c fencekit -n "__fish_fencekit_using_subcommand reboot" -s i -l inventory -d 'Inventory file (TOML) naming nodes and their fencing methods' -r -F
complete -c fencekit -n "__fish_fencekit_using_subcommand reboot" -l parallel -d 'Most targets in flight at once' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand reboot" -l stagger -d 'For on and reboot: start node i after i × DUR (spreads inrush current)' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand reboot" -l bmc-interval -d 'Least time between two sessions on one device (nodes sharing a BMC, or systems of one Redfish service; not PDUs, which serve their rack one request at a time)' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand reboot" -l max-per-address -d 'Most sessions at once to one address, within this run (several devices behind one address: VirtualBMC ports, sushy-tools systems)' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand reboot" -l level -d 'Use only this fencing level of each inventory node (1 = first method)' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand reboot" -l audit -d 'Append one JSON line per finished target to this file' -r -F
complete -c fencekit -n "__fish_fencekit_using_subcommand reboot" -l address -d 'The node\'s own (data-plane) address, probed by verify (URL targets; inventories set `address`)' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand reboot" -l probe-port -d 'A TCP port the node\'s host answers on when up (repeatable)' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand reboot" -l max-off-watts -d 'Verify: the most watts a node reported off may draw; more is a contradiction (inventory: max_off_watts)' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand reboot" -l expect-uuid -d 'Refuse to act unless the machine reports this system UUID (read in the same session, before any power command; IPMI GUIDs match in either byte order). For one URL or --ip target; inventories use `uuid = "…"`' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand reboot" -l expect-serial -d 'Refuse to act unless the machine reports this serial number (same rules as --expect-uuid)' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand reboot" -l driver -d 'Driver for --ip targets' -r -f -a "ipmi\t'IPMI over LAN (RMCP+ or 1.5)'
redfish\t'Redfish over HTTPS'
ssh\t'SSH to a hypervisor (virsh; --plug names the domain)'
aws\t'Amazon EC2 (--region, --plug names the instance)'"
complete -c fencekit -n "__fish_fencekit_using_subcommand reboot" -s a -l ip -d 'BMC address (instead of a target URL)' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand reboot" -s u -l ipport -d 'BMC UDP port' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand reboot" -s l -l username -d 'BMC user name' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand reboot" -s p -l password -d 'Password on the command line: visible to other local users (prefer the options below)' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand reboot" -l password-file -d 'Read the password from a file (first line)' -r -F
complete -c fencekit -n "__fish_fencekit_using_subcommand reboot" -l password-env -d 'Read the password from this environment variable' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand reboot" -s S -l password-script -d 'Run this command (sh -c) and use its output as the password' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand reboot" -s n -l plug -d 'Which machine behind the device: a Redfish system (Id, Name, UUID or @odata.id), a hypervisor\'s domain, an EC2 instance (--driver aws)' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand reboot" -l ca-cert -d 'HTTPS: trust this PEM file (a private CA, or the device\'s own self-signed certificate)' -r -F
complete -c fencekit -n "__fish_fencekit_using_subcommand reboot" -l ssl-fingerprint -d 'HTTPS: accept exactly the certificate with this SHA-256 fingerprint (SHA256:…)' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand reboot" -s C -l cipher -d 'RMCP+ cipher suite: auto (prefer 17), 3 or 17' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand reboot" -s L -l privlvl -d 'Session privilege level' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand reboot" -l ipmi-version -d 'IPMI version: 2.0 (RMCP+, the default) or 1.5 (legacy BMCs); --auth alone implies 1.5' -r -f -a "2.0\t'RMCP+ (lanplus)'
1.5\t'IPMI 1.5 (lan)'"
complete -c fencekit -n "__fish_fencekit_using_subcommand reboot" -s A -l auth -d 'IPMI 1.5 authentication type (md5, password, none); implies --ipmi-version 1.5' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand reboot" -l hexadecimal-kg -d 'BMC key K_g in hexadecimal' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand reboot" -s W -l workaround -d 'IPMI vendor workarounds, FreeIPMI\'s names, comma-separated (docs/ipmi.md; those that drop a check are warned about on every use)' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand reboot" -l systems-uri -d 'Redfish: the ComputerSystem URI (skips discovery)' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand reboot" -l redfish-uri -d 'Redfish: the service root used for discovery' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand reboot" -s k -l identity-file -d 'SSH: authenticate with this private key (its passphrase from the password options)' -r -F
complete -c fencekit -n "__fish_fencekit_using_subcommand reboot" -l ssh-known-hosts -d 'SSH: check the host key against this known_hosts file (default ~/.ssh/known_hosts)' -r -F
complete -c fencekit -n "__fish_fencekit_using_subcommand reboot" -l ssh-host-key -d 'SSH: accept exactly the host key with this fingerprint (SHA256:…)' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand reboot" -l region -d 'AWS: the region (default AWS_REGION / AWS_DEFAULT_REGION)' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand reboot" -l access-key -d 'AWS: the access key ID; its secret access key comes from the password options (--password-file …, FENCEKIT_PASSWORD). Without it: the SDKs\' credential chain (environment, shared files, web identity, instance metadata)' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand reboot" -l endpoint-url -d 'AWS: the EC2 endpoint (default: AWS_ENDPOINT_URL_EC2, AWS_ENDPOINT_URL, or the region\'s public one)' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand reboot" -l expect-node-name -d 'AWS: refuse to act (before any state change) unless the instance\'s PrivateDnsName is NAME (how OpenShift and most Kubernetes on EC2 name nodes). Inventories use node_name' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand reboot" -l expect-tag -d 'AWS: refuse to act unless the instance carries this tag (KEY=VALUE, e.g. Name=worker-0). Inventories use expect_tag' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand reboot" -l kubeconfig -d 'KubeVirt: the kubeconfig file (default: KUBECONFIG, ~/.kube/config, then the pod\'s service account). Inventories use kubeconfig. With `check --far`: read the Secrets and nodes with `kubectl` (or `oc`) through this kubeconfig' -r -F
complete -c fencekit -n "__fish_fencekit_using_subcommand reboot" -l expect-vm-uid -d 'KubeVirt: refuse to act (before any state change) unless the VirtualMachine\'s metadata.uid is UID. Inventories use vm_uid; --expect-uuid compares the VMI\'s firmware UUID' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand reboot" -l azure-tenant -d 'Azure: the tenant of the service principal (--username is its client ID, the password options its secret; default AZURE_TENANT_ID). Inventories use settings.tenant' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand reboot" -l azure-client-certificate -d 'Azure: a PEM file with the service principal\'s certificate and key, instead of a secret' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand reboot" -l azure-cloud -d 'Azure: the cloud (china, usgov, germany, stack; default public)' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand reboot" -l azure-metadata-endpoint -d 'Azure: an Azure Stack Hub\'s Resource Manager URL (with --azure-cloud stack)' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand reboot" -l expect-vm-id -d 'Azure: refuse to act (before any state change) unless the VM\'s vmId is this. Inventories use settings.vm_id; --expect-uuid compares the SMBIOS UUID (the vmId in either byte order)' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand reboot" -l pve-vmtype -d 'Proxmox VE: the guest\'s type, qemu or lxc (default: found in the cluster\'s resources). Inventories use settings.vmtype' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand reboot" -l os-auth-url -d 'OpenStack: Keystone\'s URL (https://keystone:5000/v3), instead of the cloud of clouds.yaml the target names. Inventories use settings.auth_url' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand reboot" -l os-project-name -d 'OpenStack: the project to scope the token to (with --os-auth-url)' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand reboot" -l os-domain-name -d 'OpenStack: the users\' and the project\'s domain (default: Default)' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand reboot" -l os-region-name -d 'OpenStack: the catalog\'s region to take compute from' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand reboot" -l os-interface -d 'OpenStack: the catalog\'s interface: public (default), internal or admin' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand reboot" -l ovirt-api-path -d 'oVirt: the API\'s path (default /ovirt-engine/api). Inventories use settings.api_path' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand reboot" -l ibm-crn -d 'IBM Power VS: the workspace\'s CRN, sent with every request (crn:v1:bluemix:public:power-iaas:ZONE:a/ACCOUNT:WORKSPACE::). Inventories use settings.crn' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand reboot" -l ibm-proxy -d 'IBM Cloud: an HTTP proxy for IAM and the API (default HTTPS_PROXY)' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand reboot" -l power-wait -d 'Blind wait after each power command before polling' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand reboot" -l power-timeout -d 'How long a power transition may take to be observed' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand reboot" -l poll-interval -d 'First interval between status polls (grows up to 1s while nothing changes)' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand reboot" -l confirm -d 'Consecutive identical reads needed to confirm a state' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand reboot" -l retry-on -d 'Extra attempts of the power-on command' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand reboot" -s m -l method -d 'Reboot method' -r -f -a "onoff\t'Off (confirmed) then on (confirmed)'
cycle\t'One power-cycle command; unverified (with --verify: seen off, then on)'"
complete -c fencekit -n "__fish_fencekit_using_subcommand reboot" -l timeout -d 'Deadline for the whole action' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand reboot" -l login-timeout -d 'Bound on session set-up and on each request (within an action\'s --timeout, an IPMI set-up the BMC answered in part starts once more)' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand reboot" -s o -l output -d 'Output format' -r -f -a "human\t'Short lines for people'
json\t'One JSON document'
jsonl\t'One JSON object per event, as it happens, then one per result'
openmetrics\t'`check` only: OpenMetrics / Prometheus text (node_exporter\'s textfile collector)'"
complete -c fencekit -n "__fish_fencekit_using_subcommand reboot" -l max-fence -d 'Refuse (exit 64, nothing contacted) to act on more nodes than N, or than P% of the inventory (of the targets named, without one); default: the inventory\'s `max_fence`' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand reboot" -l reason -d 'Why --force is used (recorded in the audit trail with who used it)' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand reboot" -l on-confirmed-off -d 'Run CMD (sh -c) once while the node is observed off: after off is confirmed; during reboot, between the confirmed off and the power-on. It gets FENCEKIT_NODE, FENCEKIT_ACTION, FENCEKIT_METHOD, FENCEKIT_LEVEL, FENCEKIT_EVIDENCE and more, never a secret. Default: the inventory\'s `on_confirmed_off`' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand reboot" -l hook-timeout -d 'Time limit of the confirmed-off hook (cut to the action\'s deadline)' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand reboot" -l crashdump-wait -d '--crashdump: the longest wait for the dump, from the NMI; it must fit in --timeout with the power-off (--power-timeout, --login-timeout)' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand reboot" -l kdump-port -d '--crashdump: UDP port the node\'s fence_kdump_send messages arrive on' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand reboot" -l kdump-quiet -d '--crashdump: once the node reports, the dump counts as done when no message came for this long (fence_kdump_send repeats every 10s by default)' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand reboot" -l all -d 'Act on every node of the inventory'
complete -c fencekit -n "__fish_fencekit_using_subcommand reboot" -l dry-run -d 'Resolve targets, methods and credential references; print the plan; contact nothing'
complete -c fencekit -n "__fish_fencekit_using_subcommand reboot" -l no-lock -d 'Do not take the per-BMC lock that serialises fencekit processes on this host'
complete -c fencekit -n "__fish_fencekit_using_subcommand reboot" -l verify -d 'After off / reboot: verify the result (off, or back on) and fold it into the result'
complete -c fencekit -n "__fish_fencekit_using_subcommand reboot" -l accept-bmc-only -d 'Verify: accept the BMC\'s reads alone (verdict bmc-only) as proof for these nodes; recorded in the evidence and the audit (inventory: accept_bmc_only = true)'
complete -c fencekit -n "__fish_fencekit_using_subcommand reboot" -l allow-host-only -d 'Allow a host profile (ssh://NODE/host) as a node\'s only fencing level: the node is asked to power itself off, which nothing can observe, so off is "sent, unverified" (exit 3) unless --verify proves it (inventory: allow_host_only = true)'
complete -c fencekit -n "__fish_fencekit_using_subcommand reboot" -l ssl-insecure -d 'HTTPS: do not verify the certificate (anyone on the path can impersonate the BMC or the API server)'
complete -c fencekit -n "__fish_fencekit_using_subcommand reboot" -l accept-unauthenticated-replies -d 'IPMI 1.5: accept replies without an authentication code when the BMC says per-message authentication is disabled (anyone on the path can then forge its answers)'
complete -c fencekit -n "__fish_fencekit_using_subcommand reboot" -l redfish-session -d 'Redfish: log in through SessionService (X-Auth-Token) and log out at the end'
complete -c fencekit -n "__fish_fencekit_using_subcommand reboot" -l ssh-agent -d 'SSH: authenticate through the ssh-agent ($SSH_AUTH_SOCK)'
complete -c fencekit -n "__fish_fencekit_using_subcommand reboot" -l ssh-accept-new -d 'SSH: accept and record an unknown host key (a changed one is still refused)'
complete -c fencekit -n "__fish_fencekit_using_subcommand reboot" -l use-sudo -d 'SSH: run the remote commands through sudo'
complete -c fencekit -n "__fish_fencekit_using_subcommand reboot" -l missing-as-off -d 'SSH (virsh): a domain that does not exist counts as off'
complete -c fencekit -n "__fish_fencekit_using_subcommand reboot" -l allow-self-fence -d 'AWS: allow off/reboot of the instance this process runs on (the metadata service tells; refused otherwise)'
complete -c fencekit -n "__fish_fencekit_using_subcommand reboot" -l azure-msi -d 'Azure: authenticate as the managed identity (a workload identity\'s AZURE_FEDERATED_TOKEN_FILE first, then the metadata service; --username names a user-assigned one). Without credentials given, the SDKs\' order is used'
complete -c fencekit -n "__fish_fencekit_using_subcommand reboot" -l pve-skiplock -d 'Proxmox VE: send skiplock=1 with power requests, so that a locked guest (backup, migration, snapshot) is powered anyway (root@pam only; warned). Inventories use settings.skiplock'
complete -c fencekit -n "__fish_fencekit_using_subcommand reboot" -l ovirt-no-filter -d 'oVirt: send `Filter: false` (an administrator\'s view of every VM; default: `Filter: true`, what a user\'s permissions show). Inventories use settings.filter'
complete -c fencekit -n "__fish_fencekit_using_subcommand reboot" -l ovirt-cookies -d 'oVirt: keep the engine\'s session cookie for the run (logged in again once when it expires). Inventories use settings.cookies'
complete -c fencekit -n "__fish_fencekit_using_subcommand reboot" -l ibm-private -d 'IBM Cloud: the private endpoints (IAM and the service, from inside IBM Cloud) instead of the public ones'
complete -c fencekit -n "__fish_fencekit_using_subcommand reboot" -s v -l verbose -d 'More detail on stderr (-v, -vv, -vvv); never shows secrets'
complete -c fencekit -n "__fish_fencekit_using_subcommand reboot" -l force -d 'Act beyond --max-fence anyway; needs --reason and an audit trail'
complete -c fencekit -n "__fish_fencekit_using_subcommand reboot" -l on-despite-hook-failure -d 'reboot: power the node on even if the confirmed-off hook failed (the result still fails); without it the node is left off'
complete -c fencekit -n "__fish_fencekit_using_subcommand reboot" -l crashdump -d 'Send an NMI first and let the node\'s kdump save a crash dump (it reports with fence_kdump_send) before the hard power-off'
complete -c fencekit -n "__fish_fencekit_using_subcommand reboot" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c fencekit -n "__fish_fencekit_using_subcommand reboot" -s V -l version -d 'Print version'
complete -c fencekit -n "__fish_fencekit_using_subcommand monitor" -s i -l inventory -d 'Inventory file (TOML) naming nodes and their fencing methods' -r -F
complete -c fencekit -n "__fish_fencekit_using_subcommand monitor" -l parallel -d 'Most targets in flight at once' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand monitor" -l stagger -d 'For on and reboot: start node i after i × DUR (spreads inrush current)' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand monitor" -l bmc-interval -d 'Least time between two sessions on one device (nodes sharing a BMC, or systems of one Redfish service; not PDUs, which serve their rack one request at a time)' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand monitor" -l max-per-address -d 'Most sessions at once to one address, within this run (several devices behind one address: VirtualBMC ports, sushy-tools systems)' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand monitor" -l level -d 'Use only this fencing level of each inventory node (1 = first method)' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand monitor" -l audit -d 'Append one JSON line per finished target to this file' -r -F
complete -c fencekit -n "__fish_fencekit_using_subcommand monitor" -l address -d 'The node\'s own (data-plane) address, probed by verify (URL targets; inventories set `address`)' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand monitor" -l probe-port -d 'A TCP port the node\'s host answers on when up (repeatable)' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand monitor" -l max-off-watts -d 'Verify: the most watts a node reported off may draw; more is a contradiction (inventory: max_off_watts)' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand monitor" -l expect-uuid -d 'Refuse to act unless the machine reports this system UUID (read in the same session, before any power command; IPMI GUIDs match in either byte order). For one URL or --ip target; inventories use `uuid = "…"`' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand monitor" -l expect-serial -d 'Refuse to act unless the machine reports this serial number (same rules as --expect-uuid)' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand monitor" -l driver -d 'Driver for --ip targets' -r -f -a "ipmi\t'IPMI over LAN (RMCP+ or 1.5)'
redfish\t'Redfish over HTTPS'
ssh\t'SSH to a hypervisor (virsh; --plug names the domain)'
aws\t'Amazon EC2 (--region, --plug names the instance)'"
complete -c fencekit -n "__fish_fencekit_using_subcommand monitor" -s a -l ip -d 'BMC address (instead of a target URL)' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand monitor" -s u -l ipport -d 'BMC UDP port' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand monitor" -s l -l username -d 'BMC user name' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand monitor" -s p -l password -d 'Password on the command line: visible to other local users (prefer the options below)' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand monitor" -l password-file -d 'Read the password from a file (first line)' -r -F
complete -c fencekit -n "__fish_fencekit_using_subcommand monitor" -l password-env -d 'Read the password from this environment variable' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand monitor" -s S -l password-script -d 'Run this command (sh -c) and use its output as the password' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand monitor" -s n -l plug -d 'Which machine behind the device: a Redfish system (Id, Name, UUID or @odata.id), a hypervisor\'s domain, an EC2 instance (--driver aws)' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand monitor" -l ca-cert -d 'HTTPS: trust this PEM file (a private CA, or the device\'s own self-signed certificate)' -r -F
complete -c fencekit -n "__fish_fencekit_using_subcommand monitor" -l ssl-fingerprint -d 'HTTPS: accept exactly the certificate with this SHA-256 fingerprint (SHA256:…)' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand monitor" -s C -l cipher -d 'RMCP+ cipher suite: auto (prefer 17), 3 or 17' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand monitor" -s L -l privlvl -d 'Session privilege level' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand monitor" -l ipmi-version -d 'IPMI version: 2.0 (RMCP+, the default) or 1.5 (legacy BMCs); --auth alone implies 1.5' -r -f -a "2.0\t'RMCP+ (lanplus)'
1.5\t'IPMI 1.5 (lan)'"
complete -c fencekit -n "__fish_fencekit_using_subcommand monitor" -s A -l auth -d 'IPMI 1.5 authentication type (md5, password, none); implies --ipmi-version 1.5' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand monitor" -l hexadecimal-kg -d 'BMC key K_g in hexadecimal' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand monitor" -s W -l workaround -d 'IPMI vendor workarounds, FreeIPMI\'s names, comma-separated (docs/ipmi.md; those that drop a check are warned about on every use)' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand monitor" -l systems-uri -d 'Redfish: the ComputerSystem URI (skips discovery)' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand monitor" -l redfish-uri -d 'Redfish: the service root used for discovery' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand monitor" -s k -l identity-file -d 'SSH: authenticate with this private key (its passphrase from the password options)' -r -F
complete -c fencekit -n "__fish_fencekit_using_subcommand monitor" -l ssh-known-hosts -d 'SSH: check the host key against this known_hosts file (default ~/.ssh/known_hosts)' -r -F
complete -c fencekit -n "__fish_fencekit_using_subcommand monitor" -l ssh-host-key -d 'SSH: accept exactly the host key with this fingerprint (SHA256:…)' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand monitor" -l region -d 'AWS: the region (default AWS_REGION / AWS_DEFAULT_REGION)' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand monitor" -l access-key -d 'AWS: the access key ID; its secret access key comes from the password options (--password-file …, FENCEKIT_PASSWORD). Without it: the SDKs\' credential chain (environment, shared files, web identity, instance metadata)' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand monitor" -l endpoint-url -d 'AWS: the EC2 endpoint (default: AWS_ENDPOINT_URL_EC2, AWS_ENDPOINT_URL, or the region\'s public one)' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand monitor" -l expect-node-name -d 'AWS: refuse to act (before any state change) unless the instance\'s PrivateDnsName is NAME (how OpenShift and most Kubernetes on EC2 name nodes). Inventories use node_name' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand monitor" -l expect-tag -d 'AWS: refuse to act unless the instance carries this tag (KEY=VALUE, e.g. Name=worker-0). Inventories use expect_tag' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand monitor" -l kubeconfig -d 'KubeVirt: the kubeconfig file (default: KUBECONFIG, ~/.kube/config, then the pod\'s service account). Inventories use kubeconfig. With `check --far`: read the Secrets and nodes with `kubectl` (or `oc`) through this kubeconfig' -r -F
complete -c fencekit -n "__fish_fencekit_using_subcommand monitor" -l expect-vm-uid -d 'KubeVirt: refuse to act (before any state change) unless the VirtualMachine\'s metadata.uid is UID. Inventories use vm_uid; --expect-uuid compares the VMI\'s firmware UUID' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand monitor" -l azure-tenant -d 'Azure: the tenant of the service principal (--username is its client ID, the password options its secret; default AZURE_TENANT_ID). Inventories use settings.tenant' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand monitor" -l azure-client-certificate -d 'Azure: a PEM file with the service principal\'s certificate and key, instead of a secret' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand monitor" -l azure-cloud -d 'Azure: the cloud (china, usgov, germany, stack; default public)' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand monitor" -l azure-metadata-endpoint -d 'Azure: an Azure Stack Hub\'s Resource Manager URL (with --azure-cloud stack)' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand monitor" -l expect-vm-id -d 'Azure: refuse to act (before any state change) unless the VM\'s vmId is this. Inventories use settings.vm_id; --expect-uuid compares the SMBIOS UUID (the vmId in either byte order)' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand monitor" -l pve-vmtype -d 'Proxmox VE: the guest\'s type, qemu or lxc (default: found in the cluster\'s resources). Inventories use settings.vmtype' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand monitor" -l os-auth-url -d 'OpenStack: Keystone\'s URL (https://keystone:5000/v3), instead of the cloud of clouds.yaml the target names. Inventories use settings.auth_url' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand monitor" -l os-project-name -d 'OpenStack: the project to scope the token to (with --os-auth-url)' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand monitor" -l os-domain-name -d 'OpenStack: the users\' and the project\'s domain (default: Default)' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand monitor" -l os-region-name -d 'OpenStack: the catalog\'s region to take compute from' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand monitor" -l os-interface -d 'OpenStack: the catalog\'s interface: public (default), internal or admin' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand monitor" -l ovirt-api-path -d 'oVirt: the API\'s path (default /ovirt-engine/api). Inventories use settings.api_path' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand monitor" -l ibm-crn -d 'IBM Power VS: the workspace\'s CRN, sent with every request (crn:v1:bluemix:public:power-iaas:ZONE:a/ACCOUNT:WORKSPACE::). Inventories use settings.crn' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand monitor" -l ibm-proxy -d 'IBM Cloud: an HTTP proxy for IAM and the API (default HTTPS_PROXY)' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand monitor" -l power-wait -d 'Blind wait after each power command before polling' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand monitor" -l power-timeout -d 'How long a power transition may take to be observed' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand monitor" -l poll-interval -d 'First interval between status polls (grows up to 1s while nothing changes)' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand monitor" -l confirm -d 'Consecutive identical reads needed to confirm a state' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand monitor" -l retry-on -d 'Extra attempts of the power-on command' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand monitor" -s m -l method -d 'Reboot method' -r -f -a "onoff\t'Off (confirmed) then on (confirmed)'
cycle\t'One power-cycle command; unverified (with --verify: seen off, then on)'"
complete -c fencekit -n "__fish_fencekit_using_subcommand monitor" -l timeout -d 'Deadline for the whole action' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand monitor" -l login-timeout -d 'Bound on session set-up and on each request (within an action\'s --timeout, an IPMI set-up the BMC answered in part starts once more)' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand monitor" -s o -l output -d 'Output format' -r -f -a "human\t'Short lines for people'
json\t'One JSON document'
jsonl\t'One JSON object per event, as it happens, then one per result'
openmetrics\t'`check` only: OpenMetrics / Prometheus text (node_exporter\'s textfile collector)'"
complete -c fencekit -n "__fish_fencekit_using_subcommand monitor" -l all -d 'Act on every node of the inventory'
complete -c fencekit -n "__fish_fencekit_using_subcommand monitor" -l dry-run -d 'Resolve targets, methods and credential references; print the plan; contact nothing'
complete -c fencekit -n "__fish_fencekit_using_subcommand monitor" -l no-lock -d 'Do not take the per-BMC lock that serialises fencekit processes on this host'
complete -c fencekit -n "__fish_fencekit_using_subcommand monitor" -l verify -d 'After off / reboot: verify the result (off, or back on) and fold it into the result'
complete -c fencekit -n "__fish_fencekit_using_subcommand monitor" -l accept-bmc-only -d 'Verify: accept the BMC\'s reads alone (verdict bmc-only) as proof for these nodes; recorded in the evidence and the audit (inventory: accept_bmc_only = true)'
complete -c fencekit -n "__fish_fencekit_using_subcommand monitor" -l allow-host-only -d 'Allow a host profile (ssh://NODE/host) as a node\'s only fencing level: the node is asked to power itself off, which nothing can observe, so off is "sent, unverified" (exit 3) unless --verify proves it (inventory: allow_host_only = true)'
complete -c fencekit -n "__fish_fencekit_using_subcommand monitor" -l ssl-insecure -d 'HTTPS: do not verify the certificate (anyone on the path can impersonate the BMC or the API server)'
complete -c fencekit -n "__fish_fencekit_using_subcommand monitor" -l accept-unauthenticated-replies -d 'IPMI 1.5: accept replies without an authentication code when the BMC says per-message authentication is disabled (anyone on the path can then forge its answers)'
complete -c fencekit -n "__fish_fencekit_using_subcommand monitor" -l redfish-session -d 'Redfish: log in through SessionService (X-Auth-Token) and log out at the end'
complete -c fencekit -n "__fish_fencekit_using_subcommand monitor" -l ssh-agent -d 'SSH: authenticate through the ssh-agent ($SSH_AUTH_SOCK)'
complete -c fencekit -n "__fish_fencekit_using_subcommand monitor" -l ssh-accept-new -d 'SSH: accept and record an unknown host key (a changed one is still refused)'
complete -c fencekit -n "__fish_fencekit_using_subcommand monitor" -l use-sudo -d 'SSH: run the remote commands through sudo'
complete -c fencekit -n "__fish_fencekit_using_subcommand monitor" -l missing-as-off -d 'SSH (virsh): a domain that does not exist counts as off'
complete -c fencekit -n "__fish_fencekit_using_subcommand monitor" -l allow-self-fence -d 'AWS: allow off/reboot of the instance this process runs on (the metadata service tells; refused otherwise)'
complete -c fencekit -n "__fish_fencekit_using_subcommand monitor" -l azure-msi -d 'Azure: authenticate as the managed identity (a workload identity\'s AZURE_FEDERATED_TOKEN_FILE first, then the metadata service; --username names a user-assigned one). Without credentials given, the SDKs\' order is used'
complete -c fencekit -n "__fish_fencekit_using_subcommand monitor" -l pve-skiplock -d 'Proxmox VE: send skiplock=1 with power requests, so that a locked guest (backup, migration, snapshot) is powered anyway (root@pam only; warned). Inventories use settings.skiplock'
complete -c fencekit -n "__fish_fencekit_using_subcommand monitor" -l ovirt-no-filter -d 'oVirt: send `Filter: false` (an administrator\'s view of every VM; default: `Filter: true`, what a user\'s permissions show). Inventories use settings.filter'
complete -c fencekit -n "__fish_fencekit_using_subcommand monitor" -l ovirt-cookies -d 'oVirt: keep the engine\'s session cookie for the run (logged in again once when it expires). Inventories use settings.cookies'
complete -c fencekit -n "__fish_fencekit_using_subcommand monitor" -l ibm-private -d 'IBM Cloud: the private endpoints (IAM and the service, from inside IBM Cloud) instead of the public ones'
complete -c fencekit -n "__fish_fencekit_using_subcommand monitor" -s v -l verbose -d 'More detail on stderr (-v, -vv, -vvv); never shows secrets'
complete -c fencekit -n "__fish_fencekit_using_subcommand monitor" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c fencekit -n "__fish_fencekit_using_subcommand monitor" -s V -l version -d 'Print version'
complete -c fencekit -n "__fish_fencekit_using_subcommand verify" -s i -l inventory -d 'Inventory file (TOML) naming nodes and their fencing methods' -r -F
complete -c fencekit -n "__fish_fencekit_using_subcommand verify" -l parallel -d 'Most targets in flight at once' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand verify" -l stagger -d 'For on and reboot: start node i after i × DUR (spreads inrush current)' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand verify" -l bmc-interval -d 'Least time between two sessions on one device (nodes sharing a BMC, or systems of one Redfish service; not PDUs, which serve their rack one request at a time)' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand verify" -l max-per-address -d 'Most sessions at once to one address, within this run (several devices behind one address: VirtualBMC ports, sushy-tools systems)' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand verify" -l level -d 'Use only this fencing level of each inventory node (1 = first method)' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand verify" -l audit -d 'Append one JSON line per finished target to this file' -r -F
complete -c fencekit -n "__fish_fencekit_using_subcommand verify" -l address -d 'The node\'s own (data-plane) address, probed by verify (URL targets; inventories set `address`)' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand verify" -l probe-port -d 'A TCP port the node\'s host answers on when up (repeatable)' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand verify" -l max-off-watts -d 'Verify: the most watts a node reported off may draw; more is a contradiction (inventory: max_off_watts)' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand verify" -l expect-uuid -d 'Refuse to act unless the machine reports this system UUID (read in the same session, before any power command; IPMI GUIDs match in either byte order). For one URL or --ip target; inventories use `uuid = "…"`' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand verify" -l expect-serial -d 'Refuse to act unless the machine reports this serial number (same rules as --expect-uuid)' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand verify" -l driver -d 'Driver for --ip targets' -r -f -a "ipmi\t'IPMI over LAN (RMCP+ or 1.5)'
redfish\t'Redfish over HTTPS'
ssh\t'SSH to a hypervisor (virsh; --plug names the domain)'
aws\t'Amazon EC2 (--region, --plug names the instance)'"
complete -c fencekit -n "__fish_fencekit_using_subcommand verify" -s a -l ip -d 'BMC address (instead of a target URL)' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand verify" -s u -l ipport -d 'BMC UDP port' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand verify" -s l -l username -d 'BMC user name' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand verify" -s p -l password -d 'Password on the command line: visible to other local users (prefer the options below)' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand verify" -l password-file -d 'Read the password from a file (first line)' -r -F
complete -c fencekit -n "__fish_fencekit_using_subcommand verify" -l password-env -d 'Read the password from this environment variable' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand verify" -s S -l password-script -d 'Run this command (sh -c) and use its output as the password' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand verify" -s n -l plug -d 'Which machine behind the device: a Redfish system (Id, Name, UUID or @odata.id), a hypervisor\'s domain, an EC2 instance (--driver aws)' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand verify" -l ca-cert -d 'HTTPS: trust this PEM file (a private CA, or the device\'s own self-signed certificate)' -r -F
complete -c fencekit -n "__fish_fencekit_using_subcommand verify" -l ssl-fingerprint -d 'HTTPS: accept exactly the certificate with this SHA-256 fingerprint (SHA256:…)' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand verify" -s C -l cipher -d 'RMCP+ cipher suite: auto (prefer 17), 3 or 17' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand verify" -s L -l privlvl -d 'Session privilege level' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand verify" -l ipmi-version -d 'IPMI version: 2.0 (RMCP+, the default) or 1.5 (legacy BMCs); --auth alone implies 1.5' -r -f -a "2.0\t'RMCP+ (lanplus)'
1.5\t'IPMI 1.5 (lan)'"
complete -c fencekit -n "__fish_fencekit_using_subcommand verify" -s A -l auth -d 'IPMI 1.5 authentication type (md5, password, none); implies --ipmi-version 1.5' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand verify" -l hexadecimal-kg -d 'BMC key K_g in hexadecimal' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand verify" -s W -l workaround -d 'IPMI vendor workarounds, FreeIPMI\'s names, comma-separated (docs/ipmi.md; those that drop a check are warned about on every use)' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand verify" -l systems-uri -d 'Redfish: the ComputerSystem URI (skips discovery)' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand verify" -l redfish-uri -d 'Redfish: the service root used for discovery' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand verify" -s k -l identity-file -d 'SSH: authenticate with this private key (its passphrase from the password options)' -r -F
complete -c fencekit -n "__fish_fencekit_using_subcommand verify" -l ssh-known-hosts -d 'SSH: check the host key against this known_hosts file (default ~/.ssh/known_hosts)' -r -F
complete -c fencekit -n "__fish_fencekit_using_subcommand verify" -l ssh-host-key -d 'SSH: accept exactly the host key with this fingerprint (SHA256:…)' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand verify" -l region -d 'AWS: the region (default AWS_REGION / AWS_DEFAULT_REGION)' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand verify" -l access-key -d 'AWS: the access key ID; its secret access key comes from the password options (--password-file …, FENCEKIT_PASSWORD). Without it: the SDKs\' credential chain (environment, shared files, web identity, instance metadata)' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand verify" -l endpoint-url -d 'AWS: the EC2 endpoint (default: AWS_ENDPOINT_URL_EC2, AWS_ENDPOINT_URL, or the region\'s public one)' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand verify" -l expect-node-name -d 'AWS: refuse to act (before any state change) unless the instance\'s PrivateDnsName is NAME (how OpenShift and most Kubernetes on EC2 name nodes). Inventories use node_name' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand verify" -l expect-tag -d 'AWS: refuse to act unless the instance carries this tag (KEY=VALUE, e.g. Name=worker-0). Inventories use expect_tag' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand verify" -l kubeconfig -d 'KubeVirt: the kubeconfig file (default: KUBECONFIG, ~/.kube/config, then the pod\'s service account). Inventories use kubeconfig. With `check --far`: read the Secrets and nodes with `kubectl` (or `oc`) through this kubeconfig' -r -F
complete -c fencekit -n "__fish_fencekit_using_subcommand verify" -l expect-vm-uid -d 'KubeVirt: refuse to act (before any state change) unless the VirtualMachine\'s metadata.uid is UID. Inventories use vm_uid; --expect-uuid compares the VMI\'s firmware UUID' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand verify" -l azure-tenant -d 'Azure: the tenant of the service principal (--username is its client ID, the password options its secret; default AZURE_TENANT_ID). Inventories use settings.tenant' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand verify" -l azure-client-certificate -d 'Azure: a PEM file with the service principal\'s certificate and key, instead of a secret' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand verify" -l azure-cloud -d 'Azure: the cloud (china, usgov, germany, stack; default public)' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand verify" -l azure-metadata-endpoint -d 'Azure: an Azure Stack Hub\'s Resource Manager URL (with --azure-cloud stack)' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand verify" -l expect-vm-id -d 'Azure: refuse to act (before any state change) unless the VM\'s vmId is this. Inventories use settings.vm_id; --expect-uuid compares the SMBIOS UUID (the vmId in either byte order)' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand verify" -l pve-vmtype -d 'Proxmox VE: the guest\'s type, qemu or lxc (default: found in the cluster\'s resources). Inventories use settings.vmtype' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand verify" -l os-auth-url -d 'OpenStack: Keystone\'s URL (https://keystone:5000/v3), instead of the cloud of clouds.yaml the target names. Inventories use settings.auth_url' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand verify" -l os-project-name -d 'OpenStack: the project to scope the token to (with --os-auth-url)' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand verify" -l os-domain-name -d 'OpenStack: the users\' and the project\'s domain (default: Default)' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand verify" -l os-region-name -d 'OpenStack: the catalog\'s region to take compute from' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand verify" -l os-interface -d 'OpenStack: the catalog\'s interface: public (default), internal or admin' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand verify" -l ovirt-api-path -d 'oVirt: the API\'s path (default /ovirt-engine/api). Inventories use settings.api_path' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand verify" -l ibm-crn -d 'IBM Power VS: the workspace\'s CRN, sent with every request (crn:v1:bluemix:public:power-iaas:ZONE:a/ACCOUNT:WORKSPACE::). Inventories use settings.crn' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand verify" -l ibm-proxy -d 'IBM Cloud: an HTTP proxy for IAM and the API (default HTTPS_PROXY)' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand verify" -l power-wait -d 'Blind wait after each power command before polling' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand verify" -l power-timeout -d 'How long a power transition may take to be observed' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand verify" -l poll-interval -d 'First interval between status polls (grows up to 1s while nothing changes)' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand verify" -l confirm -d 'Consecutive identical reads needed to confirm a state' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand verify" -l retry-on -d 'Extra attempts of the power-on command' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand verify" -s m -l method -d 'Reboot method' -r -f -a "onoff\t'Off (confirmed) then on (confirmed)'
cycle\t'One power-cycle command; unverified (with --verify: seen off, then on)'"
complete -c fencekit -n "__fish_fencekit_using_subcommand verify" -l timeout -d 'Deadline for the whole action' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand verify" -l login-timeout -d 'Bound on session set-up and on each request (within an action\'s --timeout, an IPMI set-up the BMC answered in part starts once more)' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand verify" -s o -l output -d 'Output format' -r -f -a "human\t'Short lines for people'
json\t'One JSON document'
jsonl\t'One JSON object per event, as it happens, then one per result'
openmetrics\t'`check` only: OpenMetrics / Prometheus text (node_exporter\'s textfile collector)'"
complete -c fencekit -n "__fish_fencekit_using_subcommand verify" -l expect -d 'The state to prove' -r -f -a "off\t''
on\t''"
complete -c fencekit -n "__fish_fencekit_using_subcommand verify" -l samples -d 'Consecutive BMC reads per channel' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand verify" -l interval -d 'Time between two BMC reads' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand verify" -l probe-timeout -d 'Bound on one TCP probe of the host' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand verify" -l boot-timeout -d '--expect on: how long the host may take to answer after power-on' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand verify" -l baseline -d '--expect on: compare the nodes\' [[node.check]] digests with this baseline file' -r -F
complete -c fencekit -n "__fish_fencekit_using_subcommand verify" -l record-baseline -d '--expect on: run the checks and record their digests in this file (merged per node)' -r -F
complete -c fencekit -n "__fish_fencekit_using_subcommand verify" -l all -d 'Act on every node of the inventory'
complete -c fencekit -n "__fish_fencekit_using_subcommand verify" -l dry-run -d 'Resolve targets, methods and credential references; print the plan; contact nothing'
complete -c fencekit -n "__fish_fencekit_using_subcommand verify" -l no-lock -d 'Do not take the per-BMC lock that serialises fencekit processes on this host'
complete -c fencekit -n "__fish_fencekit_using_subcommand verify" -l verify -d 'After off / reboot: verify the result (off, or back on) and fold it into the result'
complete -c fencekit -n "__fish_fencekit_using_subcommand verify" -l accept-bmc-only -d 'Verify: accept the BMC\'s reads alone (verdict bmc-only) as proof for these nodes; recorded in the evidence and the audit (inventory: accept_bmc_only = true)'
complete -c fencekit -n "__fish_fencekit_using_subcommand verify" -l allow-host-only -d 'Allow a host profile (ssh://NODE/host) as a node\'s only fencing level: the node is asked to power itself off, which nothing can observe, so off is "sent, unverified" (exit 3) unless --verify proves it (inventory: allow_host_only = true)'
complete -c fencekit -n "__fish_fencekit_using_subcommand verify" -l ssl-insecure -d 'HTTPS: do not verify the certificate (anyone on the path can impersonate the BMC or the API server)'
complete -c fencekit -n "__fish_fencekit_using_subcommand verify" -l accept-unauthenticated-replies -d 'IPMI 1.5: accept replies without an authentication code when the BMC says per-message authentication is disabled (anyone on the path can then forge its answers)'
complete -c fencekit -n "__fish_fencekit_using_subcommand verify" -l redfish-session -d 'Redfish: log in through SessionService (X-Auth-Token) and log out at the end'
complete -c fencekit -n "__fish_fencekit_using_subcommand verify" -l ssh-agent -d 'SSH: authenticate through the ssh-agent ($SSH_AUTH_SOCK)'
complete -c fencekit -n "__fish_fencekit_using_subcommand verify" -l ssh-accept-new -d 'SSH: accept and record an unknown host key (a changed one is still refused)'
complete -c fencekit -n "__fish_fencekit_using_subcommand verify" -l use-sudo -d 'SSH: run the remote commands through sudo'
complete -c fencekit -n "__fish_fencekit_using_subcommand verify" -l missing-as-off -d 'SSH (virsh): a domain that does not exist counts as off'
complete -c fencekit -n "__fish_fencekit_using_subcommand verify" -l allow-self-fence -d 'AWS: allow off/reboot of the instance this process runs on (the metadata service tells; refused otherwise)'
complete -c fencekit -n "__fish_fencekit_using_subcommand verify" -l azure-msi -d 'Azure: authenticate as the managed identity (a workload identity\'s AZURE_FEDERATED_TOKEN_FILE first, then the metadata service; --username names a user-assigned one). Without credentials given, the SDKs\' order is used'
complete -c fencekit -n "__fish_fencekit_using_subcommand verify" -l pve-skiplock -d 'Proxmox VE: send skiplock=1 with power requests, so that a locked guest (backup, migration, snapshot) is powered anyway (root@pam only; warned). Inventories use settings.skiplock'
complete -c fencekit -n "__fish_fencekit_using_subcommand verify" -l ovirt-no-filter -d 'oVirt: send `Filter: false` (an administrator\'s view of every VM; default: `Filter: true`, what a user\'s permissions show). Inventories use settings.filter'
complete -c fencekit -n "__fish_fencekit_using_subcommand verify" -l ovirt-cookies -d 'oVirt: keep the engine\'s session cookie for the run (logged in again once when it expires). Inventories use settings.cookies'
complete -c fencekit -n "__fish_fencekit_using_subcommand verify" -l ibm-private -d 'IBM Cloud: the private endpoints (IAM and the service, from inside IBM Cloud) instead of the public ones'
complete -c fencekit -n "__fish_fencekit_using_subcommand verify" -s v -l verbose -d 'More detail on stderr (-v, -vv, -vvv); never shows secrets'
complete -c fencekit -n "__fish_fencekit_using_subcommand verify" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c fencekit -n "__fish_fencekit_using_subcommand verify" -s V -l version -d 'Print version'
complete -c fencekit -n "__fish_fencekit_using_subcommand check" -s i -l inventory -d 'Inventory file (TOML) naming nodes and their fencing methods' -r -F
complete -c fencekit -n "__fish_fencekit_using_subcommand check" -l parallel -d 'Most targets in flight at once' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand check" -l stagger -d 'For on and reboot: start node i after i × DUR (spreads inrush current)' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand check" -l bmc-interval -d 'Least time between two sessions on one device (nodes sharing a BMC, or systems of one Redfish service; not PDUs, which serve their rack one request at a time)' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand check" -l max-per-address -d 'Most sessions at once to one address, within this run (several devices behind one address: VirtualBMC ports, sushy-tools systems)' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand check" -l level -d 'Use only this fencing level of each inventory node (1 = first method)' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand check" -l audit -d 'Append one JSON line per finished target to this file' -r -F
complete -c fencekit -n "__fish_fencekit_using_subcommand check" -l address -d 'The node\'s own (data-plane) address, probed by verify (URL targets; inventories set `address`)' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand check" -l probe-port -d 'A TCP port the node\'s host answers on when up (repeatable)' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand check" -l max-off-watts -d 'Verify: the most watts a node reported off may draw; more is a contradiction (inventory: max_off_watts)' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand check" -l expect-uuid -d 'Refuse to act unless the machine reports this system UUID (read in the same session, before any power command; IPMI GUIDs match in either byte order). For one URL or --ip target; inventories use `uuid = "…"`' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand check" -l expect-serial -d 'Refuse to act unless the machine reports this serial number (same rules as --expect-uuid)' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand check" -l driver -d 'Driver for --ip targets' -r -f -a "ipmi\t'IPMI over LAN (RMCP+ or 1.5)'
redfish\t'Redfish over HTTPS'
ssh\t'SSH to a hypervisor (virsh; --plug names the domain)'
aws\t'Amazon EC2 (--region, --plug names the instance)'"
complete -c fencekit -n "__fish_fencekit_using_subcommand check" -s a -l ip -d 'BMC address (instead of a target URL)' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand check" -s u -l ipport -d 'BMC UDP port' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand check" -s l -l username -d 'BMC user name' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand check" -s p -l password -d 'Password on the command line: visible to other local users (prefer the options below)' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand check" -l password-file -d 'Read the password from a file (first line)' -r -F
complete -c fencekit -n "__fish_fencekit_using_subcommand check" -l password-env -d 'Read the password from this environment variable' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand check" -s S -l password-script -d 'Run this command (sh -c) and use its output as the password' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand check" -s n -l plug -d 'Which machine behind the device: a Redfish system (Id, Name, UUID or @odata.id), a hypervisor\'s domain, an EC2 instance (--driver aws)' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand check" -l ca-cert -d 'HTTPS: trust this PEM file (a private CA, or the device\'s own self-signed certificate)' -r -F
complete -c fencekit -n "__fish_fencekit_using_subcommand check" -l ssl-fingerprint -d 'HTTPS: accept exactly the certificate with this SHA-256 fingerprint (SHA256:…)' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand check" -s C -l cipher -d 'RMCP+ cipher suite: auto (prefer 17), 3 or 17' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand check" -s L -l privlvl -d 'Session privilege level' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand check" -l ipmi-version -d 'IPMI version: 2.0 (RMCP+, the default) or 1.5 (legacy BMCs); --auth alone implies 1.5' -r -f -a "2.0\t'RMCP+ (lanplus)'
1.5\t'IPMI 1.5 (lan)'"
complete -c fencekit -n "__fish_fencekit_using_subcommand check" -s A -l auth -d 'IPMI 1.5 authentication type (md5, password, none); implies --ipmi-version 1.5' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand check" -l hexadecimal-kg -d 'BMC key K_g in hexadecimal' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand check" -s W -l workaround -d 'IPMI vendor workarounds, FreeIPMI\'s names, comma-separated (docs/ipmi.md; those that drop a check are warned about on every use)' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand check" -l systems-uri -d 'Redfish: the ComputerSystem URI (skips discovery)' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand check" -l redfish-uri -d 'Redfish: the service root used for discovery' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand check" -s k -l identity-file -d 'SSH: authenticate with this private key (its passphrase from the password options)' -r -F
complete -c fencekit -n "__fish_fencekit_using_subcommand check" -l ssh-known-hosts -d 'SSH: check the host key against this known_hosts file (default ~/.ssh/known_hosts)' -r -F
complete -c fencekit -n "__fish_fencekit_using_subcommand check" -l ssh-host-key -d 'SSH: accept exactly the host key with this fingerprint (SHA256:…)' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand check" -l region -d 'AWS: the region (default AWS_REGION / AWS_DEFAULT_REGION)' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand check" -l access-key -d 'AWS: the access key ID; its secret access key comes from the password options (--password-file …, FENCEKIT_PASSWORD). Without it: the SDKs\' credential chain (environment, shared files, web identity, instance metadata)' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand check" -l endpoint-url -d 'AWS: the EC2 endpoint (default: AWS_ENDPOINT_URL_EC2, AWS_ENDPOINT_URL, or the region\'s public one)' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand check" -l expect-node-name -d 'AWS: refuse to act (before any state change) unless the instance\'s PrivateDnsName is NAME (how OpenShift and most Kubernetes on EC2 name nodes). Inventories use node_name' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand check" -l expect-tag -d 'AWS: refuse to act unless the instance carries this tag (KEY=VALUE, e.g. Name=worker-0). Inventories use expect_tag' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand check" -l kubeconfig -d 'KubeVirt: the kubeconfig file (default: KUBECONFIG, ~/.kube/config, then the pod\'s service account). Inventories use kubeconfig. With `check --far`: read the Secrets and nodes with `kubectl` (or `oc`) through this kubeconfig' -r -F
complete -c fencekit -n "__fish_fencekit_using_subcommand check" -l expect-vm-uid -d 'KubeVirt: refuse to act (before any state change) unless the VirtualMachine\'s metadata.uid is UID. Inventories use vm_uid; --expect-uuid compares the VMI\'s firmware UUID' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand check" -l azure-tenant -d 'Azure: the tenant of the service principal (--username is its client ID, the password options its secret; default AZURE_TENANT_ID). Inventories use settings.tenant' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand check" -l azure-client-certificate -d 'Azure: a PEM file with the service principal\'s certificate and key, instead of a secret' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand check" -l azure-cloud -d 'Azure: the cloud (china, usgov, germany, stack; default public)' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand check" -l azure-metadata-endpoint -d 'Azure: an Azure Stack Hub\'s Resource Manager URL (with --azure-cloud stack)' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand check" -l expect-vm-id -d 'Azure: refuse to act (before any state change) unless the VM\'s vmId is this. Inventories use settings.vm_id; --expect-uuid compares the SMBIOS UUID (the vmId in either byte order)' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand check" -l pve-vmtype -d 'Proxmox VE: the guest\'s type, qemu or lxc (default: found in the cluster\'s resources). Inventories use settings.vmtype' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand check" -l os-auth-url -d 'OpenStack: Keystone\'s URL (https://keystone:5000/v3), instead of the cloud of clouds.yaml the target names. Inventories use settings.auth_url' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand check" -l os-project-name -d 'OpenStack: the project to scope the token to (with --os-auth-url)' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand check" -l os-domain-name -d 'OpenStack: the users\' and the project\'s domain (default: Default)' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand check" -l os-region-name -d 'OpenStack: the catalog\'s region to take compute from' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand check" -l os-interface -d 'OpenStack: the catalog\'s interface: public (default), internal or admin' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand check" -l ovirt-api-path -d 'oVirt: the API\'s path (default /ovirt-engine/api). Inventories use settings.api_path' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand check" -l ibm-crn -d 'IBM Power VS: the workspace\'s CRN, sent with every request (crn:v1:bluemix:public:power-iaas:ZONE:a/ACCOUNT:WORKSPACE::). Inventories use settings.crn' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand check" -l ibm-proxy -d 'IBM Cloud: an HTTP proxy for IAM and the API (default HTTPS_PROXY)' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand check" -l power-wait -d 'Blind wait after each power command before polling' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand check" -l power-timeout -d 'How long a power transition may take to be observed' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand check" -l poll-interval -d 'First interval between status polls (grows up to 1s while nothing changes)' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand check" -l confirm -d 'Consecutive identical reads needed to confirm a state' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand check" -l retry-on -d 'Extra attempts of the power-on command' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand check" -s m -l method -d 'Reboot method' -r -f -a "onoff\t'Off (confirmed) then on (confirmed)'
cycle\t'One power-cycle command; unverified (with --verify: seen off, then on)'"
complete -c fencekit -n "__fish_fencekit_using_subcommand check" -l timeout -d 'Deadline for the whole action' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand check" -l login-timeout -d 'Bound on session set-up and on each request (within an action\'s --timeout, an IPMI set-up the BMC answered in part starts once more)' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand check" -s o -l output -d 'Output format' -r -f -a "human\t'Short lines for people'
json\t'One JSON document'
jsonl\t'One JSON object per event, as it happens, then one per result'
openmetrics\t'`check` only: OpenMetrics / Prometheus text (node_exporter\'s textfile collector)'"
complete -c fencekit -n "__fish_fencekit_using_subcommand check" -l baseline -d 'The baseline (TOML) that --record writes and a check compares with: every difference is a named drift (see below), exit 4 weakened, 5 changed, 1 broken' -r -F
complete -c fencekit -n "__fish_fencekit_using_subcommand check" -l probe-timeout -d 'Bound on one TCP probe of a node\'s own address (with --baseline)' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand check" -l watch -d 'Check again and again, each node about every INTERVAL (±10 %, never two sessions at once on one BMC, --bmc-interval between them), log one line per change, until SIGTERM or SIGINT. Never sends a power command' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand check" -l listen -d 'With --watch: serve /metrics (OpenMetrics) and /healthz over HTTP on this address only, e.g. 127.0.0.1:9487 (HTTPS and passwords: --web-config)' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand check" -l web-config -d 'With --listen: TLS, client certificates, basic-auth users (bcrypt) and headers for /metrics, from a Prometheus exporter-toolkit web configuration (YAML). An unknown key or an option not carried out is refused (exit 64); see docs/monitoring.md' -r -F
complete -c fencekit -n "__fish_fencekit_using_subcommand check" -l cib -d 'With --pacemaker: read the CIB from this file instead of `cibadmin -Q`' -r -F
complete -c fencekit -n "__fish_fencekit_using_subcommand check" -l sbd-config -d 'With --pacemaker: SBD\'s configuration on this node (default /etc/sysconfig/sbd or /etc/default/sbd, when sbd runs); given, sbd is taken to run with it' -r -F
complete -c fencekit -n "__fish_fencekit_using_subcommand check" -l far -d 'Check a FenceAgentsRemediationTemplate or FenceAgentsRemediation (YAML or JSON): the agent, its parameters, every node\'s parameters, timeout and retries, then each node\'s device with the argv FAR builds' -r -F
complete -c fencekit -n "__fish_fencekit_using_subcommand check" -l secret -d 'With --far: a Secret the CR references (YAML or JSON; repeatable)' -r -F
complete -c fencekit -n "__fish_fencekit_using_subcommand check" -l nodes -d 'With --far: the cluster\'s nodes, one name a line (or a Node list, `kubectl get nodes -o yaml`)' -r -F
complete -c fencekit -n "__fish_fencekit_using_subcommand check" -l remediation-timeout -d 'With --far: the time the remediation as a whole may take (NHC\'s escalating-remediation timeout), to compare FAR\'s retries with' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand check" -l all -d 'Act on every node of the inventory'
complete -c fencekit -n "__fish_fencekit_using_subcommand check" -l dry-run -d 'Resolve targets, methods and credential references; print the plan; contact nothing'
complete -c fencekit -n "__fish_fencekit_using_subcommand check" -l no-lock -d 'Do not take the per-BMC lock that serialises fencekit processes on this host'
complete -c fencekit -n "__fish_fencekit_using_subcommand check" -l verify -d 'After off / reboot: verify the result (off, or back on) and fold it into the result'
complete -c fencekit -n "__fish_fencekit_using_subcommand check" -l accept-bmc-only -d 'Verify: accept the BMC\'s reads alone (verdict bmc-only) as proof for these nodes; recorded in the evidence and the audit (inventory: accept_bmc_only = true)'
complete -c fencekit -n "__fish_fencekit_using_subcommand check" -l allow-host-only -d 'Allow a host profile (ssh://NODE/host) as a node\'s only fencing level: the node is asked to power itself off, which nothing can observe, so off is "sent, unverified" (exit 3) unless --verify proves it (inventory: allow_host_only = true)'
complete -c fencekit -n "__fish_fencekit_using_subcommand check" -l ssl-insecure -d 'HTTPS: do not verify the certificate (anyone on the path can impersonate the BMC or the API server)'
complete -c fencekit -n "__fish_fencekit_using_subcommand check" -l accept-unauthenticated-replies -d 'IPMI 1.5: accept replies without an authentication code when the BMC says per-message authentication is disabled (anyone on the path can then forge its answers)'
complete -c fencekit -n "__fish_fencekit_using_subcommand check" -l redfish-session -d 'Redfish: log in through SessionService (X-Auth-Token) and log out at the end'
complete -c fencekit -n "__fish_fencekit_using_subcommand check" -l ssh-agent -d 'SSH: authenticate through the ssh-agent ($SSH_AUTH_SOCK)'
complete -c fencekit -n "__fish_fencekit_using_subcommand check" -l ssh-accept-new -d 'SSH: accept and record an unknown host key (a changed one is still refused)'
complete -c fencekit -n "__fish_fencekit_using_subcommand check" -l use-sudo -d 'SSH: run the remote commands through sudo'
complete -c fencekit -n "__fish_fencekit_using_subcommand check" -l missing-as-off -d 'SSH (virsh): a domain that does not exist counts as off'
complete -c fencekit -n "__fish_fencekit_using_subcommand check" -l allow-self-fence -d 'AWS: allow off/reboot of the instance this process runs on (the metadata service tells; refused otherwise)'
complete -c fencekit -n "__fish_fencekit_using_subcommand check" -l azure-msi -d 'Azure: authenticate as the managed identity (a workload identity\'s AZURE_FEDERATED_TOKEN_FILE first, then the metadata service; --username names a user-assigned one). Without credentials given, the SDKs\' order is used'
complete -c fencekit -n "__fish_fencekit_using_subcommand check" -l pve-skiplock -d 'Proxmox VE: send skiplock=1 with power requests, so that a locked guest (backup, migration, snapshot) is powered anyway (root@pam only; warned). Inventories use settings.skiplock'
complete -c fencekit -n "__fish_fencekit_using_subcommand check" -l ovirt-no-filter -d 'oVirt: send `Filter: false` (an administrator\'s view of every VM; default: `Filter: true`, what a user\'s permissions show). Inventories use settings.filter'
complete -c fencekit -n "__fish_fencekit_using_subcommand check" -l ovirt-cookies -d 'oVirt: keep the engine\'s session cookie for the run (logged in again once when it expires). Inventories use settings.cookies'
complete -c fencekit -n "__fish_fencekit_using_subcommand check" -l ibm-private -d 'IBM Cloud: the private endpoints (IAM and the service, from inside IBM Cloud) instead of the public ones'
complete -c fencekit -n "__fish_fencekit_using_subcommand check" -s v -l verbose -d 'More detail on stderr (-v, -vv, -vvv); never shows secrets'
complete -c fencekit -n "__fish_fencekit_using_subcommand check" -l record-identity -d 'Print, on stdout, an `[identity.NODE]` table for each inventory node that is not pinned yet and whose levels agree about who it is, ready to append to the inventory (`>> inventory.toml`); the check table goes to stderr. Exit 1 when a node could not be recorded'
complete -c fencekit -n "__fish_fencekit_using_subcommand check" -l record -d 'Record what each working level looks like now (identity, cipher suite and privilege, certificate, host key, reset types, outlet names, whether the node\'s address answers) in --baseline, replacing those levels\' records. Exit 1 when a level would fail (it keeps its earlier record)'
complete -c fencekit -n "__fish_fencekit_using_subcommand check" -l pacemaker -d 'Check Pacemaker\'s fencing configuration (the live CIB through `cibadmin -Q`, or --cib): coverage, timing, two-node delays, SBD, then every device fencekit implements, with the parameters the fencer passes. Named findings; exit 0 fine, 1 broken, 4 weakened'
complete -c fencekit -n "__fish_fencekit_using_subcommand check" -l no-device-check -d 'With --pacemaker or --far: read the configuration only; do not contact the devices'
complete -c fencekit -n "__fish_fencekit_using_subcommand check" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c fencekit -n "__fish_fencekit_using_subcommand check" -s V -l version -d 'Print version'
complete -c fencekit -n "__fish_fencekit_using_subcommand list" -s i -l inventory -d 'Inventory file (TOML) naming nodes and their fencing methods' -r -F
complete -c fencekit -n "__fish_fencekit_using_subcommand list" -l parallel -d 'Most targets in flight at once' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand list" -l stagger -d 'For on and reboot: start node i after i × DUR (spreads inrush current)' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand list" -l bmc-interval -d 'Least time between two sessions on one device (nodes sharing a BMC, or systems of one Redfish service; not PDUs, which serve their rack one request at a time)' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand list" -l max-per-address -d 'Most sessions at once to one address, within this run (several devices behind one address: VirtualBMC ports, sushy-tools systems)' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand list" -l level -d 'Use only this fencing level of each inventory node (1 = first method)' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand list" -l audit -d 'Append one JSON line per finished target to this file' -r -F
complete -c fencekit -n "__fish_fencekit_using_subcommand list" -l address -d 'The node\'s own (data-plane) address, probed by verify (URL targets; inventories set `address`)' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand list" -l probe-port -d 'A TCP port the node\'s host answers on when up (repeatable)' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand list" -l max-off-watts -d 'Verify: the most watts a node reported off may draw; more is a contradiction (inventory: max_off_watts)' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand list" -l expect-uuid -d 'Refuse to act unless the machine reports this system UUID (read in the same session, before any power command; IPMI GUIDs match in either byte order). For one URL or --ip target; inventories use `uuid = "…"`' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand list" -l expect-serial -d 'Refuse to act unless the machine reports this serial number (same rules as --expect-uuid)' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand list" -l driver -d 'Driver for --ip targets' -r -f -a "ipmi\t'IPMI over LAN (RMCP+ or 1.5)'
redfish\t'Redfish over HTTPS'
ssh\t'SSH to a hypervisor (virsh; --plug names the domain)'
aws\t'Amazon EC2 (--region, --plug names the instance)'"
complete -c fencekit -n "__fish_fencekit_using_subcommand list" -s a -l ip -d 'BMC address (instead of a target URL)' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand list" -s u -l ipport -d 'BMC UDP port' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand list" -s l -l username -d 'BMC user name' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand list" -s p -l password -d 'Password on the command line: visible to other local users (prefer the options below)' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand list" -l password-file -d 'Read the password from a file (first line)' -r -F
complete -c fencekit -n "__fish_fencekit_using_subcommand list" -l password-env -d 'Read the password from this environment variable' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand list" -s S -l password-script -d 'Run this command (sh -c) and use its output as the password' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand list" -s n -l plug -d 'Which machine behind the device: a Redfish system (Id, Name, UUID or @odata.id), a hypervisor\'s domain, an EC2 instance (--driver aws)' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand list" -l ca-cert -d 'HTTPS: trust this PEM file (a private CA, or the device\'s own self-signed certificate)' -r -F
complete -c fencekit -n "__fish_fencekit_using_subcommand list" -l ssl-fingerprint -d 'HTTPS: accept exactly the certificate with this SHA-256 fingerprint (SHA256:…)' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand list" -s C -l cipher -d 'RMCP+ cipher suite: auto (prefer 17), 3 or 17' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand list" -s L -l privlvl -d 'Session privilege level' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand list" -l ipmi-version -d 'IPMI version: 2.0 (RMCP+, the default) or 1.5 (legacy BMCs); --auth alone implies 1.5' -r -f -a "2.0\t'RMCP+ (lanplus)'
1.5\t'IPMI 1.5 (lan)'"
complete -c fencekit -n "__fish_fencekit_using_subcommand list" -s A -l auth -d 'IPMI 1.5 authentication type (md5, password, none); implies --ipmi-version 1.5' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand list" -l hexadecimal-kg -d 'BMC key K_g in hexadecimal' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand list" -s W -l workaround -d 'IPMI vendor workarounds, FreeIPMI\'s names, comma-separated (docs/ipmi.md; those that drop a check are warned about on every use)' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand list" -l systems-uri -d 'Redfish: the ComputerSystem URI (skips discovery)' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand list" -l redfish-uri -d 'Redfish: the service root used for discovery' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand list" -s k -l identity-file -d 'SSH: authenticate with this private key (its passphrase from the password options)' -r -F
complete -c fencekit -n "__fish_fencekit_using_subcommand list" -l ssh-known-hosts -d 'SSH: check the host key against this known_hosts file (default ~/.ssh/known_hosts)' -r -F
complete -c fencekit -n "__fish_fencekit_using_subcommand list" -l ssh-host-key -d 'SSH: accept exactly the host key with this fingerprint (SHA256:…)' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand list" -l region -d 'AWS: the region (default AWS_REGION / AWS_DEFAULT_REGION)' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand list" -l access-key -d 'AWS: the access key ID; its secret access key comes from the password options (--password-file …, FENCEKIT_PASSWORD). Without it: the SDKs\' credential chain (environment, shared files, web identity, instance metadata)' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand list" -l endpoint-url -d 'AWS: the EC2 endpoint (default: AWS_ENDPOINT_URL_EC2, AWS_ENDPOINT_URL, or the region\'s public one)' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand list" -l expect-node-name -d 'AWS: refuse to act (before any state change) unless the instance\'s PrivateDnsName is NAME (how OpenShift and most Kubernetes on EC2 name nodes). Inventories use node_name' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand list" -l expect-tag -d 'AWS: refuse to act unless the instance carries this tag (KEY=VALUE, e.g. Name=worker-0). Inventories use expect_tag' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand list" -l kubeconfig -d 'KubeVirt: the kubeconfig file (default: KUBECONFIG, ~/.kube/config, then the pod\'s service account). Inventories use kubeconfig. With `check --far`: read the Secrets and nodes with `kubectl` (or `oc`) through this kubeconfig' -r -F
complete -c fencekit -n "__fish_fencekit_using_subcommand list" -l expect-vm-uid -d 'KubeVirt: refuse to act (before any state change) unless the VirtualMachine\'s metadata.uid is UID. Inventories use vm_uid; --expect-uuid compares the VMI\'s firmware UUID' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand list" -l azure-tenant -d 'Azure: the tenant of the service principal (--username is its client ID, the password options its secret; default AZURE_TENANT_ID). Inventories use settings.tenant' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand list" -l azure-client-certificate -d 'Azure: a PEM file with the service principal\'s certificate and key, instead of a secret' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand list" -l azure-cloud -d 'Azure: the cloud (china, usgov, germany, stack; default public)' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand list" -l azure-metadata-endpoint -d 'Azure: an Azure Stack Hub\'s Resource Manager URL (with --azure-cloud stack)' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand list" -l expect-vm-id -d 'Azure: refuse to act (before any state change) unless the VM\'s vmId is this. Inventories use settings.vm_id; --expect-uuid compares the SMBIOS UUID (the vmId in either byte order)' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand list" -l pve-vmtype -d 'Proxmox VE: the guest\'s type, qemu or lxc (default: found in the cluster\'s resources). Inventories use settings.vmtype' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand list" -l os-auth-url -d 'OpenStack: Keystone\'s URL (https://keystone:5000/v3), instead of the cloud of clouds.yaml the target names. Inventories use settings.auth_url' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand list" -l os-project-name -d 'OpenStack: the project to scope the token to (with --os-auth-url)' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand list" -l os-domain-name -d 'OpenStack: the users\' and the project\'s domain (default: Default)' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand list" -l os-region-name -d 'OpenStack: the catalog\'s region to take compute from' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand list" -l os-interface -d 'OpenStack: the catalog\'s interface: public (default), internal or admin' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand list" -l ovirt-api-path -d 'oVirt: the API\'s path (default /ovirt-engine/api). Inventories use settings.api_path' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand list" -l ibm-crn -d 'IBM Power VS: the workspace\'s CRN, sent with every request (crn:v1:bluemix:public:power-iaas:ZONE:a/ACCOUNT:WORKSPACE::). Inventories use settings.crn' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand list" -l ibm-proxy -d 'IBM Cloud: an HTTP proxy for IAM and the API (default HTTPS_PROXY)' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand list" -l power-wait -d 'Blind wait after each power command before polling' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand list" -l power-timeout -d 'How long a power transition may take to be observed' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand list" -l poll-interval -d 'First interval between status polls (grows up to 1s while nothing changes)' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand list" -l confirm -d 'Consecutive identical reads needed to confirm a state' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand list" -l retry-on -d 'Extra attempts of the power-on command' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand list" -s m -l method -d 'Reboot method' -r -f -a "onoff\t'Off (confirmed) then on (confirmed)'
cycle\t'One power-cycle command; unverified (with --verify: seen off, then on)'"
complete -c fencekit -n "__fish_fencekit_using_subcommand list" -l timeout -d 'Deadline for the whole action' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand list" -l login-timeout -d 'Bound on session set-up and on each request (within an action\'s --timeout, an IPMI set-up the BMC answered in part starts once more)' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand list" -s o -l output -d 'Output format' -r -f -a "human\t'Short lines for people'
json\t'One JSON document'
jsonl\t'One JSON object per event, as it happens, then one per result'
openmetrics\t'`check` only: OpenMetrics / Prometheus text (node_exporter\'s textfile collector)'"
complete -c fencekit -n "__fish_fencekit_using_subcommand list" -l all -d 'Act on every node of the inventory'
complete -c fencekit -n "__fish_fencekit_using_subcommand list" -l dry-run -d 'Resolve targets, methods and credential references; print the plan; contact nothing'
complete -c fencekit -n "__fish_fencekit_using_subcommand list" -l no-lock -d 'Do not take the per-BMC lock that serialises fencekit processes on this host'
complete -c fencekit -n "__fish_fencekit_using_subcommand list" -l verify -d 'After off / reboot: verify the result (off, or back on) and fold it into the result'
complete -c fencekit -n "__fish_fencekit_using_subcommand list" -l accept-bmc-only -d 'Verify: accept the BMC\'s reads alone (verdict bmc-only) as proof for these nodes; recorded in the evidence and the audit (inventory: accept_bmc_only = true)'
complete -c fencekit -n "__fish_fencekit_using_subcommand list" -l allow-host-only -d 'Allow a host profile (ssh://NODE/host) as a node\'s only fencing level: the node is asked to power itself off, which nothing can observe, so off is "sent, unverified" (exit 3) unless --verify proves it (inventory: allow_host_only = true)'
complete -c fencekit -n "__fish_fencekit_using_subcommand list" -l ssl-insecure -d 'HTTPS: do not verify the certificate (anyone on the path can impersonate the BMC or the API server)'
complete -c fencekit -n "__fish_fencekit_using_subcommand list" -l accept-unauthenticated-replies -d 'IPMI 1.5: accept replies without an authentication code when the BMC says per-message authentication is disabled (anyone on the path can then forge its answers)'
complete -c fencekit -n "__fish_fencekit_using_subcommand list" -l redfish-session -d 'Redfish: log in through SessionService (X-Auth-Token) and log out at the end'
complete -c fencekit -n "__fish_fencekit_using_subcommand list" -l ssh-agent -d 'SSH: authenticate through the ssh-agent ($SSH_AUTH_SOCK)'
complete -c fencekit -n "__fish_fencekit_using_subcommand list" -l ssh-accept-new -d 'SSH: accept and record an unknown host key (a changed one is still refused)'
complete -c fencekit -n "__fish_fencekit_using_subcommand list" -l use-sudo -d 'SSH: run the remote commands through sudo'
complete -c fencekit -n "__fish_fencekit_using_subcommand list" -l missing-as-off -d 'SSH (virsh): a domain that does not exist counts as off'
complete -c fencekit -n "__fish_fencekit_using_subcommand list" -l allow-self-fence -d 'AWS: allow off/reboot of the instance this process runs on (the metadata service tells; refused otherwise)'
complete -c fencekit -n "__fish_fencekit_using_subcommand list" -l azure-msi -d 'Azure: authenticate as the managed identity (a workload identity\'s AZURE_FEDERATED_TOKEN_FILE first, then the metadata service; --username names a user-assigned one). Without credentials given, the SDKs\' order is used'
complete -c fencekit -n "__fish_fencekit_using_subcommand list" -l pve-skiplock -d 'Proxmox VE: send skiplock=1 with power requests, so that a locked guest (backup, migration, snapshot) is powered anyway (root@pam only; warned). Inventories use settings.skiplock'
complete -c fencekit -n "__fish_fencekit_using_subcommand list" -l ovirt-no-filter -d 'oVirt: send `Filter: false` (an administrator\'s view of every VM; default: `Filter: true`, what a user\'s permissions show). Inventories use settings.filter'
complete -c fencekit -n "__fish_fencekit_using_subcommand list" -l ovirt-cookies -d 'oVirt: keep the engine\'s session cookie for the run (logged in again once when it expires). Inventories use settings.cookies'
complete -c fencekit -n "__fish_fencekit_using_subcommand list" -l ibm-private -d 'IBM Cloud: the private endpoints (IAM and the service, from inside IBM Cloud) instead of the public ones'
complete -c fencekit -n "__fish_fencekit_using_subcommand list" -s v -l verbose -d 'More detail on stderr (-v, -vv, -vvv); never shows secrets'
complete -c fencekit -n "__fish_fencekit_using_subcommand list" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c fencekit -n "__fish_fencekit_using_subcommand list" -s V -l version -d 'Print version'
complete -c fencekit -n "__fish_fencekit_using_subcommand hold" -l for -d 'How long the hold lasts (it then expires by itself), e.g. 2h' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand hold" -l reason -d 'Why (shown to whoever is refused, and recorded)' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand hold" -l by -d 'Who holds (default: the local user)' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand hold" -s i -l inventory -d 'Inventory: names and ranges resolve there, and the nodes\' BMC endpoints are held too' -r -F
complete -c fencekit -n "__fish_fencekit_using_subcommand hold" -l audit -d 'Append one JSON line per hold to this file' -r -F
complete -c fencekit -n "__fish_fencekit_using_subcommand hold" -s o -l output -d 'Output format' -r -f -a "human\t'Short lines for people'
json\t'One JSON document'
jsonl\t'One JSON object per event, as it happens, then one per result'
openmetrics\t'`check` only: OpenMetrics / Prometheus text (node_exporter\'s textfile collector)'"
complete -c fencekit -n "__fish_fencekit_using_subcommand hold" -l all -d 'Hold every node of the inventory (a planned shutdown of the cluster)'
complete -c fencekit -n "__fish_fencekit_using_subcommand hold" -l list -d 'Show the holds in force (who, why, until when) instead'
complete -c fencekit -n "__fish_fencekit_using_subcommand hold" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c fencekit -n "__fish_fencekit_using_subcommand hold" -s V -l version -d 'Print version'
complete -c fencekit -n "__fish_fencekit_using_subcommand release" -l by -d 'Who releases (default: the local user)' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand release" -s i -l inventory -d 'Inventory (names and ranges resolve there)' -r -F
complete -c fencekit -n "__fish_fencekit_using_subcommand release" -l audit -d 'Append one JSON line per release to this file' -r -F
complete -c fencekit -n "__fish_fencekit_using_subcommand release" -l all -d 'Release every hold in force on this host'
complete -c fencekit -n "__fish_fencekit_using_subcommand release" -s h -l help -d 'Print help'
complete -c fencekit -n "__fish_fencekit_using_subcommand release" -s V -l version -d 'Print version'
complete -c fencekit -n "__fish_fencekit_using_subcommand ack" -l by -d 'Who acknowledges (default: the local user)' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand ack" -s h -l help -d 'Print help'
complete -c fencekit -n "__fish_fencekit_using_subcommand ack" -s V -l version -d 'Print version'
complete -c fencekit -n "__fish_fencekit_using_subcommand lab" -l nodes -d 'Number of simulated BMCs (at most 16384; each holds one or two open files, and the lab raises its own limit as far as it may)' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand lab" -l bind -d 'Loopback address of node01\'s BMC; node N gets this address + N-1 (every simulated BMC has an address of its own, as real ones do)' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand lab" -l ipmi-port-base -d 'First UDP port (node N gets base+N-1); 0 picks free ports' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand lab" -l username -d 'User name the BMCs accept' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand lab" -l password -d 'Password the BMCs accept' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand lab" -l power -d 'Initial power state' -r -f -a "on\t''
off\t''"
complete -c fencekit -n "__fish_fencekit_using_subcommand lab" -l loss -d 'Drop this fraction of datagrams in each direction (0.0-1.0)' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand lab" -l drop -d 'Drop these received datagrams (1-based, per node), e.g. 1,3' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand lab" -l delay -d 'Delay every answer by this much' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand lab" -l transition -d 'A power change becomes visible this long after the command' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand lab" -l ciphers -d 'Only offer these cipher suites (comma list of 3, 17)' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand lab" -l fault -d 'Faults for some nodes: PATTERN:KNOB[+KNOB…], e.g. \'node0[1-5]:stuck\' or \'node07:loss=0.5+delay=100ms\'. Knobs: stuck, silent, strict-state, no-cipher-query, ipmi-silent, lying, flap, draw-lies, no-meter, no-nmi, host-rst, host-alive, redfish-no-forceoff, off, loss=R, delay=DUR, transition=DUR, identity-of=NODE, no-identity, privilege=user|operator (a demoted account), vendor=NAME. Repeatable' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand lab" -l write-inventory -d 'Write an inventory of the lab\'s nodes to this file (the password to PATH.password, Redfish certificates to PATH.certs/)' -r -F
complete -c fencekit -n "__fish_fencekit_using_subcommand lab" -l hosts -d 'Simulate each node\'s host on 127.1.x.y (for verify): it accepts TCP connections while the node\'s real power is on and is silent (drops SYNs, like a dead machine) while it is off; knobs host-rst and host-alive change that. Without PORT each host gets a free port' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand lab" -l boot-delay -d 'How long a simulated host takes to answer after power-on' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand lab" -l redfish -d 'Redfish service per node: https (self-signed certificate), http, or none' -r -f -a "https\t''
http\t''
none\t''"
complete -c fencekit -n "__fish_fencekit_using_subcommand lab" -l pdus -d 'Switched PDUs feeding the nodes (SNMP v1/v2c/v3): node N hangs on outlet N of each; with 2, every node has two power supplies' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand lab" -l pdu-fault -d 'Faults for a PDU: NAME:KNOB[+KNOB…], e.g. \'B:refuse=1\' or \'A:loss=0.3\'. Knobs: refuse=N[,N…] (outlets that never switch), lying (reports off, keeps feeding), silent, loss=R. Repeatable' -r
complete -c fencekit -n "__fish_fencekit_using_subcommand lab" -l vendor -d 'Make every node\'s Redfish service answer like this BMC family (system path, reset types, success and refusal bodies, transitions shown or hidden, 202 + Task); per node: --fault \'PATTERN:vendor=NAME\'' -r -f -a "generic\t''
idrac\t''
ilo\t''
xcc\t''
smc\t''
supermicro\t''
bmcweb\t''
openbmc\t''
bmcweb204\t''
ami\t''
ami-task\t''"
complete -c fencekit -n "__fish_fencekit_using_subcommand lab" -l stuck -d 'Power never changes (commands are accepted and ignored)'
complete -c fencekit -n "__fish_fencekit_using_subcommand lab" -l strict-state -d 'Answer Chassis Control off-when-off with D5h (like Dell)'
complete -c fencekit -n "__fish_fencekit_using_subcommand lab" -l no-cipher-query -d 'Never answer Get Channel Cipher Suites (like ipmi_sim)'
complete -c fencekit -n "__fish_fencekit_using_subcommand lab" -s v -l verbose -d 'More detail on stderr'
complete -c fencekit -n "__fish_fencekit_using_subcommand lab" -s h -l help -d 'Print help'
complete -c fencekit -n "__fish_fencekit_using_subcommand lab" -s V -l version -d 'Print version'
complete -c fencekit -n "__fish_fencekit_using_subcommand demo" -s o -l output -d 'Output format' -r -f -a "human\t'Short lines for people'
json\t'One JSON document'
jsonl\t'One JSON object per event, as it happens, then one per result'
openmetrics\t'`check` only: OpenMetrics / Prometheus text (node_exporter\'s textfile collector)'"
complete -c fencekit -n "__fish_fencekit_using_subcommand demo" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c fencekit -n "__fish_fencekit_using_subcommand demo" -s V -l version -d 'Print version'
complete -c fencekit -n "__fish_fencekit_using_subcommand agents" -s h -l help -d 'Print help'
complete -c fencekit -n "__fish_fencekit_using_subcommand agents" -s V -l version -d 'Print version'
complete -c fencekit -n "__fish_fencekit_using_subcommand completions" -s h -l help -d 'Print help'
complete -c fencekit -n "__fish_fencekit_using_subcommand completions" -s V -l version -d 'Print version'
complete -c fencekit -n "__fish_fencekit_using_subcommand man" -s h -l help -d 'Print help'
complete -c fencekit -n "__fish_fencekit_using_subcommand man" -s V -l version -d 'Print version'
