//! Proxmox VE's native command-line flags (flattened into every command
//! that acts on targets through `method::platforms::PlatformArgs`); they
//! set the platform's settings by key. The TLS flags are every HTTPS
//! platform's and stay with the generic options.

use crate::platform::build::MethodOptions;

/// Proxmox VE options (targets `pve://[USER@]HOST[:PORT]/[NODE/]VM`;
/// inventory `driver = "pve"` with `settings = { skiplock = true, vmtype = "lxc" }`).
#[derive(clap::Args, Debug, Clone, Default)]
#[group(id = "pve-options")]
#[command(next_help_heading = "Proxmox VE")]
pub struct Args {
    /// Proxmox VE: send skiplock=1 with power requests, so that a locked
    /// guest (backup, migration, snapshot) is powered anyway (root@pam
    /// only; warned). Inventories use settings.skiplock.
    #[arg(long)]
    pub pve_skiplock: bool,
    /// Proxmox VE: the guest's type, qemu or lxc (default: found in the
    /// cluster's resources). Inventories use settings.vmtype.
    #[arg(long, value_name = "TYPE")]
    pub pve_vmtype: Option<String>,
}

impl Args {
    /// Copies the flags into the method options' settings.
    pub fn apply(&self, o: &mut MethodOptions) {
        if self.pve_skiplock {
            o.set("skiplock", "true");
        }
        if let Some(t) = &self.pve_vmtype {
            o.set("vmtype", t.clone());
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
        pve: Args,
    }

    #[test]
    fn the_flags_reach_the_settings() {
        let cli = Cli::parse_from(["t", "--pve-skiplock", "--pve-vmtype", "lxc"]);
        let mut o = MethodOptions::default();
        cli.pve.apply(&mut o);
        assert!(o.flag("skiplock"));
        assert_eq!(o.setting("vmtype"), Some("lxc"));
    }
}
