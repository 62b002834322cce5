//! The Redfish driver against the lab's Redfish service, in-process: every
//! reset-type mapping, discovery, transitional states, the error answers of
//! real BMCs, deadlines, sessions and TLS trust.

use fencekit::engine::driver::PowerDriver;
use fencekit::engine::error::{ErrorKind, Stage};
use fencekit::engine::event::{Event, Stamped};
use fencekit::engine::policy::{Policy, PowerTimeout};
use fencekit::engine::power::{Action, PowerCommand, PowerState, RebootMethod, Transition};
use fencekit::engine::run::{run, Cancel, Failure, Outcome};
use fencekit::fingerprint::format_hex as format_fingerprint;
use fencekit::lab::bmc::{Bmc, Faults};
use fencekit::lab::redfish::{
    LabCert, LabErrorAnswer, LabRedfish, LabTask, RedfishFaults, RedfishLabOptions, SystemBody,
};
use fencekit::redfish::config::{RedfishConfig, Scheme, TlsTrust};
use fencekit::redfish::driver::{RedfishDriver, Stats};
use fencekit::secret::Secret;
use std::path::PathBuf;
use std::time::{Duration, Instant};

const PASSWORD: &str = "lab-secret-pw";

struct Lab {
    lab: LabRedfish,
    _dir: tempfile::TempDir,
    pem: PathBuf,
}

async fn start(on: bool, faults: Faults, opts: RedfishLabOptions) -> Lab {
    let dir = tempfile::tempdir().unwrap();
    let pem = dir.path().join("bmc.pem");
    let opts = RedfishLabOptions {
        password: PASSWORD.into(),
        cert_path: Some(pem.clone()),
        ..opts
    };
    let lab = LabRedfish::start("127.0.0.1:0".parse().unwrap(), Bmc::new(on, faults), opts)
        .await
        .unwrap();
    Lab {
        lab,
        _dir: dir,
        pem,
    }
}

async fn lab_on() -> Lab {
    start(true, Faults::default(), RedfishLabOptions::default()).await
}

impl Lab {
    /// A config that trusts the lab's certificate and names the system.
    fn cfg(&self) -> RedfishConfig {
        let mut c = RedfishConfig::new(
            "127.0.0.1",
            self.lab.addr.port(),
            "admin",
            Secret::from_str_value(PASSWORD),
        );
        c.tls = TlsTrust::Verify {
            ca_cert: Some(self.pem.clone()),
        };
        if self.lab.cert_pem().is_none() {
            c.scheme = Scheme::Http;
            c.tls = TlsTrust::default();
        }
        c.systems_uri = Some(self.lab.system_uri());
        c.request_timeout = Duration::from_secs(2);
        c
    }

    fn discovering(&self) -> RedfishConfig {
        RedfishConfig {
            systems_uri: None,
            ..self.cfg()
        }
    }
}

fn policy() -> Policy {
    Policy {
        poll_interval: Duration::from_millis(10),
        poll_interval_max: Duration::from_millis(50),
        power_timeout: PowerTimeout::Wall(Duration::from_secs(3)),
        step_timeout: Duration::from_secs(2),
        deadline: Some(fencekit::engine::clock::Instant::now() + Duration::from_secs(15)),
        ..Policy::native()
    }
}

struct Ran {
    result: Result<Outcome, Failure>,
    events: Vec<Stamped>,
    stats: Stats,
}

impl Ran {
    fn err(&self) -> &Failure {
        self.result.as_ref().expect_err("the action should fail")
    }

    fn observed(&self) -> Vec<PowerState> {
        self.events
            .iter()
            .filter_map(|e| match e.event {
                Event::StateObserved { state } => Some(state),
                _ => None,
            })
            .collect()
    }

    fn transitions(&self) -> Vec<Transition> {
        self.events
            .iter()
            .filter_map(|e| match e.event {
                Event::TransitionObserved { transition } => Some(transition),
                _ => None,
            })
            .collect()
    }

    fn detail(&self) -> String {
        self.events
            .iter()
            .find_map(|e| match &e.event {
                Event::Authenticated { detail } => Some(detail.clone()),
                _ => None,
            })
            .unwrap_or_default()
    }

    fn retries(&self) -> Vec<String> {
        self.events
            .iter()
            .filter_map(|e| match &e.event {
                Event::Retry { reason, .. } => Some(reason.clone()),
                _ => None,
            })
            .collect()
    }
}

async fn go(cfg: RedfishConfig, action: Action, policy: &Policy) -> Ran {
    let mut d = RedfishDriver::new(cfg).unwrap();
    let mut events = Vec::new();
    let mut sink = |e: &Stamped| events.push(e.clone());
    let result = run(&mut d, action, policy, &mut sink, Cancel::never()).await;
    if let Err(f) = &result {
        assert!(
            !f.error.message.contains(PASSWORD),
            "the password leaked: {}",
            f.error.message
        );
    }
    Ran {
        result,
        events,
        stats: d.stats(),
    }
}

fn reset_types(l: &[&str]) -> Vec<String> {
    l.iter().map(|s| s.to_string()).collect()
}

#[tokio::test]
async fn status_costs_one_request_with_a_systems_uri_and_three_with_discovery() {
    let l = lab_on().await;
    let r = go(l.cfg(), Action::Status, &policy()).await;
    assert_eq!(
        r.result,
        Ok(Outcome::Status {
            state: PowerState::On
        })
    );
    assert_eq!(r.stats.requests, 1);
    let r = go(l.discovering(), Action::Status, &policy()).await;
    assert_eq!(
        r.result,
        Ok(Outcome::Status {
            state: PowerState::On
        })
    );
    assert_eq!(r.stats.requests, 3, "root, Systems, the system");
    assert_eq!(l.lab.stats().requests, 4);
    l.lab.bmc.set_on(false);
    let r = go(l.cfg(), Action::Status, &policy()).await;
    assert_eq!(
        r.result,
        Ok(Outcome::Status {
            state: PowerState::Off
        })
    );
    let detail = r.detail();
    assert!(detail.contains("basic auth"), "{detail}");
    assert!(
        detail.contains("off=ForceOff, on=On, cycle=ForceRestart, diag=Nmi"),
        "{detail}"
    );
    let fp = format_fingerprint(&l.lab.cert_fingerprint().unwrap());
    assert!(
        detail.contains(&fp),
        "the tls identity is recorded: {detail}"
    );
}

#[tokio::test]
async fn every_intent_maps_to_the_standard_reset_type() {
    let l = lab_on().await;
    let r = go(l.cfg(), Action::Off, &policy()).await;
    assert_eq!(
        r.result,
        Ok(Outcome::Reached {
            state: PowerState::Off
        })
    );
    assert!(!l.lab.bmc.is_on());
    let r = go(l.cfg(), Action::On, &policy()).await;
    assert_eq!(
        r.result,
        Ok(Outcome::Reached {
            state: PowerState::On
        })
    );
    let r = go(l.cfg(), Action::Reboot, &policy()).await;
    assert_eq!(r.result, Ok(Outcome::Rebooted));
    let cycle = Policy {
        method: RebootMethod::Cycle,
        ..policy()
    };
    let r = go(l.cfg(), Action::Reboot, &cycle).await;
    assert_eq!(r.result, Ok(Outcome::CycleSent));
    let r = go(l.cfg(), Action::Diag, &policy()).await;
    assert_eq!(r.result, Ok(Outcome::DiagSent));
    assert_eq!(
        l.lab.stats().resets,
        reset_types(&["ForceOff", "On", "ForceOff", "On", "ForceRestart", "Nmi"])
    );
    assert_eq!(
        l.lab.bmc.log(),
        vec!["off", "on", "off", "on", "cycle", "diag"]
    );
}

#[tokio::test]
async fn the_choice_follows_what_the_system_offers() {
    for action_info in [false, true] {
        let l = start(
            false,
            Faults::default(),
            RedfishLabOptions {
                reset_types: reset_types(&["ForceOn", "ForceOff", "PowerCycle"]),
                action_info,
                ..Default::default()
            },
        )
        .await;
        let r = go(l.cfg(), Action::On, &policy()).await;
        assert_eq!(
            r.result,
            Ok(Outcome::Reached {
                state: PowerState::On
            })
        );
        let cycle = Policy {
            method: RebootMethod::Cycle,
            ..policy()
        };
        let r = go(l.cfg(), Action::Reboot, &cycle).await;
        assert_eq!(r.result, Ok(Outcome::CycleSent));
        let r = go(l.cfg(), Action::Diag, &policy()).await;
        let e = &r.err().error;
        assert_eq!(e.kind, ErrorKind::Unsupported);
        assert!(
            e.message.contains("offered: ForceOn, ForceOff, PowerCycle"),
            "{}",
            e.message
        );
        assert_eq!(
            l.lab.stats().resets,
            reset_types(&["ForceOn", "PowerCycle"])
        );
        if action_info {
            assert!(r.detail().contains("ActionInfo"), "{}", r.detail());
        }
    }
}

#[tokio::test]
async fn no_force_off_means_no_fencing_not_a_graceful_shutdown() {
    let l = start(
        true,
        Faults::default(),
        RedfishLabOptions {
            reset_types: reset_types(&["On", "GracefulShutdown", "GracefulRestart"]),
            ..Default::default()
        },
    )
    .await;
    let r = go(l.cfg(), Action::Off, &policy()).await;
    let e = &r.err().error;
    assert_eq!((e.kind, e.stage), (ErrorKind::Unsupported, Stage::Command));
    assert!(
        e.message.contains("no safe reset type for off"),
        "{}",
        e.message
    );
    assert!(e.message.contains("GracefulShutdown"), "{}", e.message);
    assert!(l.lab.stats().resets.is_empty(), "nothing was sent");
    assert!(l.lab.bmc.is_on());
    assert!(r.detail().contains("off=-"), "{}", r.detail());
}

#[tokio::test]
async fn discovery_with_one_and_several_systems() {
    let l = start(
        true,
        Faults::default(),
        RedfishLabOptions {
            extra_systems: 2,
            ..Default::default()
        },
    )
    .await;
    let r = go(l.discovering(), Action::Status, &policy()).await;
    let e = &r.err().error;
    assert_eq!(e.kind, ErrorKind::Config);
    assert!(
        e.message.contains("3 systems")
            && e.message.contains("/redfish/v1/Systems/1")
            && e.message.contains("/redfish/v1/Systems/1-3"),
        "{}",
        e.message
    );
    // By Id, by Name (read one by one), and a plug that names nothing.
    for plug in ["1", "node01"] {
        let mut c = l.discovering();
        c.plug = Some(plug.into());
        let r = go(c, Action::Off, &policy()).await;
        assert_eq!(
            r.result,
            Ok(Outcome::Reached {
                state: PowerState::Off
            }),
            "plug {plug}"
        );
        l.lab.bmc.set_on(true);
    }
    let mut c = l.discovering();
    c.plug = Some("node09".into());
    let r = go(c, Action::Status, &policy()).await;
    assert!(r
        .err()
        .error
        .message
        .contains("no system matches plug 'node09'"));
    let mut c = l.discovering();
    c.plug = Some("1-2".into());
    let r = go(c, Action::Status, &policy()).await;
    assert_eq!(
        r.result,
        Ok(Outcome::Status {
            state: PowerState::On
        })
    );
    assert_eq!(l.lab.stats().resets, reset_types(&["ForceOff", "ForceOff"]));
}

#[tokio::test]
async fn transitional_states_are_never_the_target() {
    let faults = Faults {
        transition: Duration::from_millis(300),
        ..Default::default()
    };
    let l = start(true, faults, RedfishLabOptions::default()).await;
    let t = Instant::now();
    let r = go(l.cfg(), Action::Off, &policy()).await;
    assert_eq!(
        r.result,
        Ok(Outcome::Reached {
            state: PowerState::Off
        })
    );
    assert!(t.elapsed() >= Duration::from_millis(300));
    let seen = r.transitions();
    assert!(
        seen.contains(&Transition::PoweringOff),
        "the transition was read and waited through: {:?}",
        r.events
    );
    assert!(r.retries().is_empty(), "{:?}", r.retries());
    assert_eq!(
        r.observed(),
        vec![PowerState::On, PowerState::Off, PowerState::Off]
    );

    // A service stuck in PoweringOff: status says so; `on` waits for it to
    // settle and fails naming it, sending nothing.
    l.lab.bmc.set_on(true);
    l.lab.set_faults(RedfishFaults {
        system_body: SystemBody::PowerState(Some("PoweringOff".into())),
        ..Default::default()
    });
    let short = Policy {
        power_timeout: PowerTimeout::Wall(Duration::from_millis(400)),
        ..policy()
    };
    let r = go(l.cfg(), Action::Status, &short).await;
    assert_eq!(
        r.result,
        Ok(Outcome::InTransition {
            transition: Transition::PoweringOff
        })
    );
    let r = go(l.cfg(), Action::On, &short).await;
    assert_eq!(r.err().error.kind, ErrorKind::TransitionTimeout);
    assert!(
        r.err().error.message.contains("powering off"),
        "{}",
        r.err().error
    );
    // Unknown and missing states are failures, never guesses.
    for (body, what) in [
        (
            SystemBody::PowerState(Some("Paused".into())),
            "unknown PowerState 'Paused'",
        ),
        (SystemBody::PowerState(None), "no PowerState"),
    ] {
        l.lab.set_faults(RedfishFaults {
            system_body: body,
            ..Default::default()
        });
        let r = go(l.cfg(), Action::Off, &short).await;
        let e = &r.err().error;
        assert_eq!(e.kind, ErrorKind::StatusUnreadable);
        assert!(e.message.contains(what), "{}", e.message);
    }
    assert!(
        l.lab.stats().resets.len() == 1,
        "no command after an unreadable state"
    );
}

#[tokio::test]
async fn already_in_state_answers_lead_to_a_fresh_read() {
    let l = start(
        true,
        Faults::default(),
        RedfishLabOptions {
            faults: RedfishFaults {
                conflict_when_already: true,
                ..Default::default()
            },
            ..Default::default()
        },
    )
    .await;
    let mut d = RedfishDriver::new(l.cfg()).unwrap();
    d.connect(None).await.unwrap();
    let e = d.command(PowerCommand::On, None).await.unwrap_err();
    assert_eq!(e.kind, ErrorKind::NotInPresentState);
    assert!(
        e.message.contains("http 409") && e.message.contains("already powered ON"),
        "{}",
        e.message
    );
    d.close().await;
    // Off while off on a chassis that refuses it (quirk 4) is the same.
    let strict = Faults {
        strict_state: true,
        ..Default::default()
    };
    let l2 = start(false, strict, RedfishLabOptions::default()).await;
    let mut d = RedfishDriver::new(l2.cfg()).unwrap();
    let e = d.command(PowerCommand::Off, None).await.unwrap_err();
    assert_eq!(e.kind, ErrorKind::NotInPresentState, "{}", e.message);
    d.close().await;
}

#[tokio::test]
async fn busy_answers_are_retried_within_the_deadline() {
    let cases = [
        (
            503,
            "Base.1.8.ServiceTemporarilyUnavailable",
            "The service is temporarily unavailable.",
        ),
        (500, "IDRAC.2.8.SYS446", "The BMC is busy; try again later."),
        (
            400,
            "iLO.2.14.InvalidOperationForSystemState",
            "Power transition in progress. Retry later.",
        ),
        (
            400,
            "Base.1.8.ResourceNotReadyRetry",
            "The resource is not ready.",
        ),
    ];
    for (status, id, message) in cases {
        let l = start(
            true,
            Faults::default(),
            RedfishLabOptions {
                faults: RedfishFaults {
                    reset_error: Some(LabErrorAnswer {
                        status,
                        message_id: id.into(),
                        message: message.into(),
                        times: 2,
                    }),
                    ..Default::default()
                },
                ..Default::default()
            },
        )
        .await;
        let r = go(l.cfg(), Action::Off, &policy()).await;
        assert_eq!(
            r.result,
            Ok(Outcome::Reached {
                state: PowerState::Off
            }),
            "{status} {id}"
        );
        assert_eq!(r.retries().len(), 2, "{:?}", r.retries());
        assert!(r.retries()[0].contains(&format!("http {status}")));
        assert_eq!(l.lab.stats().resets.len(), 3);
    }
}

#[tokio::test]
async fn other_error_answers_fail_with_their_text() {
    let l = start(
        true,
        Faults::default(),
        RedfishLabOptions {
            faults: RedfishFaults {
                reset_error: Some(LabErrorAnswer {
                    status: 400,
                    message_id: "Base.1.8.ActionParameterUnknown".into(),
                    message: "The action was submitted with the invalid parameter ResetType."
                        .into(),
                    times: 0,
                }),
                ..Default::default()
            },
            ..Default::default()
        },
    )
    .await;
    let r = go(l.cfg(), Action::Off, &policy()).await;
    let e = &r.err().error;
    assert_eq!(e.kind, ErrorKind::Unsupported);
    assert!(
        e.message.contains("http 400")
            && e.message.contains("Base.1.8.ActionParameterUnknown")
            && e.message.contains("invalid parameter ResetType"),
        "{}",
        e.message
    );
    assert!(e.message.contains("ResetType ForceOff"), "{}", e.message);
    assert_eq!(l.lab.stats().resets.len(), 1, "not retried");
    // A refusal nobody documented fails too, quoting the vendor's MessageId.
    l.lab.set_faults(RedfishFaults {
        reset_error: Some(LabErrorAnswer {
            status: 400,
            message_id: "Contoso.1.0.PowerLocked".into(),
            message: "Power control is locked by the chassis manager.".into(),
            times: 0,
        }),
        ..Default::default()
    });
    let r = go(l.cfg(), Action::Off, &policy()).await;
    let e = &r.err().error;
    assert_eq!(e.kind, ErrorKind::DeviceError);
    assert!(
        e.message.contains("Contoso.1.0.PowerLocked"),
        "{}",
        e.message
    );
    assert_eq!(l.lab.stats().resets.len(), 2, "not retried");
}

/// At most once over HTTP (issue 23, item 9): a BMC that carries the
/// reset out at once but answers after the client's request timeout. The
/// answer is late, not lost — the BMC has the request — so the reset is
/// never POSTed again: exactly one POST and one chassis operation per
/// action. (reboot --method cycle re-POSTed it, up to 1 + retry_on times.)
#[tokio::test]
async fn a_late_reset_answer_is_never_posted_again() {
    let bmc = Bmc::new(true, Faults::default());
    let dir = tempfile::tempdir().unwrap();
    let pem = dir.path().join("bmc.pem");
    let lab = LabRedfish::start(
        "127.0.0.1:0".parse().unwrap(),
        bmc.clone(),
        RedfishLabOptions {
            password: PASSWORD.into(),
            cert_path: Some(pem.clone()),
            faults: RedfishFaults {
                reset_answer_delay: Duration::from_secs(3),
                ..Default::default()
            },
            ..Default::default()
        },
    )
    .await
    .unwrap();
    let l = Lab {
        lab,
        _dir: dir,
        pem,
    };
    let cfg = RedfishConfig {
        request_timeout: Duration::from_millis(800),
        ..l.cfg()
    };
    let p = Policy {
        step_timeout: Duration::from_millis(800),
        retry_on: 3,
        ..policy()
    };
    let cases: [(Action, RebootMethod, &str, &str); 3] = [
        (Action::Reboot, RebootMethod::Cycle, "ForceRestart", "cycle"),
        (Action::Diag, RebootMethod::OnOff, "Nmi", "diag"),
        (Action::Off, RebootMethod::OnOff, "ForceOff", "off"),
    ];
    for (action, method, reset, op) in cases {
        let posts = l.lab.stats().resets.len();
        let ops = bmc.log().len();
        let r = go(
            cfg.clone(),
            action,
            &Policy {
                method,
                ..p.clone()
            },
        )
        .await;
        // Let the held answers go, and any duplicate arrive.
        tokio::time::sleep(Duration::from_millis(3500)).await;
        let sent: Vec<String> = l.lab.stats().resets[posts..].to_vec();
        assert_eq!(sent, reset_types(&[reset]), "{action}: {:?}", r.result);
        assert_eq!(
            bmc.log()[ops..].to_vec(),
            vec![op],
            "{action}: {:?}",
            r.result
        );
        let unanswered = r
            .events
            .iter()
            .any(|e| matches!(e.event, Event::CommandUnanswered { .. }));
        assert!(unanswered, "{action}: {:?}", r.events);
        match action {
            // The off is read back: reached, without a second POST.
            Action::Off => assert_eq!(
                r.result,
                Ok(Outcome::Reached {
                    state: PowerState::Off
                })
            ),
            _ => assert!(
                matches!(
                    &r.result,
                    Ok(Outcome::OutcomeUnknown { .. } | Outcome::CycleSent)
                ),
                "{action}: {:?}",
                r.result
            ),
        }
        bmc.set_on(true);
    }
}

#[tokio::test]
async fn task_monitors_are_followed() {
    let l = start(
        true,
        Faults::default(),
        RedfishLabOptions {
            faults: RedfishFaults {
                task: Some(LabTask {
                    polls: 2,
                    fail: false,
                }),
                ..Default::default()
            },
            ..Default::default()
        },
    )
    .await;
    let r = go(l.cfg(), Action::Off, &policy()).await;
    assert_eq!(
        r.result,
        Ok(Outcome::Reached {
            state: PowerState::Off
        })
    );
    assert_eq!(r.stats.task_polls, 3);
    assert_eq!(l.lab.stats().task_polls, 3);
    assert!(!l.lab.bmc.is_on());

    l.lab.bmc.set_on(true);
    l.lab.set_faults(RedfishFaults {
        task: Some(LabTask {
            polls: 1,
            fail: true,
        }),
        ..Default::default()
    });
    let r = go(l.cfg(), Action::Off, &policy()).await;
    let e = &r.err().error;
    assert_eq!(e.kind, ErrorKind::DeviceError);
    assert!(
        e.message
            .contains("reset task failed: The lab failed the reset task"),
        "{}",
        e.message
    );
    assert!(l.lab.bmc.is_on());
}

#[tokio::test]
async fn rejected_credentials_fail_once_without_retries() {
    let l = lab_on().await;
    let mut c = l.discovering();
    c.password = Secret::from_str_value("wrong-password");
    let r = go(c, Action::Off, &policy()).await;
    let e = &r.err().error;
    assert_eq!(
        (e.kind, e.stage),
        (ErrorKind::PasswordInvalid, Stage::Authenticate)
    );
    assert!(
        e.message.contains("rejected the credentials (http 401"),
        "{}",
        e.message
    );
    assert!(!e.message.contains("wrong-password"));
    assert_eq!(l.lab.stats().auth_failures, 1);
    assert!(l.lab.bmc.is_on());
}

#[tokio::test]
async fn a_missing_system_names_the_uri() {
    let l = lab_on().await;
    let mut c = l.cfg();
    c.systems_uri = Some("/redfish/v1/Systems/nope".into());
    let r = go(c, Action::Status, &policy()).await;
    let e = &r.err().error;
    assert_eq!(e.kind, ErrorKind::DeviceError);
    assert!(
        e.message
            .contains("GET /redfish/v1/Systems/nope with http 404"),
        "{}",
        e.message
    );
}

#[tokio::test]
async fn bodies_that_are_not_json_or_too_big_are_protocol_errors() {
    let l = lab_on().await;
    l.lab.set_faults(RedfishFaults {
        system_body: SystemBody::NotJson,
        ..Default::default()
    });
    let r = go(l.cfg(), Action::Status, &policy()).await;
    let e = &r.err().error;
    assert_eq!(e.kind, ErrorKind::Protocol);
    assert!(
        e.message.contains("is not JSON") && e.message.contains("<html>"),
        "{}",
        e.message
    );
    l.lab.set_faults(RedfishFaults {
        system_body: SystemBody::Huge(4 << 20),
        ..Default::default()
    });
    let r = go(l.cfg(), Action::Status, &policy()).await;
    let e = &r.err().error;
    assert_eq!(e.kind, ErrorKind::Protocol);
    assert!(e.message.contains("larger than 1024 KiB"), "{}", e.message);
}

#[tokio::test]
async fn a_service_that_never_answers_fails_at_the_deadline() {
    let faults = Faults {
        silent: true,
        ..Default::default()
    };
    let l = start(true, faults, RedfishLabOptions::default()).await;
    let p = Policy {
        step_timeout: Duration::from_millis(600),
        ..policy()
    };
    let t = Instant::now();
    let r = go(l.cfg(), Action::Status, &p).await;
    let took = t.elapsed();
    let e = &r.err().error;
    assert_eq!((e.kind, e.stage), (ErrorKind::Timeout, Stage::Authenticate));
    assert!(
        e.message.contains("no answer from 127.0.0.1:")
            && e.message.contains("GET /redfish/v1/Systems/1"),
        "{}",
        e.message
    );
    assert!(e.to_string().contains("during session set-up"));
    assert!(
        took >= Duration::from_millis(550) && took < Duration::from_millis(1500),
        "{took:?}"
    );
    assert_eq!(l.lab.stats().requests, 1);
}

#[tokio::test]
async fn a_closed_port_is_unreachable() {
    let port = {
        let s = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        s.local_addr().unwrap().port()
    };
    let mut c = RedfishConfig::new("127.0.0.1", port, "admin", Secret::from_str_value(PASSWORD));
    c.scheme = Scheme::Http;
    let r = go(c, Action::Status, &policy()).await;
    let e = &r.err().error;
    assert_eq!(e.kind, ErrorKind::Unreachable);
    assert!(e.message.contains("connection refused"), "{}", e.message);
}

#[tokio::test]
async fn sessions_are_created_used_and_deleted() {
    let l = lab_on().await;
    let mut c = l.discovering();
    c.session_auth = true;
    let r = go(c.clone(), Action::Reboot, &policy()).await;
    assert_eq!(r.result, Ok(Outcome::Rebooted));
    assert_eq!((r.stats.sessions_created, r.stats.sessions_deleted), (1, 1));
    let s = l.lab.stats();
    assert_eq!(
        (s.sessions_created, s.sessions_deleted, s.sessions_open),
        (1, 1, 0)
    );
    assert_eq!(s.basic_auth, 0, "no Basic header in session mode");
    assert!(s.token_auth >= 4);
    assert!(r.detail().contains("session token"));

    // Deleted after a failure too.
    let mut bad = c.clone();
    bad.plug = Some("nothing".into());
    let r = go(bad, Action::Off, &policy()).await;
    assert_eq!(r.err().error.kind, ErrorKind::Config);
    let s = l.lab.stats();
    assert_eq!(
        (s.sessions_created, s.sessions_deleted, s.sessions_open),
        (2, 2, 0)
    );

    // Wrong password: no session, PasswordInvalid.
    let mut wrong = c.clone();
    wrong.password = Secret::from_str_value("nope");
    let r = go(wrong, Action::Status, &policy()).await;
    assert_eq!(r.err().error.kind, ErrorKind::PasswordInvalid);

    // A service without SessionService says so.
    let l2 = start(
        true,
        Faults::default(),
        RedfishLabOptions {
            sessions: false,
            ..Default::default()
        },
    )
    .await;
    let mut c2 = l2.cfg();
    c2.session_auth = true;
    let r = go(c2, Action::Status, &policy()).await;
    let e = &r.err().error;
    assert_eq!(e.kind, ErrorKind::Unsupported);
    assert!(e.message.contains("no SessionService"), "{}", e.message);
}

#[tokio::test]
async fn certificates_are_verified_pinned_or_fingerprinted() {
    let l = lab_on().await;
    // Without --ca-cert, the self-signed lab certificate is not trusted.
    let mut c = l.cfg();
    c.tls = TlsTrust::Verify { ca_cert: None };
    let r = go(c, Action::Status, &policy()).await;
    let e = &r.err().error;
    assert_eq!(e.kind, ErrorKind::Protocol);
    assert!(
        e.message.contains("certificate is not trusted") && e.message.contains("--ca-cert"),
        "{}",
        e.message
    );
    assert_eq!(
        l.lab.stats().requests,
        0,
        "nothing was sent over an untrusted connection"
    );
    // With it (exact pin of a CA:TRUE self-signed certificate), it is.
    let r = go(l.cfg(), Action::Status, &policy()).await;
    assert!(r.result.is_ok());
    assert!(
        r.detail().contains("tls verified against"),
        "{}",
        r.detail()
    );
    // Fingerprints.
    let mut c = l.cfg();
    c.tls = TlsTrust::Fingerprint(l.lab.cert_fingerprint().unwrap());
    assert!(go(c.clone(), Action::Status, &policy())
        .await
        .result
        .is_ok());
    c.tls = TlsTrust::Fingerprint([7; 32]);
    let r = go(c.clone(), Action::Status, &policy()).await;
    let e = &r.err().error;
    assert!(
        e.message.contains("not the pinned SHA256:07:07"),
        "{}",
        e.message
    );
    c.tls = TlsTrust::Insecure;
    let r = go(c, Action::Status, &policy()).await;
    assert!(r.detail().contains("not verified"), "{}", r.detail());

    // Another lab's certificate does not open this one.
    let other = lab_on().await;
    let mut c = l.cfg();
    c.tls = TlsTrust::Verify {
        ca_cert: Some(other.pem.clone()),
    };
    assert_eq!(
        go(c, Action::Status, &policy()).await.err().error.kind,
        ErrorKind::Protocol
    );
}

#[tokio::test]
async fn a_private_ca_is_trusted_as_a_ca() {
    let l = start(
        true,
        Faults::default(),
        RedfishLabOptions {
            tls: Some(LabCert::Issued),
            ..Default::default()
        },
    )
    .await;
    let r = go(l.cfg(), Action::Off, &policy()).await;
    assert_eq!(
        r.result,
        Ok(Outcome::Reached {
            state: PowerState::Off
        })
    );
    // The name is checked on this path: "localhost" is in the certificate,
    // "127.0.0.2" is not.
    let l2 = LabRedfish::start(
        "127.0.0.2:0".parse().unwrap(),
        Bmc::new(true, Faults::default()),
        RedfishLabOptions {
            tls: Some(LabCert::Issued),
            password: PASSWORD.into(),
            cert_path: Some(l._dir.path().join("ca2.pem")),
            ..Default::default()
        },
    )
    .await;
    if let Ok(l2) = l2 {
        let mut c = RedfishConfig::new(
            "127.0.0.2",
            l2.addr.port(),
            "admin",
            Secret::from_str_value(PASSWORD),
        );
        c.tls = TlsTrust::Verify {
            ca_cert: Some(l._dir.path().join("ca2.pem")),
        };
        let r = go(c, Action::Status, &policy()).await;
        let e = &r.err().error;
        assert!(
            e.message.contains("does not name this host"),
            "{}",
            e.message
        );
    }
}

#[test]
fn webpki_refuses_a_ca_true_certificate_as_the_server_own() {
    // Why --ca-cert pins exactly: a BMC-style self-signed CA:TRUE certificate
    // given to webpki as a root still fails as an end-entity.
    use rustls::client::danger::ServerCertVerifier;
    use rustls::pki_types::{pem::PemObject, CertificateDer, ServerName, UnixTime};
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let l = rt.block_on(lab_on());
    let cert = CertificateDer::from_pem_slice(l.lab.cert_pem().unwrap().as_bytes()).unwrap();
    let mut roots = rustls::RootCertStore::empty();
    roots.add(cert.clone()).unwrap();
    let v = rustls::client::WebPkiServerVerifier::builder_with_provider(
        roots.into(),
        rustls::crypto::ring::default_provider().into(),
    )
    .build()
    .unwrap();
    let e = v
        .verify_server_cert(
            &cert,
            &[],
            &ServerName::try_from("127.0.0.1").unwrap(),
            &[],
            UnixTime::now(),
        )
        .unwrap_err();
    assert!(format!("{e:?}").contains("CaUsedAsEndEntity"), "{e:?}");
}

#[tokio::test]
async fn plain_http_works_and_says_so() {
    let l = start(
        true,
        Faults::default(),
        RedfishLabOptions {
            tls: None,
            ..Default::default()
        },
    )
    .await;
    let r = go(l.discovering(), Action::Off, &policy()).await;
    assert_eq!(
        r.result,
        Ok(Outcome::Reached {
            state: PowerState::Off
        })
    );
    assert!(r.detail().contains("plain http"), "{}", r.detail());
    assert!(l.lab.target().starts_with("redfish+http://127.0.0.1:"));
}

#[tokio::test]
async fn list_and_reset_plan() {
    let l = start(
        true,
        Faults::default(),
        RedfishLabOptions {
            extra_systems: 1,
            action_info: true,
            ..Default::default()
        },
    )
    .await;
    let mut d = RedfishDriver::new(l.cfg()).unwrap();
    let systems = d.list_systems(None).await.unwrap();
    assert_eq!(systems.len(), 2);
    assert_eq!(systems[0].id, "1");
    assert_eq!(systems[0].power, Ok(PowerState::On));
    d.close().await;
    let plan = d.reset_plan(None).await.unwrap();
    assert_eq!(
        plan.choices[0],
        (PowerCommand::Off, Ok("ForceOff".to_string()))
    );
    assert!(plan.offered.unwrap().contains(&"Nmi".to_string()));
    d.close().await;
}

#[tokio::test]
async fn identity_comes_with_the_system_read() {
    use fencekit::lab::bmc::LabIdentity;
    let l = lab_on().await;
    let mut d = RedfishDriver::new(l.cfg()).unwrap();
    d.connect(None).await.unwrap();
    let before = d.stats().requests;
    let id = d.identity(None).await.unwrap();
    let want = l.lab.bmc.identity();
    assert_eq!(id.primary_uuid(), Some(want.uuid.as_str()));
    assert_eq!(id.serial.as_deref(), Some(want.serial.as_str()));
    assert_eq!(d.stats().requests, before, "no extra GET");
    assert_eq!(
        d.status(None).await.unwrap(),
        PowerState::On,
        "the first status still uses the read connect made"
    );
    assert_eq!(d.stats().requests, before);
    d.close().await;
    // A swapped cable: the BMC answers with another machine's identity.
    l.lab.bmc.set_identity(LabIdentity::for_node(6));
    let mut d = RedfishDriver::new(l.cfg()).unwrap();
    let id = d.identity(None).await.unwrap();
    assert_eq!(
        id.primary_uuid(),
        Some(LabIdentity::for_node(6).uuid.as_str())
    );
    d.close().await;
}

#[tokio::test]
async fn an_expected_uuid_chooses_among_several_systems() {
    use fencekit::lab::bmc::LabIdentity;
    let main = LabIdentity::for_node(0);
    let second = LabIdentity::for_node(1);
    let start_with = |extra: Vec<LabIdentity>| {
        start(
            true,
            Faults::default(),
            RedfishLabOptions {
                extra_systems: extra.len() as u32,
                extra_identities: extra,
                ..Default::default()
            },
        )
    };
    let l = start_with(vec![second.clone(), LabIdentity::for_node(2)]).await;
    l.lab.bmc.set_identity(main.clone());
    let mut c = l.discovering();
    // Any spelling of the UUID.
    c.expect_uuid = Some(second.uuid.to_uppercase());
    let mut d = RedfishDriver::new(c.clone()).unwrap();
    d.connect(None).await.unwrap();
    assert_eq!(d.system_uri(), Some("/redfish/v1/Systems/1-2"));
    assert_eq!(
        d.identity(None).await.unwrap().primary_uuid(),
        Some(second.uuid.as_str())
    );
    d.close().await;
    c.expect_uuid = Some(main.uuid.clone());
    let r = go(c.clone(), Action::Off, &policy()).await;
    assert_eq!(
        r.result,
        Ok(Outcome::Reached {
            state: PowerState::Off
        })
    );
    assert!(!l.lab.bmc.is_on(), "the main system, chosen by its UUID");
    // Nobody reports it: refused, every candidate named with its UUID.
    l.lab.bmc.set_on(true);
    c.expect_uuid = Some("12345678-1234-1234-1234-123456789abc".into());
    let r = go(c, Action::Off, &policy()).await;
    let e = &r.err().error;
    // None of them is the pinned machine: a wrong machine, not a typo.
    assert_eq!(e.kind, ErrorKind::IdentityMismatch);
    for want in [
        "/redfish/v1/Systems/1 (uuid",
        "/redfish/v1/Systems/1-2 (uuid",
        "/redfish/v1/Systems/1-3 (uuid",
        &main.uuid,
    ] {
        assert!(e.message.contains(want), "{want}: {}", e.message);
    }
    // Two systems claim the UUID: refused, both named, nothing sent.
    let l2 = start_with(vec![main.clone()]).await;
    l2.lab.bmc.set_identity(main.clone());
    let mut c = l2.discovering();
    c.expect_uuid = Some(main.uuid.clone());
    let r = go(c, Action::Off, &policy()).await;
    let e = &r.err().error;
    assert_eq!(e.kind, ErrorKind::Config);
    assert!(
        e.message.starts_with("2 systems report uuid")
            && e.message.contains("/redfish/v1/Systems/1 (uuid")
            && e.message.contains("/redfish/v1/Systems/1-2 (uuid"),
        "{}",
        e.message
    );
    assert!(l2.lab.stats().resets.is_empty());
    assert!(l2.lab.bmc.is_on());
}

#[tokio::test]
async fn power_draw_is_read_from_the_chassis() {
    let l = lab_on().await;
    let mut d = RedfishDriver::new(l.cfg()).unwrap();
    let r = d.power_reading(None).await.unwrap().expect("a reading");
    assert_eq!(r.watts, fencekit::lab::bmc::WATTS_ON);
    assert_eq!(r.source, "/redfish/v1/Chassis/1/Power");
    d.close().await;
    l.lab.bmc.set_on(false);
    let mut d = RedfishDriver::new(l.cfg()).unwrap();
    let r = d.power_reading(None).await.unwrap().expect("a reading");
    assert_eq!(r.watts, fencekit::lab::bmc::WATTS_STANDBY);
    d.close().await;
    // A meter that lies reports a running machine's draw while off.
    l.lab.bmc.lock().faults.draw_lies = true;
    let mut d = RedfishDriver::new(l.cfg()).unwrap();
    let r = d.power_reading(None).await.unwrap().expect("a reading");
    assert_eq!(r.watts, fencekit::lab::bmc::WATTS_ON);
    d.close().await;
}
