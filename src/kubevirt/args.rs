//! KubeVirt's native command-line flags (flattened into every command that
//! acts on targets through `method::platforms::PlatformArgs`). The TLS
//! flags are every HTTPS platform's and stay with the generic options.

use crate::platform::build::MethodOptions;

/// KubeVirt options (targets `kubevirt://[CONTEXT@]NAMESPACE/VM`; inventory
/// `driver = "kubevirt"`).
#[derive(clap::Args, Debug, Clone, Default)]
#[group(id = "kubevirt-options")]
#[command(next_help_heading = "KubeVirt")]
pub struct Args {
    /// KubeVirt: the kubeconfig file (default: KUBECONFIG, ~/.kube/config,
    /// then the pod's service account). Inventories use kubeconfig. With
    /// `check --far`: read the Secrets and nodes with `kubectl` (or `oc`)
    /// through this kubeconfig.
    #[arg(long, value_name = "FILE")]
    pub kubeconfig: Option<std::path::PathBuf>,
    /// KubeVirt: refuse to act (before any state change) unless the
    /// VirtualMachine's metadata.uid is UID. Inventories use vm_uid;
    /// --expect-uuid compares the VMI's firmware UUID.
    #[arg(long, value_name = "UID")]
    pub expect_vm_uid: Option<String>,
}

impl Args {
    /// Copies the flags into the method options.
    pub fn apply(&self, o: &mut MethodOptions) {
        o.kubeconfig = self.kubeconfig.clone();
        o.vm_uid = self.expect_vm_uid.clone();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        kubevirt: Args,
    }

    #[test]
    fn the_flags_reach_the_method_options() {
        let cli = Cli::parse_from(["t", "--kubeconfig", "/kc", "--expect-vm-uid", "u-1"]);
        let mut o = MethodOptions::default();
        cli.kubevirt.apply(&mut o);
        assert_eq!(o.kubeconfig, Some(std::path::PathBuf::from("/kc")));
        assert_eq!(o.vm_uid.as_deref(), Some("u-1"));
    }
}
