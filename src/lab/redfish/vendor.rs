//! The BMC families the lab answers like (`shared/reference/vendors.md`):
//! [`Vendor`], what each shows (transitions during a power change, its
//! `Oem` key, its manufacturer) and each family's answers to a reset
//! ([`answers`]: success bodies, no-op refusals, an unpublished reset
//! type). Which system paths and reset types a family publishes is its
//! profile, [`RedfishLabOptions::vendor`](super::RedfishLabOptions::vendor).

/// Which BMC family the service answers like (`shared/reference/vendors.md`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Vendor {
    /// fencekit's own: the fault knobs decide (204 on success).
    #[default]
    Generic,
    /// Dell iDRAC 8/9: 204; 409 PSU501/PSU502 for no-ops; shows transitions.
    Idrac,
    /// HPE iLO 5/6: 200 with an `error`-shaped Success body; 400
    /// InvalidOperationForSystemState (MessageArgs only) for no-ops and
    /// during a transition; shows transitions.
    Ilo,
    /// Lenovo XCC: 204, accepts no-ops, keeps the old state during a transition.
    Xcc,
    /// Supermicro X12/X13: 200 `{"Success": …}`, accepts no-ops, keeps the old state.
    Smc,
    /// OpenBMC bmcweb: 200 + Base Success, accepts no-ops, shows transitions.
    Bmcweb,
    /// OpenBMC builds that answer 204 (BlueField).
    Bmcweb204,
    /// AMI MegaRAC (NVIDIA DGX): 204, two systems, keeps the old state.
    Ami,
    /// AMI MegaRAC with asynchronous operations: 202 + a Task that runs
    /// until the transition ends.
    AmiTask,
}

impl Vendor {
    /// Every profile, in the order `--vendor` lists them.
    pub const ALL: [Vendor; 9] = [
        Vendor::Generic,
        Vendor::Idrac,
        Vendor::Ilo,
        Vendor::Xcc,
        Vendor::Smc,
        Vendor::Bmcweb,
        Vendor::Bmcweb204,
        Vendor::Ami,
        Vendor::AmiTask,
    ];

    /// The profile's name on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Vendor::Generic => "generic",
            Vendor::Idrac => "idrac",
            Vendor::Ilo => "ilo",
            Vendor::Xcc => "xcc",
            Vendor::Smc => "smc",
            Vendor::Bmcweb => "bmcweb",
            Vendor::Bmcweb204 => "bmcweb204",
            Vendor::Ami => "ami",
            Vendor::AmiTask => "ami-task",
        }
    }

    /// Reads a profile name (`supermicro` and `openbmc` are accepted for
    /// `smc` and `bmcweb`).
    pub fn parse(name: &str) -> Option<Vendor> {
        match name.to_ascii_lowercase().as_str() {
            "supermicro" => Some(Vendor::Smc),
            "openbmc" => Some(Vendor::Bmcweb),
            n => Vendor::ALL.into_iter().find(|v| v.name() == n),
        }
    }

    /// A read during a transition shows PoweringOn/PoweringOff (the others
    /// keep reporting the old state).
    pub fn shows_transitions(self) -> bool {
        !matches!(
            self,
            Vendor::Xcc | Vendor::Smc | Vendor::Ami | Vendor::AmiTask
        )
    }

    /// The `Oem` key of the family's ComputerSystem (how clients tell them apart).
    pub(super) fn oem(self) -> Option<&'static str> {
        match self {
            Vendor::Idrac => Some("Dell"),
            Vendor::Ilo => Some("Hpe"),
            Vendor::Xcc => Some("Lenovo"),
            Vendor::Smc => Some("Supermicro"),
            Vendor::Ami | Vendor::AmiTask => Some("Ami"),
            _ => None,
        }
    }

    pub(super) fn manufacturer(self) -> &'static str {
        match self {
            Vendor::Idrac => "Dell Inc.",
            Vendor::Ilo => "HPE",
            Vendor::Xcc => "Lenovo",
            Vendor::Smc => "Supermicro",
            Vendor::Ami | Vendor::AmiTask => "NVIDIA",
            _ => "fencekit lab",
        }
    }
}

/// Each family's answers to a reset (vendors.md).
pub(super) mod answers {
    use super::super::http::{empty, error, respond, Answer};
    use super::Vendor;
    use serde_json::json;

    /// The success answer ("success answer" column).
    pub fn success(v: Vendor) -> Answer {
        match v {
            // Captured iLO 5 transcript: 200 with an `error`-shaped Success.
            Vendor::Ilo => respond(
                200,
                &json!({"error": {"code": "iLO.0.10.ExtendedInfo",
                    "message": "See @Message.ExtendedInfo for more information.",
                    "@Message.ExtendedInfo": [{"MessageId": "Base.1.4.Success"}]}}),
            ),
            Vendor::Smc => respond(
                200,
                &json!({"Success": {"code": "Base.v1_4_0.Success",
                    "Message": "Successfully Completed Request."}}),
            ),
            Vendor::Bmcweb => respond(
                200,
                &json!({"@Message.ExtendedInfo": [{
                    "@odata.type": "#Message.v1_1_1.Message",
                    "Message": "The request completed successfully.",
                    "MessageArgs": [],
                    "MessageId": "Base.1.16.0.Success",
                    "MessageSeverity": "OK",
                    "Resolution": "None"}]}),
            ),
            _ => empty(204),
        }
    }

    /// iLO's refusal: the reason only in MessageArgs, no Message.
    pub fn ilo(reason: &str) -> Answer {
        respond(
            400,
            &json!({"error": {"code": "iLO.0.10.ExtendedInfo",
                "message": "See @Message.ExtendedInfo for more information.",
                "@Message.ExtendedInfo": [{"MessageArgs": [reason],
                    "MessageId": "iLO.2.16.InvalidOperationForSystemState"}]}}),
        )
    }

    /// The answer to a request that would change nothing, or `None` where
    /// the family accepts it.
    pub fn already(v: Vendor, on: bool) -> Option<Answer> {
        match v {
            Vendor::Idrac => {
                let (id, text) = if on {
                    ("IDRAC.2.8.PSU501", "Server is already powered ON.")
                } else {
                    ("IDRAC.2.8.PSU502", "Server is already powered OFF.")
                };
                Some(respond(
                    409,
                    &json!({"error": {"code": "Base.1.12.GeneralError",
                        "message": "A general error has occurred. See ExtendedInfo for more information",
                        "@Message.ExtendedInfo": [{"Message": text, "MessageArgs": [],
                            "MessageId": id, "Resolution": "No response action is required.",
                            "Severity": "Informational"}]}}),
                ))
            }
            Vendor::Ilo => Some(ilo(if on { "Power is on" } else { "Power is off" })),
            _ => None,
        }
    }

    /// A ResetType the system does not publish.
    pub fn not_in_list(v: Vendor, rt: &str) -> Answer {
        match v {
            Vendor::Bmcweb | Vendor::Bmcweb204 => error(
                400,
                "Base.1.16.0.ActionParameterNotSupported",
                &format!("The parameter {rt} for the action ComputerSystem.Reset is not supported on the target resource."),
            ),
            _ => error(
                400,
                "Base.1.8.ActionParameterNotSupported",
                &format!("The parameter {rt} for the action ComputerSystem.Reset is not supported on the target resource."),
            ),
        }
    }
}
