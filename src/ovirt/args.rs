//! oVirt's native command-line flags (flattened into every command that
//! acts on targets through `method::platforms::PlatformArgs`); they set the
//! platform's settings by key. The TLS flags are every HTTPS platform's and
//! stay with the generic options.

use crate::platform::build::MethodOptions;

/// oVirt options (targets `ovirt://[USER@]ENGINE[:PORT]/VM`; inventory
/// `driver = "ovirt"` with `settings = { filter = false, cookies = true }`).
#[derive(clap::Args, Debug, Clone, Default)]
#[group(id = "ovirt-options")]
#[command(next_help_heading = "oVirt")]
pub struct Args {
    /// oVirt: send `Filter: false` (an administrator's view of every VM;
    /// default: `Filter: true`, what a user's permissions show).
    /// Inventories use settings.filter.
    #[arg(long)]
    pub ovirt_no_filter: bool,
    /// oVirt: keep the engine's session cookie for the run (logged in again
    /// once when it expires). Inventories use settings.cookies.
    #[arg(long)]
    pub ovirt_cookies: bool,
    /// oVirt: the API's path (default /ovirt-engine/api). Inventories use
    /// settings.api_path.
    #[arg(long, value_name = "PATH")]
    pub ovirt_api_path: Option<String>,
}

impl Args {
    /// Copies the flags into the method options' settings.
    pub fn apply(&self, o: &mut MethodOptions) {
        if self.ovirt_no_filter {
            o.set("filter", "false");
        }
        if self.ovirt_cookies {
            o.set("cookies", "true");
        }
        if let Some(p) = &self.ovirt_api_path {
            o.set("api_path", p.clone());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        ovirt: Args,
    }

    #[test]
    fn the_flags_reach_the_settings() {
        let cli = Cli::parse_from(["t", "--ovirt-no-filter", "--ovirt-cookies"]);
        let mut o = MethodOptions::default();
        cli.ovirt.apply(&mut o);
        assert_eq!(o.setting("filter"), Some("false"));
        assert!(o.flag("cookies"));
        let c = crate::ovirt::build::from_url("ovirt://e/vm1", &o)
            .unwrap()
            .unwrap();
        assert!(!c.filter && c.cookies);
    }
}
