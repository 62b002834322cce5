//! Azure's native command-line flags (flattened into every command that
//! acts on targets through `method::platforms::PlatformArgs`). The client
//! ID is `--username`, its secret comes from the password options, the
//! TLS flags, `--endpoint-url` (Resource Manager) and `--allow-self-fence`
//! are the generic ones.

use crate::platform::build::MethodOptions;

/// Azure options (targets `azure://SUBSCRIPTION/RESOURCE-GROUP/VM`;
/// inventory `driver = "azure"` with `settings = { … }`).
#[derive(clap::Args, Debug, Clone, Default)]
#[group(id = "azure-options")]
#[command(next_help_heading = "Azure")]
pub struct Args {
    /// Azure: the tenant of the service principal (--username is its client
    /// ID, the password options its secret; default AZURE_TENANT_ID).
    /// Inventories use settings.tenant.
    #[arg(long, value_name = "TENANT")]
    pub azure_tenant: Option<String>,
    /// Azure: a PEM file with the service principal's certificate and key,
    /// instead of a secret.
    #[arg(long, value_name = "FILE")]
    pub azure_client_certificate: Option<String>,
    /// Azure: authenticate as the managed identity (a workload identity's
    /// AZURE_FEDERATED_TOKEN_FILE first, then the metadata service;
    /// --username names a user-assigned one). Without credentials given, the
    /// SDKs' order is used.
    #[arg(long)]
    pub azure_msi: bool,
    /// Azure: the cloud (china, usgov, germany, stack; default public).
    #[arg(long, value_name = "NAME")]
    pub azure_cloud: Option<String>,
    /// Azure: an Azure Stack Hub's Resource Manager URL (with --azure-cloud stack).
    #[arg(long, value_name = "URL")]
    pub azure_metadata_endpoint: Option<String>,
    /// Azure: refuse to act (before any state change) unless the VM's vmId
    /// is this. Inventories use settings.vm_id; --expect-uuid compares the
    /// SMBIOS UUID (the vmId in either byte order).
    #[arg(long, value_name = "UUID")]
    pub expect_vm_id: Option<String>,
}

impl Args {
    /// Copies the flags into the method options.
    pub fn apply(&self, o: &mut MethodOptions) {
        let pairs = [
            ("tenant", &self.azure_tenant),
            ("client_certificate", &self.azure_client_certificate),
            ("cloud", &self.azure_cloud),
            ("metadata_endpoint", &self.azure_metadata_endpoint),
            ("vm_id", &self.expect_vm_id),
        ];
        for (k, v) in pairs {
            if let Some(v) = v {
                o.set(k, v.clone());
            }
        }
        if self.azure_msi {
            o.set("msi", "true");
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
        azure: Args,
    }

    #[test]
    fn the_flags_reach_the_settings() {
        let cli = Cli::parse_from([
            "t",
            "--azure-tenant",
            "t-1",
            "--azure-msi",
            "--expect-vm-id",
            "v",
        ]);
        let mut o = MethodOptions::default();
        cli.azure.apply(&mut o);
        assert_eq!(o.setting("tenant"), Some("t-1"));
        assert!(o.flag("msi"));
        assert_eq!(o.setting("vm_id"), Some("v"));
        assert_eq!(o.setting("cloud"), None);
    }
}
