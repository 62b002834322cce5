//! IPMI's native command-line flags (flattened into every command that
//! acts on targets through `method::platforms::PlatformArgs`), and
//! `--driver ipmi --ip HOST`.

use crate::platform::args::CliDriver;
use crate::platform::build::MethodOptions;
use clap::ValueEnum;

/// IPMI versions.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum, Default)]
pub enum IpmiVersion {
    /// RMCP+ (lanplus).
    #[default]
    #[value(name = "2.0")]
    V20,
    /// IPMI 1.5 (lan).
    #[value(name = "1.5")]
    V15,
}

/// IPMI options (targets `ipmi://`, `--ip` with `--driver ipmi`).
#[derive(clap::Args, Debug, Clone, Default)]
#[group(id = "ipmi-options")]
pub struct Args {
    /// RMCP+ cipher suite: auto (prefer 17), 3 or 17.
    #[arg(long, short = 'C', value_name = "auto|3|17", default_value = "auto")]
    pub cipher: String,
    /// Session privilege level.
    #[arg(
        long,
        short = 'L',
        value_name = "LEVEL",
        default_value = "administrator"
    )]
    pub privlvl: String,
    /// IPMI version: 2.0 (RMCP+, the default) or 1.5 (legacy BMCs); --auth alone implies 1.5.
    #[arg(long, value_enum)]
    pub ipmi_version: Option<IpmiVersion>,
    /// IPMI 1.5 authentication type (md5, password, none); implies --ipmi-version 1.5.
    #[arg(long, short = 'A', value_name = "TYPE")]
    pub auth: Option<String>,
    /// BMC key K_g in hexadecimal.
    #[arg(long, value_name = "HEX")]
    pub hexadecimal_kg: Option<String>,
    /// IPMI 1.5: accept replies without an authentication code when the BMC
    /// says per-message authentication is disabled (anyone on the path can
    /// then forge its answers).
    #[arg(long)]
    pub accept_unauthenticated_replies: bool,
    /// IPMI vendor workarounds, FreeIPMI's names, comma-separated (docs/ipmi.md;
    /// those that drop a check are warned about on every use).
    #[arg(long, short = 'W', value_name = "NAMES")]
    pub workaround: Option<String>,
}

impl Args {
    /// Copies the flags into the method options (an empty cipher or
    /// privilege, as `Default` has them: not given).
    pub fn apply(&self, o: &mut MethodOptions) {
        o.cipher = Some(self.cipher.clone()).filter(|c| !c.is_empty());
        o.privlvl = Some(self.privlvl.clone()).filter(|p| !p.is_empty());
        o.ipmi_version = self.ipmi_version.map(|v| {
            match v {
                IpmiVersion::V20 => "2.0",
                IpmiVersion::V15 => "1.5",
            }
            .to_string()
        });
        o.auth = self.auth.clone();
        o.kg_hex = self.hexadecimal_kg.clone();
        o.accept_unauthenticated_replies = self.accept_unauthenticated_replies;
        o.workarounds = self.workaround.clone();
    }
}

/// `--driver ipmi --ip HOST`: `ipmi://HOST` (the port from `--ipport`).
pub const DRIVER: CliDriver = CliDriver {
    name: "ipmi",
    help: "IPMI over LAN (RMCP+ or 1.5)",
    target: |host, _| Ok(host.map(|h| format!("ipmi://{h}"))),
};

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        ipmi: Args,
    }

    #[test]
    fn the_flags_reach_the_method_options() {
        let cli = Cli::parse_from(["t", "-C", "3", "--auth", "md5", "-W", "endianseq"]);
        let mut o = MethodOptions::default();
        cli.ipmi.apply(&mut o);
        assert_eq!(o.cipher.as_deref(), Some("3"));
        assert_eq!(o.privlvl.as_deref(), Some("administrator"));
        assert_eq!(o.auth.as_deref(), Some("md5"));
        assert_eq!(o.workarounds.as_deref(), Some("endianseq"));
        assert_eq!(o.ipmi_version, None);
        let cli = Cli::parse_from(["t", "--ipmi-version", "1.5"]);
        cli.ipmi.apply(&mut o);
        assert_eq!(o.ipmi_version.as_deref(), Some("1.5"));
        assert_eq!(o.cipher.as_deref(), Some("auto"));
        let mut o = MethodOptions::default();
        Args::default().apply(&mut o);
        assert_eq!((&o.cipher, &o.privlvl), (&None, &None));
        assert_eq!(
            (DRIVER.target)(Some("[fd00::1]"), &o),
            Ok(Some("ipmi://[fd00::1]".into()))
        );
        assert_eq!((DRIVER.target)(None, &o), Ok(None));
    }
}
