//! Redfish's native command-line flags (flattened into every command that
//! acts on targets through `method::platforms::PlatformArgs`), and
//! `--driver redfish --ip HOST`. The TLS flags (`--ca-cert`,
//! `--ssl-fingerprint`, `--ssl-insecure`) and `--plug` are every HTTPS
//! platform's and stay with the generic options.

use crate::platform::args::CliDriver;
use crate::platform::build::MethodOptions;

/// Redfish options (targets `redfish://` and the Metal3 schemes, `--ip`
/// with `--driver redfish`).
#[derive(clap::Args, Debug, Clone, Default)]
#[group(id = "redfish-options")]
pub struct Args {
    /// Redfish: the ComputerSystem URI (skips discovery).
    #[arg(long, value_name = "URI")]
    pub systems_uri: Option<String>,
    /// Redfish: the service root used for discovery.
    #[arg(long, value_name = "URI")]
    pub redfish_uri: Option<String>,
    /// Redfish: log in through SessionService (X-Auth-Token) and log out at the end.
    #[arg(long)]
    pub redfish_session: bool,
}

impl Args {
    /// Copies the flags into the method options.
    pub fn apply(&self, o: &mut MethodOptions) {
        o.systems_uri = self.systems_uri.clone();
        o.redfish_uri = self.redfish_uri.clone();
        o.redfish_session = self.redfish_session;
    }
}

/// `--driver redfish --ip HOST [--ipport PORT]`: `redfish://HOST[:PORT]`.
pub const DRIVER: CliDriver = CliDriver {
    name: "redfish",
    help: "Redfish over HTTPS",
    target: |host, o| {
        Ok(host.map(|h| match o.ipport {
            Some(p) => format!("redfish://{h}:{p}"),
            None => format!("redfish://{h}"),
        }))
    },
};

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        redfish: Args,
    }

    #[test]
    fn the_flags_reach_the_method_options() {
        let cli = Cli::parse_from([
            "t",
            "--systems-uri",
            "/redfish/v1/Systems/1",
            "--redfish-session",
        ]);
        let mut o = MethodOptions::default();
        cli.redfish.apply(&mut o);
        assert_eq!(o.systems_uri.as_deref(), Some("/redfish/v1/Systems/1"));
        assert!(o.redfish_session);
        assert_eq!(o.redfish_uri, None);
        assert_eq!(
            (DRIVER.target)(Some("bmc"), &o),
            Ok(Some("redfish://bmc".into()))
        );
        o.ipport = Some(8443);
        assert_eq!(
            (DRIVER.target)(Some("bmc"), &o),
            Ok(Some("redfish://bmc:8443".into()))
        );
    }
}
