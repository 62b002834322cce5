//! Every option key the agent front reads, as a type: the code says
//! `values.get(Key::HexadecimalKg)`, never `values.get("hexadecimal_kg")`, so
//! a misspelt key does not compile, and a test
//! ([`tests::every_key_is_defined`]) keeps
//! this list equal to the options `agents/*.toml` define (but the few a
//! family reads by name: `AgentFamily::read_by_name`) — the definitions
//! stay the single source of truth for names, letters, defaults and help.
//!
//! Adding an option: define it in `agents/common.toml` or a family's file,
//! add its key here (`ExpectUuid => "expect_uuid",`), then read it with
//! `values.get(Key::ExpectUuid)` where the family builds its configuration
//! (`src/NAME/agent.rs`).

macro_rules! keys {
    ($($variant:ident => $key:literal,)*) => {
        /// An option key (the long option with `_` for `-`, as upstream keys it).
        #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
        pub enum Key {
            $(
                #[doc = concat!("`", $key, "`")]
                $variant,
            )*
        }

        impl Key {
            /// Every key, in declaration order.
            pub const ALL: &'static [Key] = &[$(Key::$variant,)*];

            /// The key as the definitions and stdin spell it.
            pub fn as_str(self) -> &'static str {
                match self {
                    $(Key::$variant => $key,)*
                }
            }

            /// The key for a definition's spelling.
            pub fn from_name(name: &str) -> Option<Key> {
                match name {
                    $($key => Some(Key::$variant),)*
                    _ => None,
                }
            }
        }
    };
}

keys! {
    Action => "action",
    Auth => "auth",
    CaCert => "ca_cert",
    Cipher => "cipher",
    CommandPrompt => "command_prompt",
    DebugFile => "debug_file",
    Delay => "delay",
    DisableTimeout => "disable_timeout",
    ExpectUuid => "expect_uuid",
    GnutlscliPath => "gnutlscli_path",
    Help => "help",
    HexadecimalKg => "hexadecimal_kg",
    IdentityFile => "identity_file",
    Inet4Only => "inet4_only",
    Inet6Only => "inet6_only",
    Ip => "ip",
    IpmitoolPath => "ipmitool_path",
    IpmitoolTimeout => "ipmitool_timeout",
    Ipport => "ipport",
    Lanplus => "lanplus",
    LoginTimeout => "login_timeout",
    Method => "method",
    MissingAsOff => "missing_as_off",
    Password => "password",
    PasswordScript => "password_script",
    Plug => "plug",
    PlugSeparator => "plug_separator",
    PortAsIp => "port_as_ip",
    PowerTimeout => "power_timeout",
    PowerWait => "power_wait",
    Privlvl => "privlvl",
    Quiet => "quiet",
    RedfishUri => "redfish_uri",
    RetryOn => "retry_on",
    Separator => "separator",
    ShellTimeout => "shell_timeout",
    SshHostKey => "ssh_host_key",
    SshKnownHosts => "ssh_known_hosts",
    SshOptions => "ssh_options",
    SshPath => "ssh_path",
    Ssl => "ssl",
    SslFingerprint => "ssl_fingerprint",
    SslInsecure => "ssl_insecure",
    SslSecure => "ssl_secure",
    StonithStatusSleep => "stonith_status_sleep",
    SudoPath => "sudo_path",
    SystemsUri => "systems_uri",
    Target => "target",
    UseSudo => "use_sudo",
    Username => "username",
    Verbose => "verbose",
    VerboseLevel => "verbose_level",
    Version => "version",
    Workaround => "workaround",
    AccessKey => "access_key",
    AllowSelfFence => "allow_self_fence",
    Boto3Debug => "boto3_debug",
    EndpointUrl => "endpoint_url",
    ExpectNodeName => "expect_node_name",
    ExpectTag => "expect_tag",
    Filter => "filter",
    Region => "region",
    SecretKey => "secret_key",
    SkipOsShutdown => "skip_os_shutdown",
    SkipRaceCheck => "skip_race_check",
    Community => "community",
    PduProfile => "pdu_profile",
    SnmpAuthProt => "snmp_auth_prot",
    SnmpPrivPasswd => "snmp_priv_passwd",
    SnmpPrivPasswdScript => "snmp_priv_passwd_script",
    SnmpPrivProt => "snmp_priv_prot",
    SnmpSecLevel => "snmp_sec_level",
    SnmpVersion => "snmp_version",
    SnmpgetPath => "snmpget_path",
    SnmpsetPath => "snmpset_path",
    SnmpwalkPath => "snmpwalk_path",
    Apiversion => "apiversion",
    ExpectVmUid => "expect_vm_uid",
    Kubeconfig => "kubeconfig",
    Namespace => "namespace",
    ApiPath => "api_path",
    Notls => "notls",
    ClientCertificate => "client_certificate",
    Cloud => "cloud",
    ExpectVmId => "expect_vm_id",
    MetadataEndpoint => "metadata_endpoint",
    Msi => "msi",
    NetworkFencing => "network_fencing",
    ResourceGroup => "resourceGroup",
    SubscriptionId => "subscriptionId",
    TenantId => "tenantId",
    PveNode => "pve_node",
    PveNodeAuto => "pve_node_auto",
    Nodename => "nodename",
    Vmtype => "vmtype",
    Skiplock => "skiplock",
    UseCookies => "use_cookies",
    CookieFile => "cookie_file",
    ApiVersion => "api_version",
    DisableHttpFilter => "disable_http_filter",
    AuthUrl => "auth_url",
    ProjectName => "project_name",
    UserDomainName => "user_domain_name",
    ProjectDomainName => "project_domain_name",
    Openrc => "openrc",
    Uuid => "uuid",
    Cacert => "cacert",
    Apitimeout => "apitimeout",
    RegionName => "region_name",
    Interface => "interface",
    Zone => "zone",
    Project => "project",
    StackdriverLogging => "stackdriver_logging",
    Baremetalsolution => "baremetalsolution",
    Retries => "retries",
    Retrysleep => "retrysleep",
    Serviceaccount => "serviceaccount",
    Plugzonemap => "plugzonemap",
    Proxyhost => "proxyhost",
    Proxyport => "proxyport",
    Earlyexit => "earlyexit",
    Warntimeout => "warntimeout",
    Errortimeout => "errortimeout",
    Runonwarn => "runonwarn",
    Runonfail => "runonfail",
    ExpectInstanceId => "expect_instance_id",
    Apikey => "apikey",
    Limit => "limit",
    Proxy => "proxy",
    TokenFile => "token_file",
    Token => "token",
    Crn => "crn",
    Instance => "instance",
    ApiType => "api_type",
}

impl std::fmt::Display for Key {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::Key;
    use std::collections::BTreeSet;

    #[test]
    fn every_key_is_defined() {
        let defs = crate::platform::agent::defs::defs();
        let defined: BTreeSet<String> = defs
            .families
            .iter()
            .flat_map(|f| f.options.iter().map(|o| o.key()))
            .collect();
        let keys: BTreeSet<String> = Key::ALL.iter().map(|k| k.as_str().to_string()).collect();
        let undefined: Vec<_> = keys.difference(&defined).collect();
        assert!(
            undefined.is_empty(),
            "keys no definition has: {undefined:?}"
        );
        // The other half (every defined option has a Key, or its family
        // reads it by name) needs the platforms: `agent::families`' tests.
        for k in Key::ALL {
            assert_eq!(Key::from_name(k.as_str()), Some(*k));
        }
    }
}
