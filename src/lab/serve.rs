//! `fencekit lab`: serve simulated BMCs until SIGINT/SIGTERM.

use super::bmc::Faults;
use super::fleet::{Lab, LabSpec};
use crate::cli::args::LabArgs;
use crate::exit;
use std::io::Write;
use std::net::IpAddr;

fn spec(a: &LabArgs) -> Result<LabSpec, String> {
    let bind: IpAddr = a
        .bind
        .parse()
        .map_err(|_| format!("--bind '{}' is not an IP address", a.bind))?;
    if !bind.is_loopback() {
        return Err(format!(
            "--bind {bind}: the lab only serves on loopback (127.0.0.0/8 or ::1)"
        ));
    }
    if !(0.0..=1.0).contains(&a.loss) {
        return Err("--loss must be between 0.0 and 1.0".into());
    }
    if a.ciphers.iter().any(|c| !matches!(c, 3 | 17)) || a.ciphers.is_empty() {
        return Err("--ciphers takes 3 and/or 17".into());
    }
    Ok(LabSpec {
        bind,
        port_base: a.ipmi_port_base,
        nodes: a.nodes,
        username: a.username.clone(),
        password: a.password.clone(),
        power_on: a.power == "on",
        suites: a.ciphers.clone(),
        faults: Faults {
            loss: a.loss,
            drop: a.drop.clone(),
            delay: a.delay,
            transition: a.transition,
            stuck: a.stuck,
            strict_state: a.strict_state,
            silent: false,
            no_cipher_query: a.no_cipher_query,
        },
    })
}

/// Entry point of `fencekit lab`.
pub fn main(a: LabArgs) -> i32 {
    crate::cli::run::init_logging(a.verbose);
    let spec = match spec(&a) {
        Ok(s) => s,
        Err(m) => {
            eprintln!("fencekit lab: {m}");
            return exit::USAGE;
        }
    };
    let rt = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("fencekit lab: cannot start the async runtime: {e}");
            return exit::FAILURE;
        }
    };
    rt.block_on(async {
        let lab = match Lab::start(&spec).await {
            Ok(l) => l,
            Err(e) => {
                eprintln!("fencekit lab: cannot start: {e}");
                return exit::FAILURE;
            }
        };
        {
            let mut out = std::io::stdout().lock();
            for n in &lab.nodes {
                let a = n.addr();
                let hint = if spec.password == "lab" {
                    format!(
                        "  (try: FENCEKIT_PASSWORD=lab fencekit status ipmi://{}@{}:{})",
                        spec.username,
                        a.ip(),
                        a.port()
                    )
                } else {
                    String::new()
                };
                let _ = writeln!(out, "{} ipmi://{}:{}{hint}", n.name, a.ip(), a.port());
            }
            let _ = writeln!(
                out,
                "ready: {} simulated BMC(s); Ctrl-C stops",
                lab.nodes.len()
            );
            let _ = out.flush();
        }
        use tokio::signal::unix::{signal, SignalKind};
        match (
            signal(SignalKind::interrupt()),
            signal(SignalKind::terminate()),
        ) {
            (Ok(mut i), Ok(mut t)) => {
                tokio::select! {
                    _ = i.recv() => {}
                    _ = t.recv() => {}
                }
            }
            _ => std::future::pending::<()>().await,
        }
        drop(lab);
        exit::OK
    })
}
