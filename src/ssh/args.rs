//! SSH's native command-line flags (flattened into every command that acts
//! on targets through `method::platforms::PlatformArgs`), and
//! `--driver ssh --ip HOST` (a hypervisor, virsh; `--plug` names the domain).

use crate::platform::args::CliDriver;
use crate::platform::build::MethodOptions;
use std::path::PathBuf;

/// SSH options (targets `ssh://`, `--ip` with `--driver ssh`).
#[derive(clap::Args, Debug, Clone, Default)]
#[group(id = "ssh-options")]
pub struct Args {
    /// SSH: authenticate with this private key (its passphrase from the password options).
    #[arg(long, short = 'k', value_name = "PATH")]
    pub identity_file: Option<PathBuf>,
    /// SSH: authenticate through the ssh-agent ($SSH_AUTH_SOCK).
    #[arg(long)]
    pub ssh_agent: bool,
    /// SSH: check the host key against this known_hosts file (default ~/.ssh/known_hosts).
    #[arg(long, value_name = "PATH")]
    pub ssh_known_hosts: Option<PathBuf>,
    /// SSH: accept exactly the host key with this fingerprint (SHA256:…).
    #[arg(long, value_name = "FP")]
    pub ssh_host_key: Option<String>,
    /// SSH: accept and record an unknown host key (a changed one is still refused).
    #[arg(long)]
    pub ssh_accept_new: bool,
    /// SSH: run the remote commands through sudo.
    #[arg(long)]
    pub use_sudo: bool,
    /// SSH (virsh): a domain that does not exist counts as off.
    #[arg(long)]
    pub missing_as_off: bool,
}

impl Args {
    /// Copies the flags into the method options.
    pub fn apply(&self, o: &mut MethodOptions) {
        o.identity_file = self.identity_file.clone();
        o.ssh_agent = self.ssh_agent;
        o.ssh_known_hosts = self.ssh_known_hosts.clone();
        o.ssh_host_key = self.ssh_host_key.clone();
        o.ssh_accept_new = self.ssh_accept_new;
        o.use_sudo = self.use_sudo;
        o.missing_as_off = self.missing_as_off;
    }
}

/// `--driver ssh --ip HOST [-l USER] [--ipport PORT] [--plug DOMAIN]`:
/// `ssh://[USER@]HOST:PORT/virsh/DOMAIN` (port 22 by default).
pub const DRIVER: CliDriver = CliDriver {
    name: "ssh",
    help: "SSH to a hypervisor (virsh; --plug names the domain)",
    target: |host, o| {
        Ok(host.map(|h| {
            format!(
                "ssh://{}{h}:{}/virsh/{}",
                o.username
                    .as_deref()
                    .map(|u| format!("{u}@"))
                    .unwrap_or_default(),
                o.ipport.unwrap_or(22),
                o.plug.as_deref().unwrap_or("")
            )
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
        ssh: Args,
    }

    #[test]
    fn the_flags_reach_the_method_options() {
        let cli = Cli::parse_from(["t", "-k", "/k", "--ssh-accept-new", "--missing-as-off"]);
        let mut o = MethodOptions::default();
        cli.ssh.apply(&mut o);
        assert_eq!(o.identity_file, Some(PathBuf::from("/k")));
        assert!(o.ssh_accept_new && o.missing_as_off);
        assert!(!o.ssh_agent && !o.use_sudo);
        assert_eq!(
            (DRIVER.target)(Some("hv"), &o),
            Ok(Some("ssh://hv:22/virsh/".into()))
        );
        o.username = Some("root".into());
        o.plug = Some("vm1".into());
        o.ipport = Some(2222);
        assert_eq!(
            (DRIVER.target)(Some("hv"), &o),
            Ok(Some("ssh://root@hv:2222/virsh/vm1".into()))
        );
    }
}
