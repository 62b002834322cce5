//! IBM Cloud's native command-line flags (flattened into every command
//! that acts on targets). The API key comes from the password options,
//! `--endpoint-url`, the TLS flags and `--allow-self-fence` are the
//! generic ones.

use crate::platform::build::MethodOptions;

/// IBM Cloud options (targets `ibmvpc://REGION/INSTANCE-ID`,
/// `powervs://REGION/WORKSPACE-ID/INSTANCE-ID`; inventory `driver = "ibm"`
/// with `settings = { … }`).
#[derive(clap::Args, Debug, Clone, Default)]
#[group(id = "ibm-options")]
#[command(next_help_heading = "IBM Cloud")]
pub struct Args {
    /// IBM Power VS: the workspace's CRN, sent with every request
    /// (crn:v1:bluemix:public:power-iaas:ZONE:a/ACCOUNT:WORKSPACE::).
    /// Inventories use settings.crn.
    #[arg(long, value_name = "CRN")]
    pub ibm_crn: Option<String>,
    /// IBM Cloud: the private endpoints (IAM and the service, from inside
    /// IBM Cloud) instead of the public ones.
    #[arg(long)]
    pub ibm_private: bool,
    /// IBM Cloud: an HTTP proxy for IAM and the API (default HTTPS_PROXY).
    #[arg(long, value_name = "URL")]
    pub ibm_proxy: Option<String>,
}

impl Args {
    /// Copies the flags into the method options.
    pub fn apply(&self, o: &mut MethodOptions) {
        if let Some(c) = &self.ibm_crn {
            o.set("crn", c.clone());
        }
        if let Some(p) = &self.ibm_proxy {
            o.set("proxy", p.clone());
        }
        if self.ibm_private {
            o.set("api_type", "private");
        }
    }
}
