//! `fencekit demo`: start an in-process lab and fence a simulated node,
//! printing every step, so a newcomer sees what fencing means in seconds.

use super::args::{DemoArgs, Output};
use super::render::human_line;
use crate::engine::event::Stamped;
use crate::engine::policy::Policy;
use crate::engine::power::Action;
use crate::engine::run::{run, Cancel};
use crate::exit;
use crate::fleet::result::{Report, TargetResult, Traffic};
use crate::ipmi::config::IpmiConfig;
use crate::ipmi::driver::IpmiDriver;
use crate::lab::fleet::{Lab, LabSpec};
use crate::secret::Secret;
use std::time::{Duration, Instant};

fn describe(e: &Stamped) -> String {
    let what = e.event.describe();
    format!("  {:>6} ms  {what}", e.at_ms)
}

/// Entry point of `fencekit demo`.
pub fn main(a: DemoArgs) -> i32 {
    let Some(rt) = crate::runtime::runtime("fencekit demo") else {
        return exit::FAILURE;
    };
    rt.block_on(async move {
        let spec = LabSpec {
            faults: crate::lab::bmc::Faults {
                transition: Duration::from_millis(300),
                ..Default::default()
            },
            ..LabSpec::default()
        };
        let lab = match Lab::start(&spec).await {
            Ok(l) => l,
            Err(e) => {
                eprintln!("fencekit demo: cannot start the lab: {e}");
                return exit::FAILURE;
            }
        };
        let node = &lab.nodes[0];
        let addr = node.addr();
        let human = a.output == Output::Human;
        if human {
            crate::outln!(
                "A simulated BMC is listening on ipmi://{addr} (user admin, password lab; power takes 300 ms to change).\n"
            );
        }
        let mut results = Vec::new();
        let mut code = exit::OK;
        for action in [Action::Status, Action::Off, Action::Status, Action::Reboot] {
            let cfg = IpmiConfig::new(
                addr.ip().to_string(),
                addr.port(),
                "admin",
                Secret::from_str_value("lab"),
            );
            let mut driver = match IpmiDriver::new(cfg) {
                Ok(d) => d,
                Err(m) => {
                    eprintln!("fencekit demo: {m}");
                    return exit::FAILURE;
                }
            };
            let policy = Policy {
                deadline: Some(crate::engine::clock::Instant::now() + Duration::from_secs(30)),
                ..Policy::native()
            };
            let mut timeline: Vec<Stamped> = Vec::new();
            let began = Instant::now();
            let mut sink = |e: &Stamped| timeline.push(e.clone());
            let r = run(&mut driver, action, &policy, &mut sink, Cancel::never()).await;
            let s = driver.stats();
            let res = TargetResult::new(
                format!("ipmi://{addr}"),
                action,
                &r,
                began.elapsed(),
                timeline,
                Traffic {
                    sent: s.sent,
                    received: s.received,
                    retransmits: s.retransmits,
                },
            );
            if human {
                crate::outln!("$ fencekit {action} ipmi://admin@{addr}");
                for e in &res.timeline {
                    crate::outln!("{}", describe(e));
                }
                crate::outln!("  => {}\n", human_line(&res));
            }
            if !res.ok {
                code = exit::FAILURE;
            }
            results.push(res);
        }
        if human {
            crate::outln!(
                "The BMC saw these power commands: {:?}.\n\
                 Against a real BMC: fencekit off ipmi://admin@BMC-ADDRESS --password-file /etc/fencekit/bmc.pw",
                node.bmc().log()
            );
        } else {
            match serde_json::to_string_pretty(&Report { results: &results }) {
                Ok(s) => crate::outln!("{s}"),
                Err(e) => eprintln!("fencekit demo: {e}"),
            }
        }
        code
    })
}
