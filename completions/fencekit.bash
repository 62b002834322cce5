_fencekit() {
    local i cur prev opts cmd
    COMPREPLY=()
    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
        cur="$2"
    else
        cur="${COMP_WORDS[COMP_CWORD]}"
    fi
    prev="$3"
    cmd=""
    opts=""

    for i in "${COMP_WORDS[@]:0:COMP_CWORD}"
    do
        case "${cmd},${i}" in
            ",$1")
                cmd="fencekit"
                ;;
            fencekit,ack)
                cmd="fencekit__subcmd__ack"
                ;;
            fencekit,agent)
                cmd="fencekit__subcmd__agent"
                ;;
            fencekit,agents)
                cmd="fencekit__subcmd__agents"
                ;;
            fencekit,check)
                cmd="fencekit__subcmd__check"
                ;;
            fencekit,completions)
                cmd="fencekit__subcmd__completions"
                ;;
            fencekit,demo)
                cmd="fencekit__subcmd__demo"
                ;;
            fencekit,hold)
                cmd="fencekit__subcmd__hold"
                ;;
            fencekit,lab)
                cmd="fencekit__subcmd__lab"
                ;;
            fencekit,list)
                cmd="fencekit__subcmd__list"
                ;;
            fencekit,man)
                cmd="fencekit__subcmd__man"
                ;;
            fencekit,monitor)
                cmd="fencekit__subcmd__monitor"
                ;;
            fencekit,off)
                cmd="fencekit__subcmd__off"
                ;;
            fencekit,on)
                cmd="fencekit__subcmd__on"
                ;;
            fencekit,reboot)
                cmd="fencekit__subcmd__reboot"
                ;;
            fencekit,release)
                cmd="fencekit__subcmd__release"
                ;;
            fencekit,status)
                cmd="fencekit__subcmd__status"
                ;;
            fencekit,verify)
                cmd="fencekit__subcmd__verify"
                ;;
            *)
                ;;
        esac
    done

    case "${cmd}" in
        fencekit)
            opts="-h -V --help --version status on off reboot monitor verify check list hold release ack lab demo agents agent completions man"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 1 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        fencekit__subcmd__ack)
            opts="-h -V --by --help --version"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --by)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        fencekit__subcmd__agent)
            opts="fence_ipmilan fence_ilo3 fence_ilo4 fence_ilo5 fence_ipmilanplus fence_imm fence_idrac fence_redfish fence_virsh fence_apc_snmp fence_tripplite_snmp fence_eaton_snmp fence_ibmblade fence_intelmodular fence_ipdu fence_ifmib fence_emerson fence_aws fence_kubevirt fence_vmware_soap fence_vmware_rest fence_azure_arm fence_pve fence_nutanix_ahv fence_rhevm fence_openstack fence_eps fence_cisco_ucs fence_amt_ws fence_ilo fence_ilo2 fence_gce fence_ibm_vpc fence_ibm_powervs"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        fencekit__subcmd__agents)
            opts="-h -V --help --version"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        fencekit__subcmd__check)
            opts="-i -a -u -l -p -S -n -C -L -A -W -k -m -o -v -h -V --inventory --all --parallel --stagger --bmc-interval --max-per-address --level --audit --dry-run --no-lock --address --probe-port --verify --accept-bmc-only --max-off-watts --allow-host-only --expect-uuid --expect-serial --driver --ip --ipport --username --password --password-file --password-env --password-script --plug --ca-cert --ssl-fingerprint --ssl-insecure --cipher --privlvl --ipmi-version --auth --hexadecimal-kg --accept-unauthenticated-replies --workaround --systems-uri --redfish-uri --redfish-session --identity-file --ssh-agent --ssh-known-hosts --ssh-host-key --ssh-accept-new --use-sudo --missing-as-off --region --access-key --endpoint-url --expect-node-name --expect-tag --allow-self-fence --kubeconfig --expect-vm-uid --azure-tenant --azure-client-certificate --azure-msi --azure-cloud --azure-metadata-endpoint --expect-vm-id --pve-skiplock --pve-vmtype --os-auth-url --os-project-name --os-domain-name --os-region-name --os-interface --ovirt-no-filter --ovirt-cookies --ovirt-api-path --ibm-crn --ibm-private --ibm-proxy --power-wait --power-timeout --poll-interval --confirm --retry-on --method --timeout --login-timeout --output --verbose --record-identity --baseline --record --probe-timeout --watch --listen --web-config --pacemaker --cib --sbd-config --far --secret --nodes --remediation-timeout --no-device-check --help --version"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --inventory)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                -i)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --parallel)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --stagger)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --bmc-interval)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --max-per-address)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --level)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --audit)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --address)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --probe-port)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --max-off-watts)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --expect-uuid)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --expect-serial)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --driver)
                    COMPREPLY=($(compgen -W "ipmi redfish ssh aws" -- "${cur}"))
                    return 0
                    ;;
                --ip)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                -a)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --ipport)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                -u)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --username)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                -l)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --password)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                -p)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --password-file)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --password-env)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --password-script)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                -S)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --plug)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                -n)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --ca-cert)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --ssl-fingerprint)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --cipher)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                -C)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --privlvl)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                -L)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --ipmi-version)
                    COMPREPLY=($(compgen -W "2.0 1.5" -- "${cur}"))
                    return 0
                    ;;
                --auth)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                -A)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --hexadecimal-kg)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --workaround)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                -W)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --systems-uri)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --redfish-uri)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --identity-file)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                -k)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --ssh-known-hosts)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --ssh-host-key)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --region)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --access-key)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --endpoint-url)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --expect-node-name)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --expect-tag)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --kubeconfig)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --expect-vm-uid)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --azure-tenant)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --azure-client-certificate)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --azure-cloud)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --azure-metadata-endpoint)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --expect-vm-id)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --pve-vmtype)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --os-auth-url)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --os-project-name)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --os-domain-name)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --os-region-name)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --os-interface)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --ovirt-api-path)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --ibm-crn)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --ibm-proxy)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --power-wait)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --power-timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --poll-interval)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --confirm)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --retry-on)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --method)
                    COMPREPLY=($(compgen -W "onoff cycle" -- "${cur}"))
                    return 0
                    ;;
                -m)
                    COMPREPLY=($(compgen -W "onoff cycle" -- "${cur}"))
                    return 0
                    ;;
                --timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --login-timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --output)
                    COMPREPLY=($(compgen -W "human json jsonl openmetrics" -- "${cur}"))
                    return 0
                    ;;
                -o)
                    COMPREPLY=($(compgen -W "human json jsonl openmetrics" -- "${cur}"))
                    return 0
                    ;;
                --baseline)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --probe-timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --watch)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --listen)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --web-config)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --cib)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --sbd-config)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --far)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --secret)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --nodes)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --remediation-timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        fencekit__subcmd__completions)
            opts="-h -V --help --version bash zsh fish powershell elvish"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        fencekit__subcmd__demo)
            opts="-o -h -V --output --help --version"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --output)
                    COMPREPLY=($(compgen -W "human json jsonl openmetrics" -- "${cur}"))
                    return 0
                    ;;
                -o)
                    COMPREPLY=($(compgen -W "human json jsonl openmetrics" -- "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        fencekit__subcmd__hold)
            opts="-i -o -h -V --all --for --reason --by --list --inventory --audit --output --help --version"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --for)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --reason)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --by)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --inventory)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                -i)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --audit)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --output)
                    COMPREPLY=($(compgen -W "human json jsonl openmetrics" -- "${cur}"))
                    return 0
                    ;;
                -o)
                    COMPREPLY=($(compgen -W "human json jsonl openmetrics" -- "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        fencekit__subcmd__lab)
            opts="-v -h -V --nodes --bind --ipmi-port-base --username --password --power --loss --drop --delay --transition --stuck --strict-state --ciphers --no-cipher-query --fault --write-inventory --hosts --boot-delay --redfish --pdus --pdu-fault --vendor --verbose --help --version"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --nodes)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --bind)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --ipmi-port-base)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --username)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --password)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --power)
                    COMPREPLY=($(compgen -W "on off" -- "${cur}"))
                    return 0
                    ;;
                --loss)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --drop)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --delay)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --transition)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --ciphers)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --fault)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --write-inventory)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --hosts)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --boot-delay)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --redfish)
                    COMPREPLY=($(compgen -W "https http none" -- "${cur}"))
                    return 0
                    ;;
                --pdus)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --pdu-fault)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --vendor)
                    COMPREPLY=($(compgen -W "generic idrac ilo xcc smc supermicro bmcweb openbmc bmcweb204 ami ami-task" -- "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        fencekit__subcmd__list)
            opts="-i -a -u -l -p -S -n -C -L -A -W -k -m -o -v -h -V --inventory --all --parallel --stagger --bmc-interval --max-per-address --level --audit --dry-run --no-lock --address --probe-port --verify --accept-bmc-only --max-off-watts --allow-host-only --expect-uuid --expect-serial --driver --ip --ipport --username --password --password-file --password-env --password-script --plug --ca-cert --ssl-fingerprint --ssl-insecure --cipher --privlvl --ipmi-version --auth --hexadecimal-kg --accept-unauthenticated-replies --workaround --systems-uri --redfish-uri --redfish-session --identity-file --ssh-agent --ssh-known-hosts --ssh-host-key --ssh-accept-new --use-sudo --missing-as-off --region --access-key --endpoint-url --expect-node-name --expect-tag --allow-self-fence --kubeconfig --expect-vm-uid --azure-tenant --azure-client-certificate --azure-msi --azure-cloud --azure-metadata-endpoint --expect-vm-id --pve-skiplock --pve-vmtype --os-auth-url --os-project-name --os-domain-name --os-region-name --os-interface --ovirt-no-filter --ovirt-cookies --ovirt-api-path --ibm-crn --ibm-private --ibm-proxy --power-wait --power-timeout --poll-interval --confirm --retry-on --method --timeout --login-timeout --output --verbose --help --version"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --inventory)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                -i)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --parallel)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --stagger)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --bmc-interval)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --max-per-address)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --level)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --audit)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --address)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --probe-port)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --max-off-watts)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --expect-uuid)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --expect-serial)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --driver)
                    COMPREPLY=($(compgen -W "ipmi redfish ssh aws" -- "${cur}"))
                    return 0
                    ;;
                --ip)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                -a)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --ipport)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                -u)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --username)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                -l)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --password)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                -p)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --password-file)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --password-env)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --password-script)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                -S)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --plug)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                -n)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --ca-cert)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --ssl-fingerprint)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --cipher)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                -C)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --privlvl)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                -L)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --ipmi-version)
                    COMPREPLY=($(compgen -W "2.0 1.5" -- "${cur}"))
                    return 0
                    ;;
                --auth)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                -A)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --hexadecimal-kg)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --workaround)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                -W)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --systems-uri)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --redfish-uri)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --identity-file)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                -k)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --ssh-known-hosts)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --ssh-host-key)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --region)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --access-key)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --endpoint-url)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --expect-node-name)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --expect-tag)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --kubeconfig)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --expect-vm-uid)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --azure-tenant)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --azure-client-certificate)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --azure-cloud)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --azure-metadata-endpoint)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --expect-vm-id)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --pve-vmtype)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --os-auth-url)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --os-project-name)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --os-domain-name)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --os-region-name)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --os-interface)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --ovirt-api-path)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --ibm-crn)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --ibm-proxy)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --power-wait)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --power-timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --poll-interval)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --confirm)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --retry-on)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --method)
                    COMPREPLY=($(compgen -W "onoff cycle" -- "${cur}"))
                    return 0
                    ;;
                -m)
                    COMPREPLY=($(compgen -W "onoff cycle" -- "${cur}"))
                    return 0
                    ;;
                --timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --login-timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --output)
                    COMPREPLY=($(compgen -W "human json jsonl openmetrics" -- "${cur}"))
                    return 0
                    ;;
                -o)
                    COMPREPLY=($(compgen -W "human json jsonl openmetrics" -- "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        fencekit__subcmd__man)
            opts="-h -V --help --version fencekit fencekit-status fencekit-on fencekit-off fencekit-reboot fencekit-monitor fencekit-verify fencekit-check fencekit-list fencekit-hold fencekit-release fencekit-ack fencekit-lab fencekit-demo fencekit-completions fencekit-man fencekit-agents fencekit-agent fence_ipmilan fence_ilo3 fence_ilo4 fence_ilo5 fence_ipmilanplus fence_imm fence_idrac fence_redfish fence_virsh fence_apc_snmp fence_tripplite_snmp fence_eaton_snmp fence_ibmblade fence_intelmodular fence_ipdu fence_ifmib fence_emerson fence_aws fence_kubevirt fence_vmware_soap fence_vmware_rest fence_azure_arm fence_pve fence_nutanix_ahv fence_rhevm fence_openstack fence_eps fence_cisco_ucs fence_amt_ws fence_ilo fence_ilo2 fence_gce fence_ibm_vpc fence_ibm_powervs"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        fencekit__subcmd__monitor)
            opts="-i -a -u -l -p -S -n -C -L -A -W -k -m -o -v -h -V --inventory --all --parallel --stagger --bmc-interval --max-per-address --level --audit --dry-run --no-lock --address --probe-port --verify --accept-bmc-only --max-off-watts --allow-host-only --expect-uuid --expect-serial --driver --ip --ipport --username --password --password-file --password-env --password-script --plug --ca-cert --ssl-fingerprint --ssl-insecure --cipher --privlvl --ipmi-version --auth --hexadecimal-kg --accept-unauthenticated-replies --workaround --systems-uri --redfish-uri --redfish-session --identity-file --ssh-agent --ssh-known-hosts --ssh-host-key --ssh-accept-new --use-sudo --missing-as-off --region --access-key --endpoint-url --expect-node-name --expect-tag --allow-self-fence --kubeconfig --expect-vm-uid --azure-tenant --azure-client-certificate --azure-msi --azure-cloud --azure-metadata-endpoint --expect-vm-id --pve-skiplock --pve-vmtype --os-auth-url --os-project-name --os-domain-name --os-region-name --os-interface --ovirt-no-filter --ovirt-cookies --ovirt-api-path --ibm-crn --ibm-private --ibm-proxy --power-wait --power-timeout --poll-interval --confirm --retry-on --method --timeout --login-timeout --output --verbose --help --version"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --inventory)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                -i)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --parallel)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --stagger)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --bmc-interval)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --max-per-address)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --level)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --audit)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --address)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --probe-port)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --max-off-watts)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --expect-uuid)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --expect-serial)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --driver)
                    COMPREPLY=($(compgen -W "ipmi redfish ssh aws" -- "${cur}"))
                    return 0
                    ;;
                --ip)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                -a)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --ipport)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                -u)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --username)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                -l)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --password)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                -p)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --password-file)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --password-env)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --password-script)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                -S)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --plug)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                -n)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --ca-cert)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --ssl-fingerprint)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --cipher)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                -C)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --privlvl)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                -L)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --ipmi-version)
                    COMPREPLY=($(compgen -W "2.0 1.5" -- "${cur}"))
                    return 0
                    ;;
                --auth)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                -A)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --hexadecimal-kg)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --workaround)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                -W)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --systems-uri)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --redfish-uri)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --identity-file)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                -k)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --ssh-known-hosts)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --ssh-host-key)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --region)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --access-key)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --endpoint-url)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --expect-node-name)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --expect-tag)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --kubeconfig)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --expect-vm-uid)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --azure-tenant)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --azure-client-certificate)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --azure-cloud)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --azure-metadata-endpoint)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --expect-vm-id)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --pve-vmtype)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --os-auth-url)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --os-project-name)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --os-domain-name)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --os-region-name)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --os-interface)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --ovirt-api-path)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --ibm-crn)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --ibm-proxy)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --power-wait)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --power-timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --poll-interval)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --confirm)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --retry-on)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --method)
                    COMPREPLY=($(compgen -W "onoff cycle" -- "${cur}"))
                    return 0
                    ;;
                -m)
                    COMPREPLY=($(compgen -W "onoff cycle" -- "${cur}"))
                    return 0
                    ;;
                --timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --login-timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --output)
                    COMPREPLY=($(compgen -W "human json jsonl openmetrics" -- "${cur}"))
                    return 0
                    ;;
                -o)
                    COMPREPLY=($(compgen -W "human json jsonl openmetrics" -- "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        fencekit__subcmd__off)
            opts="-i -a -u -l -p -S -n -C -L -A -W -k -m -o -v -h -V --inventory --all --parallel --stagger --bmc-interval --max-per-address --level --audit --dry-run --no-lock --address --probe-port --verify --accept-bmc-only --max-off-watts --allow-host-only --expect-uuid --expect-serial --driver --ip --ipport --username --password --password-file --password-env --password-script --plug --ca-cert --ssl-fingerprint --ssl-insecure --cipher --privlvl --ipmi-version --auth --hexadecimal-kg --accept-unauthenticated-replies --workaround --systems-uri --redfish-uri --redfish-session --identity-file --ssh-agent --ssh-known-hosts --ssh-host-key --ssh-accept-new --use-sudo --missing-as-off --region --access-key --endpoint-url --expect-node-name --expect-tag --allow-self-fence --kubeconfig --expect-vm-uid --azure-tenant --azure-client-certificate --azure-msi --azure-cloud --azure-metadata-endpoint --expect-vm-id --pve-skiplock --pve-vmtype --os-auth-url --os-project-name --os-domain-name --os-region-name --os-interface --ovirt-no-filter --ovirt-cookies --ovirt-api-path --ibm-crn --ibm-private --ibm-proxy --power-wait --power-timeout --poll-interval --confirm --retry-on --method --timeout --login-timeout --output --verbose --max-fence --force --reason --on-confirmed-off --hook-timeout --on-despite-hook-failure --crashdump --crashdump-wait --kdump-port --kdump-quiet --help --version"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --inventory)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                -i)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --parallel)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --stagger)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --bmc-interval)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --max-per-address)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --level)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --audit)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --address)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --probe-port)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --max-off-watts)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --expect-uuid)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --expect-serial)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --driver)
                    COMPREPLY=($(compgen -W "ipmi redfish ssh aws" -- "${cur}"))
                    return 0
                    ;;
                --ip)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                -a)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --ipport)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                -u)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --username)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                -l)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --password)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                -p)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --password-file)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --password-env)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --password-script)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                -S)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --plug)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                -n)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --ca-cert)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --ssl-fingerprint)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --cipher)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                -C)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --privlvl)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                -L)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --ipmi-version)
                    COMPREPLY=($(compgen -W "2.0 1.5" -- "${cur}"))
                    return 0
                    ;;
                --auth)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                -A)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --hexadecimal-kg)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --workaround)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                -W)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --systems-uri)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --redfish-uri)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --identity-file)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                -k)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --ssh-known-hosts)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --ssh-host-key)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --region)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --access-key)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --endpoint-url)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --expect-node-name)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --expect-tag)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --kubeconfig)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --expect-vm-uid)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --azure-tenant)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --azure-client-certificate)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --azure-cloud)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --azure-metadata-endpoint)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --expect-vm-id)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --pve-vmtype)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --os-auth-url)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --os-project-name)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --os-domain-name)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --os-region-name)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --os-interface)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --ovirt-api-path)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --ibm-crn)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --ibm-proxy)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --power-wait)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --power-timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --poll-interval)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --confirm)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --retry-on)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --method)
                    COMPREPLY=($(compgen -W "onoff cycle" -- "${cur}"))
                    return 0
                    ;;
                -m)
                    COMPREPLY=($(compgen -W "onoff cycle" -- "${cur}"))
                    return 0
                    ;;
                --timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --login-timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --output)
                    COMPREPLY=($(compgen -W "human json jsonl openmetrics" -- "${cur}"))
                    return 0
                    ;;
                -o)
                    COMPREPLY=($(compgen -W "human json jsonl openmetrics" -- "${cur}"))
                    return 0
                    ;;
                --max-fence)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --reason)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --on-confirmed-off)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --hook-timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --crashdump-wait)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --kdump-port)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --kdump-quiet)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        fencekit__subcmd__on)
            opts="-i -a -u -l -p -S -n -C -L -A -W -k -m -o -v -h -V --inventory --all --parallel --stagger --bmc-interval --max-per-address --level --audit --dry-run --no-lock --address --probe-port --verify --accept-bmc-only --max-off-watts --allow-host-only --expect-uuid --expect-serial --driver --ip --ipport --username --password --password-file --password-env --password-script --plug --ca-cert --ssl-fingerprint --ssl-insecure --cipher --privlvl --ipmi-version --auth --hexadecimal-kg --accept-unauthenticated-replies --workaround --systems-uri --redfish-uri --redfish-session --identity-file --ssh-agent --ssh-known-hosts --ssh-host-key --ssh-accept-new --use-sudo --missing-as-off --region --access-key --endpoint-url --expect-node-name --expect-tag --allow-self-fence --kubeconfig --expect-vm-uid --azure-tenant --azure-client-certificate --azure-msi --azure-cloud --azure-metadata-endpoint --expect-vm-id --pve-skiplock --pve-vmtype --os-auth-url --os-project-name --os-domain-name --os-region-name --os-interface --ovirt-no-filter --ovirt-cookies --ovirt-api-path --ibm-crn --ibm-private --ibm-proxy --power-wait --power-timeout --poll-interval --confirm --retry-on --method --timeout --login-timeout --output --verbose --help --version"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --inventory)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                -i)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --parallel)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --stagger)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --bmc-interval)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --max-per-address)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --level)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --audit)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --address)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --probe-port)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --max-off-watts)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --expect-uuid)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --expect-serial)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --driver)
                    COMPREPLY=($(compgen -W "ipmi redfish ssh aws" -- "${cur}"))
                    return 0
                    ;;
                --ip)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                -a)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --ipport)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                -u)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --username)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                -l)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --password)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                -p)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --password-file)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --password-env)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --password-script)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                -S)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --plug)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                -n)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --ca-cert)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --ssl-fingerprint)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --cipher)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                -C)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --privlvl)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                -L)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --ipmi-version)
                    COMPREPLY=($(compgen -W "2.0 1.5" -- "${cur}"))
                    return 0
                    ;;
                --auth)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                -A)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --hexadecimal-kg)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --workaround)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                -W)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --systems-uri)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --redfish-uri)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --identity-file)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                -k)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --ssh-known-hosts)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --ssh-host-key)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --region)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --access-key)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --endpoint-url)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --expect-node-name)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --expect-tag)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --kubeconfig)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --expect-vm-uid)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --azure-tenant)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --azure-client-certificate)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --azure-cloud)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --azure-metadata-endpoint)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --expect-vm-id)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --pve-vmtype)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --os-auth-url)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --os-project-name)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --os-domain-name)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --os-region-name)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --os-interface)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --ovirt-api-path)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --ibm-crn)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --ibm-proxy)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --power-wait)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --power-timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --poll-interval)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --confirm)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --retry-on)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --method)
                    COMPREPLY=($(compgen -W "onoff cycle" -- "${cur}"))
                    return 0
                    ;;
                -m)
                    COMPREPLY=($(compgen -W "onoff cycle" -- "${cur}"))
                    return 0
                    ;;
                --timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --login-timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --output)
                    COMPREPLY=($(compgen -W "human json jsonl openmetrics" -- "${cur}"))
                    return 0
                    ;;
                -o)
                    COMPREPLY=($(compgen -W "human json jsonl openmetrics" -- "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        fencekit__subcmd__reboot)
            opts="-i -a -u -l -p -S -n -C -L -A -W -k -m -o -v -h -V --inventory --all --parallel --stagger --bmc-interval --max-per-address --level --audit --dry-run --no-lock --address --probe-port --verify --accept-bmc-only --max-off-watts --allow-host-only --expect-uuid --expect-serial --driver --ip --ipport --username --password --password-file --password-env --password-script --plug --ca-cert --ssl-fingerprint --ssl-insecure --cipher --privlvl --ipmi-version --auth --hexadecimal-kg --accept-unauthenticated-replies --workaround --systems-uri --redfish-uri --redfish-session --identity-file --ssh-agent --ssh-known-hosts --ssh-host-key --ssh-accept-new --use-sudo --missing-as-off --region --access-key --endpoint-url --expect-node-name --expect-tag --allow-self-fence --kubeconfig --expect-vm-uid --azure-tenant --azure-client-certificate --azure-msi --azure-cloud --azure-metadata-endpoint --expect-vm-id --pve-skiplock --pve-vmtype --os-auth-url --os-project-name --os-domain-name --os-region-name --os-interface --ovirt-no-filter --ovirt-cookies --ovirt-api-path --ibm-crn --ibm-private --ibm-proxy --power-wait --power-timeout --poll-interval --confirm --retry-on --method --timeout --login-timeout --output --verbose --max-fence --force --reason --on-confirmed-off --hook-timeout --on-despite-hook-failure --crashdump --crashdump-wait --kdump-port --kdump-quiet --help --version"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --inventory)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                -i)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --parallel)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --stagger)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --bmc-interval)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --max-per-address)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --level)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --audit)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --address)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --probe-port)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --max-off-watts)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --expect-uuid)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --expect-serial)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --driver)
                    COMPREPLY=($(compgen -W "ipmi redfish ssh aws" -- "${cur}"))
                    return 0
                    ;;
                --ip)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                -a)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --ipport)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                -u)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --username)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                -l)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --password)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                -p)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --password-file)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --password-env)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --password-script)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                -S)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --plug)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                -n)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --ca-cert)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --ssl-fingerprint)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --cipher)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                -C)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --privlvl)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                -L)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --ipmi-version)
                    COMPREPLY=($(compgen -W "2.0 1.5" -- "${cur}"))
                    return 0
                    ;;
                --auth)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                -A)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --hexadecimal-kg)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --workaround)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                -W)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --systems-uri)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --redfish-uri)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --identity-file)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                -k)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --ssh-known-hosts)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --ssh-host-key)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --region)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --access-key)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --endpoint-url)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --expect-node-name)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --expect-tag)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --kubeconfig)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --expect-vm-uid)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --azure-tenant)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --azure-client-certificate)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --azure-cloud)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --azure-metadata-endpoint)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --expect-vm-id)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --pve-vmtype)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --os-auth-url)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --os-project-name)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --os-domain-name)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --os-region-name)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --os-interface)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --ovirt-api-path)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --ibm-crn)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --ibm-proxy)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --power-wait)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --power-timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --poll-interval)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --confirm)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --retry-on)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --method)
                    COMPREPLY=($(compgen -W "onoff cycle" -- "${cur}"))
                    return 0
                    ;;
                -m)
                    COMPREPLY=($(compgen -W "onoff cycle" -- "${cur}"))
                    return 0
                    ;;
                --timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --login-timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --output)
                    COMPREPLY=($(compgen -W "human json jsonl openmetrics" -- "${cur}"))
                    return 0
                    ;;
                -o)
                    COMPREPLY=($(compgen -W "human json jsonl openmetrics" -- "${cur}"))
                    return 0
                    ;;
                --max-fence)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --reason)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --on-confirmed-off)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --hook-timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --crashdump-wait)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --kdump-port)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --kdump-quiet)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        fencekit__subcmd__release)
            opts="-i -h -V --all --by --inventory --audit --help --version"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --by)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --inventory)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                -i)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --audit)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        fencekit__subcmd__status)
            opts="-i -a -u -l -p -S -n -C -L -A -W -k -m -o -v -h -V --inventory --all --parallel --stagger --bmc-interval --max-per-address --level --audit --dry-run --no-lock --address --probe-port --verify --accept-bmc-only --max-off-watts --allow-host-only --expect-uuid --expect-serial --driver --ip --ipport --username --password --password-file --password-env --password-script --plug --ca-cert --ssl-fingerprint --ssl-insecure --cipher --privlvl --ipmi-version --auth --hexadecimal-kg --accept-unauthenticated-replies --workaround --systems-uri --redfish-uri --redfish-session --identity-file --ssh-agent --ssh-known-hosts --ssh-host-key --ssh-accept-new --use-sudo --missing-as-off --region --access-key --endpoint-url --expect-node-name --expect-tag --allow-self-fence --kubeconfig --expect-vm-uid --azure-tenant --azure-client-certificate --azure-msi --azure-cloud --azure-metadata-endpoint --expect-vm-id --pve-skiplock --pve-vmtype --os-auth-url --os-project-name --os-domain-name --os-region-name --os-interface --ovirt-no-filter --ovirt-cookies --ovirt-api-path --ibm-crn --ibm-private --ibm-proxy --power-wait --power-timeout --poll-interval --confirm --retry-on --method --timeout --login-timeout --output --verbose --help --version"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --inventory)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                -i)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --parallel)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --stagger)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --bmc-interval)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --max-per-address)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --level)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --audit)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --address)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --probe-port)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --max-off-watts)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --expect-uuid)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --expect-serial)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --driver)
                    COMPREPLY=($(compgen -W "ipmi redfish ssh aws" -- "${cur}"))
                    return 0
                    ;;
                --ip)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                -a)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --ipport)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                -u)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --username)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                -l)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --password)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                -p)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --password-file)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --password-env)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --password-script)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                -S)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --plug)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                -n)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --ca-cert)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --ssl-fingerprint)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --cipher)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                -C)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --privlvl)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                -L)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --ipmi-version)
                    COMPREPLY=($(compgen -W "2.0 1.5" -- "${cur}"))
                    return 0
                    ;;
                --auth)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                -A)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --hexadecimal-kg)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --workaround)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                -W)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --systems-uri)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --redfish-uri)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --identity-file)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                -k)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --ssh-known-hosts)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --ssh-host-key)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --region)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --access-key)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --endpoint-url)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --expect-node-name)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --expect-tag)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --kubeconfig)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --expect-vm-uid)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --azure-tenant)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --azure-client-certificate)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --azure-cloud)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --azure-metadata-endpoint)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --expect-vm-id)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --pve-vmtype)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --os-auth-url)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --os-project-name)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --os-domain-name)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --os-region-name)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --os-interface)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --ovirt-api-path)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --ibm-crn)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --ibm-proxy)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --power-wait)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --power-timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --poll-interval)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --confirm)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --retry-on)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --method)
                    COMPREPLY=($(compgen -W "onoff cycle" -- "${cur}"))
                    return 0
                    ;;
                -m)
                    COMPREPLY=($(compgen -W "onoff cycle" -- "${cur}"))
                    return 0
                    ;;
                --timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --login-timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --output)
                    COMPREPLY=($(compgen -W "human json jsonl openmetrics" -- "${cur}"))
                    return 0
                    ;;
                -o)
                    COMPREPLY=($(compgen -W "human json jsonl openmetrics" -- "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        fencekit__subcmd__verify)
            opts="-i -a -u -l -p -S -n -C -L -A -W -k -m -o -v -h -V --inventory --all --parallel --stagger --bmc-interval --max-per-address --level --audit --dry-run --no-lock --address --probe-port --verify --accept-bmc-only --max-off-watts --allow-host-only --expect-uuid --expect-serial --driver --ip --ipport --username --password --password-file --password-env --password-script --plug --ca-cert --ssl-fingerprint --ssl-insecure --cipher --privlvl --ipmi-version --auth --hexadecimal-kg --accept-unauthenticated-replies --workaround --systems-uri --redfish-uri --redfish-session --identity-file --ssh-agent --ssh-known-hosts --ssh-host-key --ssh-accept-new --use-sudo --missing-as-off --region --access-key --endpoint-url --expect-node-name --expect-tag --allow-self-fence --kubeconfig --expect-vm-uid --azure-tenant --azure-client-certificate --azure-msi --azure-cloud --azure-metadata-endpoint --expect-vm-id --pve-skiplock --pve-vmtype --os-auth-url --os-project-name --os-domain-name --os-region-name --os-interface --ovirt-no-filter --ovirt-cookies --ovirt-api-path --ibm-crn --ibm-private --ibm-proxy --power-wait --power-timeout --poll-interval --confirm --retry-on --method --timeout --login-timeout --output --verbose --expect --samples --interval --probe-timeout --boot-timeout --baseline --record-baseline --help --version"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --inventory)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                -i)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --parallel)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --stagger)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --bmc-interval)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --max-per-address)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --level)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --audit)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --address)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --probe-port)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --max-off-watts)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --expect-uuid)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --expect-serial)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --driver)
                    COMPREPLY=($(compgen -W "ipmi redfish ssh aws" -- "${cur}"))
                    return 0
                    ;;
                --ip)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                -a)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --ipport)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                -u)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --username)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                -l)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --password)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                -p)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --password-file)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --password-env)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --password-script)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                -S)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --plug)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                -n)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --ca-cert)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --ssl-fingerprint)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --cipher)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                -C)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --privlvl)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                -L)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --ipmi-version)
                    COMPREPLY=($(compgen -W "2.0 1.5" -- "${cur}"))
                    return 0
                    ;;
                --auth)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                -A)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --hexadecimal-kg)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --workaround)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                -W)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --systems-uri)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --redfish-uri)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --identity-file)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                -k)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --ssh-known-hosts)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --ssh-host-key)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --region)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --access-key)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --endpoint-url)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --expect-node-name)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --expect-tag)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --kubeconfig)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --expect-vm-uid)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --azure-tenant)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --azure-client-certificate)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --azure-cloud)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --azure-metadata-endpoint)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --expect-vm-id)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --pve-vmtype)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --os-auth-url)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --os-project-name)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --os-domain-name)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --os-region-name)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --os-interface)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --ovirt-api-path)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --ibm-crn)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --ibm-proxy)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --power-wait)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --power-timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --poll-interval)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --confirm)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --retry-on)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --method)
                    COMPREPLY=($(compgen -W "onoff cycle" -- "${cur}"))
                    return 0
                    ;;
                -m)
                    COMPREPLY=($(compgen -W "onoff cycle" -- "${cur}"))
                    return 0
                    ;;
                --timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --login-timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --output)
                    COMPREPLY=($(compgen -W "human json jsonl openmetrics" -- "${cur}"))
                    return 0
                    ;;
                -o)
                    COMPREPLY=($(compgen -W "human json jsonl openmetrics" -- "${cur}"))
                    return 0
                    ;;
                --expect)
                    COMPREPLY=($(compgen -W "off on" -- "${cur}"))
                    return 0
                    ;;
                --samples)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --interval)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --probe-timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --boot-timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --baseline)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --record-baseline)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
    esac
}

if [[ "${BASH_VERSINFO[0]}" -eq 4 && "${BASH_VERSINFO[1]}" -ge 4 || "${BASH_VERSINFO[0]}" -gt 4 ]]; then
    complete -F _fencekit -o nosort -o bashdefault -o default fencekit
else
    complete -F _fencekit -o bashdefault -o default fencekit
fi

# Added by fencekit (src/cli/generate.rs): node names of the inventory
# (--inventory/-i on the line, or $FENCEKIT_INVENTORY) complete as targets.
# The inventory is read with `fencekit status --all --dry-run`, which
# contacts nothing and runs no password script.
_fencekit_nodes() {
    local inv="" i
    for ((i = 1; i < COMP_CWORD; i++)); do
        case "${COMP_WORDS[i]}" in
            --inventory|-i) inv="${COMP_WORDS[i+1]}" ;;
            --inventory=*) inv="${COMP_WORDS[i]#--inventory=}" ;;
        esac
    done
    [[ -n "$inv" ]] || inv="${FENCEKIT_INVENTORY-}"
    [[ -n "$inv" && -r "$inv" ]] || return 0
    "${COMP_WORDS[0]}" status --inventory "$inv" --all --dry-run --output json 2>/dev/null \
        | sed -n 's/^ *"node": "\([^"]*\)",\{0,1\}$/\1/p' | sort -u
}

_fencekit_with_nodes() {
    _fencekit "$@"
    local cur="${COMP_WORDS[COMP_CWORD]}" prev="${COMP_WORDS[COMP_CWORD-1]}"
    case "${COMP_WORDS[1]-}" in
        status|on|off|reboot|monitor|verify|check|list|ack|hold|release) ;;
        *) return 0 ;;
    esac
    [[ "$cur" == -* ]] && return 0
    case " --access-key --address --audit --auth --azure-client-certificate --azure-cloud --azure-metadata-endpoint --azure-tenant --baseline --bind --bmc-interval --boot-delay --boot-timeout --by --ca-cert --cib --cipher --ciphers --confirm --crashdump-wait --delay --driver --drop --endpoint-url --expect --expect-node-name --expect-serial --expect-tag --expect-uuid --expect-vm-id --expect-vm-uid --far --fault --for --hexadecimal-kg --hook-timeout --hosts --ibm-crn --ibm-proxy --identity-file --interval --inventory --ip --ipmi-port-base --ipmi-version --ipport --kdump-port --kdump-quiet --kubeconfig --level --listen --login-timeout --loss --max-fence --max-off-watts --max-per-address --method --nodes --on-confirmed-off --os-auth-url --os-domain-name --os-interface --os-project-name --os-region-name --output --ovirt-api-path --parallel --password --password-env --password-file --password-script --pdu-fault --pdus --plug --poll-interval --power --power-timeout --power-wait --privlvl --probe-port --probe-timeout --pve-vmtype --reason --record-baseline --redfish --redfish-uri --region --remediation-timeout --retry-on --samples --sbd-config --secret --ssh-host-key --ssh-known-hosts --ssl-fingerprint --stagger --systems-uri --timeout --transition --username --vendor --watch --web-config --workaround --write-inventory -A -C -L -S -W -a -i -k -l -m -n -o -p -u " in
        *" $prev "*) return 0 ;;
    esac
    local IFS=$'\n'
    COMPREPLY=($(printf '%s\n' "${COMPREPLY[@]}" | grep -v '^\[') $(compgen -W "$(_fencekit_nodes)" -- "$cur"))
}

if [[ "${BASH_VERSINFO[0]}" -eq 4 && "${BASH_VERSINFO[1]}" -ge 4 || "${BASH_VERSINFO[0]}" -gt 4 ]]; then
    complete -F _fencekit_with_nodes -o nosort -o bashdefault -o default fencekit
else
    complete -F _fencekit_with_nodes -o bashdefault -o default fencekit
fi
