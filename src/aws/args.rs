//! Amazon EC2's native command-line flags (flattened into every command
//! that acts on targets through `method::platforms::PlatformArgs`), and
//! `--driver aws` (`--region` and `--plug INSTANCE-ID`, no `--ip`).

use crate::platform::args::CliDriver;
use crate::platform::build::MethodOptions;

/// Amazon EC2 options (targets `aws://REGION/INSTANCE`, or `--driver aws
/// --region R --plug ID`; inventory `driver = "aws"`).
#[derive(clap::Args, Debug, Clone, Default)]
#[group(id = "aws-options")]
#[command(next_help_heading = "Amazon EC2")]
pub struct Args {
    /// AWS: the region (default AWS_REGION / AWS_DEFAULT_REGION).
    #[arg(long, value_name = "REGION")]
    pub region: Option<String>,
    /// AWS: the access key ID; its secret access key comes from the password
    /// options (--password-file …, FENCEKIT_PASSWORD). Without it: the SDKs'
    /// credential chain (environment, shared files, web identity, instance
    /// metadata).
    #[arg(long, value_name = "ID")]
    pub access_key: Option<String>,
    /// AWS: the EC2 endpoint (default: AWS_ENDPOINT_URL_EC2, AWS_ENDPOINT_URL,
    /// or the region's public one).
    #[arg(long, value_name = "URL")]
    pub endpoint_url: Option<String>,
    /// AWS: refuse to act (before any state change) unless the instance's
    /// PrivateDnsName is NAME (how OpenShift and most Kubernetes on EC2 name
    /// nodes). Inventories use node_name.
    #[arg(long, value_name = "NAME")]
    pub expect_node_name: Option<String>,
    /// AWS: refuse to act unless the instance carries this tag (KEY=VALUE,
    /// e.g. Name=worker-0). Inventories use expect_tag.
    #[arg(long, value_name = "KEY=VALUE")]
    pub expect_tag: Option<String>,
    /// AWS: allow off/reboot of the instance this process runs on (the
    /// metadata service tells; refused otherwise).
    #[arg(long)]
    pub allow_self_fence: bool,
}

impl Args {
    /// Copies the flags into the method options.
    pub fn apply(&self, o: &mut MethodOptions) {
        o.region = self.region.clone();
        o.access_key = self.access_key.clone();
        o.endpoint_url = self.endpoint_url.clone();
        o.node_name = self.expect_node_name.clone();
        o.expect_tag = self.expect_tag.clone();
        o.allow_self_fence = self.allow_self_fence;
    }

    /// When the flags name one machine (an expected name or tag): why the
    /// targets must then be exactly one URL.
    pub fn one_machine(&self) -> Option<&'static str> {
        (self.expect_node_name.is_some() || self.expect_tag.is_some()).then_some(
            "--expect-node-name/--expect-tag name one machine: give exactly one aws:// target \
             (or --driver aws --plug ID); pin inventory nodes with node_name = \"…\"",
        )
    }
}

/// `--driver aws [--region R] --plug ID`: `aws://R/ID` (the region from
/// `--region`, else the environment); `--ip` is refused.
pub const DRIVER: CliDriver = CliDriver {
    name: "aws",
    help: "Amazon EC2 (--region, --plug names the instance)",
    target: |host, o| {
        if host.is_some() {
            return Err("--driver aws takes no --ip: give --region and --plug INSTANCE-ID".into());
        }
        let region = o
            .region
            .clone()
            .or_else(|| {
                super::config::Env::from_process()
                    .region()
                    .map(str::to_string)
            })
            .ok_or_else(|| super::config::ConfigError::NoRegion.to_string())?;
        let plug = o
            .plug
            .as_deref()
            .ok_or("--driver aws needs --plug INSTANCE-ID")?;
        Ok(Some(format!("aws://{region}/{plug}")))
    },
};

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        aws: Args,
    }

    #[test]
    fn the_flags_reach_the_method_options() {
        let cli = Cli::parse_from(["t", "--region", "eu-west-1", "--expect-tag", "Name=w0"]);
        let mut o = MethodOptions::default();
        cli.aws.apply(&mut o);
        assert_eq!(o.region.as_deref(), Some("eu-west-1"));
        assert_eq!(o.expect_tag.as_deref(), Some("Name=w0"));
        assert!(!o.allow_self_fence);
        assert!(cli.aws.one_machine().is_some());
        assert!(Args::default().one_machine().is_none());
        assert!((DRIVER.target)(Some("10.0.0.1"), &o)
            .unwrap_err()
            .contains("takes no --ip"));
        assert!((DRIVER.target)(None, &o).unwrap_err().contains("--plug"));
        o.plug = Some("i-0123".into());
        assert_eq!(
            (DRIVER.target)(None, &o),
            Ok(Some("aws://eu-west-1/i-0123".into()))
        );
    }
}
