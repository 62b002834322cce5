//! OpenStack's native command-line flags (flattened into every command
//! that acts on targets through `method::platforms::PlatformArgs`): with
//! `--os-auth-url`, `openstack://NAME/SERVER` takes Keystone's URL, the
//! project and the rest from the flags instead of a cloud of clouds.yaml
//! (the user from `--username`, the password from fencekit's password
//! sources). They set the platform's settings by key; the TLS flags are
//! every HTTPS platform's.

use crate::platform::build::MethodOptions;

/// OpenStack options (targets `openstack://CLOUD/SERVER`; inventory
/// `driver = "openstack"` with `settings = { auth_url = "...", project = "..." }`).
#[derive(clap::Args, Debug, Clone, Default)]
#[group(id = "openstack-options")]
#[command(next_help_heading = "OpenStack")]
pub struct Args {
    /// OpenStack: Keystone's URL (https://keystone:5000/v3), instead of the
    /// cloud of clouds.yaml the target names. Inventories use settings.auth_url.
    #[arg(long, value_name = "URL")]
    pub os_auth_url: Option<String>,
    /// OpenStack: the project to scope the token to (with --os-auth-url).
    #[arg(long, value_name = "PROJECT")]
    pub os_project_name: Option<String>,
    /// OpenStack: the users' and the project's domain (default: Default).
    #[arg(long, value_name = "DOMAIN")]
    pub os_domain_name: Option<String>,
    /// OpenStack: the catalog's region to take compute from.
    #[arg(long, value_name = "REGION")]
    pub os_region_name: Option<String>,
    /// OpenStack: the catalog's interface: public (default), internal or admin.
    #[arg(long, value_name = "INTERFACE")]
    pub os_interface: Option<String>,
}

impl Args {
    /// Copies the flags into the method options' settings.
    pub fn apply(&self, o: &mut MethodOptions) {
        let pairs = [
            ("auth_url", &self.os_auth_url),
            ("project", &self.os_project_name),
            ("user_domain", &self.os_domain_name),
            ("project_domain", &self.os_domain_name),
            ("region", &self.os_region_name),
            ("interface", &self.os_interface),
        ];
        for (k, v) in pairs {
            if let Some(v) = v {
                o.set(k, v.clone());
            }
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
        os: Args,
    }

    #[test]
    fn the_flags_reach_the_settings() {
        let cli = Cli::parse_from([
            "t",
            "--os-auth-url",
            "https://k/v3",
            "--os-region-name",
            "R1",
        ]);
        let mut o = MethodOptions::default();
        cli.os.apply(&mut o);
        assert_eq!(o.setting("auth_url"), Some("https://k/v3"));
        assert_eq!(o.setting("region"), Some("R1"));
    }
}
