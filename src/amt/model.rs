//! What Intel AMT's WS-Management service says and is asked (pure, no
//! I/O): the SOAP envelopes fencekit sends to `/wsman` (DMTF DSP0226
//! Get and Invoke, WS-Addressing 2004/08), and what their answers mean.
//!
//! * The state: a Get of `CIM_AssociatedPowerManagementService` carries
//!   the machine's `PowerState` (DMTF DSP1027 table 5, values as Intel's
//!   AMT SDK reports them): 2 on (S0); 3 and 4 (sleep light, sleep deep:
//!   memory kept) and 7 (hibernate: the memory image on disk) count as
//!   **on**, since the machine resumes where it stopped and is not fenced;
//!   6 (off hard) and 8 (off soft, AMT's S5) are off; anything else (1
//!   other, 5, 9, 10 … transitions and requests, or no value) is
//!   unreadable, never off. Upstream reads 2 and 8 and fails on the rest.
//! * The change: `RequestPowerStateChange` of `CIM_PowerManagementService`
//!   (selector `Name=Intel(r) AMT Power Management Service`) with the
//!   requested state and a `ManagedElement` reference to
//!   `CIM_ComputerSystem` `Name=ManagedSystem`; the values upstream sends:
//!   2 power on, 8 power off (Intel: "power down, hard"), 10 master bus
//!   reset (its reboot `--method=cycle`). `ReturnValue` 0 means accepted
//!   (never done: the engine reads the state back), 4096 a job started
//!   (the same), 2 and 4097 a transition the machine's state does not
//!   allow (the engine reads whether it is already there), 1 not
//!   supported, anything else a failure.
//! * The boot device (`--boot-option`): `ChangeBootOrder` of
//!   `CIM_BootConfigSetting` `InstanceID=Intel(r) AMT: Boot Configuration
//!   0` with a `Source` reference to the `CIM_BootSourceSetting` upstream
//!   names for each option, `ReturnValue` 0 accepted.
//! * A SOAP fault (`s:Fault`: its subcode and reason) is a refusal, named.
//!
//! Any bytes may come back: parsing goes through the shared bounded parser
//! ([`crate::parse::xml_bytes`]) and every text taken from an answer is
//! bounded and printable.

use crate::engine::power::PowerState;

/// The largest answer read.
pub const MAX_BODY: usize = 256 << 10;

/// SOAP 1.2 envelope.
pub const NS_SOAP: &str = "http://www.w3.org/2003/05/soap-envelope";
/// WS-Addressing (2004/08), as WS-Management 1.0 uses it.
pub const NS_WSA: &str = "http://schemas.xmlsoap.org/ws/2004/08/addressing";
/// WS-Management (DSP0226).
pub const NS_WSMAN: &str = "http://schemas.dmtf.org/wbem/wsman/1/wsman.xsd";
/// WS-Transfer Get (DSP0226 section 7.3).
pub const ACTION_GET: &str = "http://schemas.xmlsoap.org/ws/2004/09/transfer/Get";
/// The anonymous reply address.
pub const ANONYMOUS: &str = "http://schemas.xmlsoap.org/ws/2004/08/addressing/role/anonymous";
/// The CIM classes' resource URIs start so.
pub const CIM: &str = "http://schemas.dmtf.org/wbem/wscim/1/cim-schema/2/";

/// The class whose instance carries the machine's power state.
pub const ASSOCIATED_PMS: &str = "CIM_AssociatedPowerManagementService";
/// The class whose method changes it.
pub const PMS: &str = "CIM_PowerManagementService";
/// The managed system the change names.
pub const COMPUTER_SYSTEM: &str = "CIM_ComputerSystem";
/// The boot configuration class.
pub const BOOT_CONFIG: &str = "CIM_BootConfigSetting";
/// The boot sources it orders.
pub const BOOT_SOURCE: &str = "CIM_BootSourceSetting";
/// The power management service's `Name` selector on AMT.
pub const PMS_NAME: &str = "Intel(r) AMT Power Management Service";
/// The boot configuration's `InstanceID` on AMT.
pub const BOOT_CONFIG_ID: &str = "Intel(r) AMT: Boot Configuration 0";

/// `PowerState` values (DSP1027 table 5) fencekit sends.
pub mod state {
    /// On (requested and reported).
    pub const ON: u16 = 2;
    /// Off - Hard (reported).
    pub const OFF_HARD: u16 = 6;
    /// Off - Soft, what AMT reports in S5 and carries out as "power
    /// down" when asked (what upstream sends for off).
    pub const OFF: u16 = 8;
    /// Master Bus Reset (upstream's reboot with `--method=cycle`).
    pub const RESET: u16 = 10;
}

/// The resource URI of CIM class `class`.
pub fn resource(class: &str) -> String {
    format!("{CIM}{class}")
}

/// `s` escaped for XML text or an attribute in double quotes.
pub fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            c if (c as u32) < 0x20 && c != '\n' && c != '\t' => {
                out.push_str(&format!("&#{};", c as u32))
            }
            c => out.push(c),
        }
    }
    out
}

/// A fresh `uuid:` message ID (random, version 4 form).
pub fn message_id() -> String {
    let mut b: [u8; 16] = rand::random();
    b[6] = (b[6] & 0x0f) | 0x40;
    b[8] = (b[8] & 0x3f) | 0x80;
    let h: String = b.iter().map(|x| format!("{x:02x}")).collect();
    format!(
        "uuid:{}-{}-{}-{}-{}",
        &h[0..8],
        &h[8..12],
        &h[12..16],
        &h[16..20],
        &h[20..32]
    )
}

fn envelope(to: &str, action: &str, class: &str, selectors: &[(&str, &str)], body: &str) -> String {
    let mut sel = String::new();
    if !selectors.is_empty() {
        sel.push_str("<w:SelectorSet>");
        for (n, v) in selectors {
            sel.push_str(&format!(
                r#"<w:Selector Name="{}">{}</w:Selector>"#,
                escape(n),
                escape(v)
            ));
        }
        sel.push_str("</w:SelectorSet>");
    }
    format!(
        concat!(
            r#"<?xml version="1.0" encoding="UTF-8"?>"#,
            r#"<s:Envelope xmlns:s="{soap}" xmlns:a="{wsa}" xmlns:w="{wsman}">"#,
            "<s:Header>",
            r#"<a:To>{to}</a:To>"#,
            r#"<w:ResourceURI s:mustUnderstand="true">{uri}</w:ResourceURI>"#,
            r#"<a:ReplyTo><a:Address s:mustUnderstand="true">{anon}</a:Address></a:ReplyTo>"#,
            r#"<a:Action s:mustUnderstand="true">{action}</a:Action>"#,
            r#"<w:MaxEnvelopeSize s:mustUnderstand="true">{max}</w:MaxEnvelopeSize>"#,
            r#"<a:MessageID>{id}</a:MessageID>"#,
            "{sel}",
            "<w:OperationTimeout>PT60S</w:OperationTimeout>",
            "</s:Header>",
            "<s:Body>{body}</s:Body>",
            "</s:Envelope>"
        ),
        soap = NS_SOAP,
        wsa = NS_WSA,
        wsman = NS_WSMAN,
        to = escape(to),
        uri = resource(class),
        anon = ANONYMOUS,
        action = escape(action),
        max = MAX_BODY,
        id = message_id(),
        sel = sel,
        body = body,
    )
}

/// The Get of the power state, to `to` (the `/wsman` URL).
pub fn get_power_state(to: &str) -> String {
    envelope(to, ACTION_GET, ASSOCIATED_PMS, &[], "")
}

fn reference(class: &str, selector: &[(&str, &str)]) -> String {
    let mut s = format!(
        "<a:Address>{ANONYMOUS}</a:Address><a:ReferenceParameters><w:ResourceURI>{}</w:ResourceURI><w:SelectorSet>",
        resource(class)
    );
    for (n, v) in selector {
        s.push_str(&format!(
            r#"<w:Selector Name="{}">{}</w:Selector>"#,
            escape(n),
            escape(v)
        ));
    }
    s.push_str("</w:SelectorSet></a:ReferenceParameters>");
    s
}

/// The Invoke of `RequestPowerStateChange` to `state` ([`state`]).
pub fn request_power_state_change(to: &str, state: u16) -> String {
    let ns = resource(PMS);
    let body = format!(
        r#"<p:RequestPowerStateChange_INPUT xmlns:p="{ns}"><p:PowerState>{state}</p:PowerState><p:ManagedElement>{}</p:ManagedElement></p:RequestPowerStateChange_INPUT>"#,
        reference(COMPUTER_SYSTEM, &[("Name", "ManagedSystem")])
    );
    envelope(
        to,
        &format!("{ns}/RequestPowerStateChange"),
        PMS,
        &[("Name", PMS_NAME)],
        &body,
    )
}

/// A boot device upstream's `--boot-option` names.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BootOption {
    /// `pxe`: the network.
    Pxe,
    /// `hd`: the hard drive.
    Hd,
    /// `hdsafe`: the hard drive, in safe mode.
    HdSafe,
    /// `cd`: the CD/DVD drive.
    Cd,
    /// `diag`: the diagnostic partition.
    Diag,
}

impl BootOption {
    /// Every option, as upstream's metadata lists them.
    pub const ALL: [BootOption; 5] = [
        BootOption::Pxe,
        BootOption::Hd,
        BootOption::HdSafe,
        BootOption::Cd,
        BootOption::Diag,
    ];

    /// Upstream's word for it.
    pub fn as_str(self) -> &'static str {
        match self {
            BootOption::Pxe => "pxe",
            BootOption::Hd => "hd",
            BootOption::HdSafe => "hdsafe",
            BootOption::Cd => "cd",
            BootOption::Diag => "diag",
        }
    }

    /// From upstream's word.
    pub fn parse(s: &str) -> Option<BootOption> {
        BootOption::ALL
            .into_iter()
            .find(|o| o.as_str().eq_ignore_ascii_case(s))
    }

    /// The `CIM_BootSourceSetting` `InstanceID` AMT gives the device.
    pub fn source(self) -> &'static str {
        match self {
            BootOption::Pxe => "Intel(r) AMT: Force PXE Boot",
            BootOption::Hd | BootOption::HdSafe => "Intel(r) AMT: Force Hard-drive Boot",
            BootOption::Cd => "Intel(r) AMT: Force CD/DVD Boot",
            BootOption::Diag => "Intel(r) AMT: Force Diagnostic Boot",
        }
    }
}

/// The Invoke of `ChangeBootOrder` putting `option` first.
pub fn change_boot_order(to: &str, option: BootOption) -> String {
    let ns = resource(BOOT_CONFIG);
    let mut sel = vec![("InstanceID", option.source())];
    if option == BootOption::HdSafe {
        sel.push(("UseSafeMode", "True"));
    }
    let body = format!(
        r#"<p:ChangeBootOrder_INPUT xmlns:p="{ns}"><p:Source>{}</p:Source></p:ChangeBootOrder_INPUT>"#,
        reference(BOOT_SOURCE, &sel)
    );
    envelope(
        to,
        &format!("{ns}/ChangeBootOrder"),
        BOOT_CONFIG,
        &[("InstanceID", BOOT_CONFIG_ID)],
        &body,
    )
}

/// A SOAP fault the service answered.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Fault {
    /// The most specific code given (`wsman:AccessDenied`,
    /// `wsa:DestinationUnreachable`), printable.
    pub code: String,
    /// Its reason text, printable.
    pub reason: String,
}

impl std::fmt::Display for Fault {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.reason.is_empty() {
            true => write!(f, "SOAP fault {}", self.code),
            false => write!(f, "SOAP fault {}: {}", self.code, self.reason),
        }
    }
}

impl Fault {
    /// Whether it says the user may not do this.
    pub fn access_denied(&self) -> bool {
        self.code.ends_with("AccessDenied")
    }
}

/// What an answer's body carries.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Answer {
    /// A fault.
    Fault(Fault),
    /// The value of the first element named `name` in the namespace of
    /// the class asked about (`None`: not there).
    Value(Option<String>),
}

/// One line of text from an answer.
pub fn printable(s: &str, max: usize) -> String {
    crate::http::printable(s, max)
}

/// Reads `body` for a fault, or the text of element `name` in the
/// namespace of CIM class `class`. `Err`: not a SOAP answer.
pub fn read(body: &[u8], class: &str, name: &str) -> Result<Answer, String> {
    let doc = crate::parse::xml_bytes(body, &crate::parse::Limits::ANSWER.with_bytes(MAX_BODY))
        .map_err(|e| e.to_string())?;
    let root = doc.root_element();
    if root.tag_name().name() != "Envelope" || root.tag_name().namespace() != Some(NS_SOAP) {
        return Err("the answer is not a SOAP 1.2 envelope".into());
    }
    let body = root
        .children()
        .find(|n| n.is_element() && n.tag_name().name() == "Body")
        .ok_or("the SOAP answer has no Body")?;
    if let Some(f) = body
        .descendants()
        .find(|n| n.tag_name().name() == "Fault" && n.tag_name().namespace() == Some(NS_SOAP))
    {
        let values: Vec<String> = f
            .descendants()
            .filter(|n| n.tag_name().name() == "Value")
            .filter_map(|n| n.text())
            .map(|t| printable(t.trim(), 80))
            .collect();
        let reason = f
            .descendants()
            .find(|n| n.tag_name().name() == "Text")
            .and_then(|n| n.text())
            .map(|t| printable(t.trim(), 200))
            .unwrap_or_default();
        return Ok(Answer::Fault(Fault {
            code: values.last().cloned().unwrap_or_else(|| "(no code)".into()),
            reason,
        }));
    }
    let ns = resource(class);
    Ok(Answer::Value(
        body.descendants()
            .find(|n| n.tag_name().name() == name && n.tag_name().namespace() == Some(ns.as_str()))
            .map(|n| printable(n.text().unwrap_or_default().trim(), 40)),
    ))
}

/// What a `PowerState` value means for fencing (the module's rule).
pub fn judge(value: &str) -> Result<PowerState, String> {
    match value.parse::<u16>() {
        Ok(state::ON) | Ok(3) | Ok(4) | Ok(7) => Ok(PowerState::On),
        Ok(state::OFF_HARD) | Ok(state::OFF) => Ok(PowerState::Off),
        Ok(n) => Err(format!(
            "AMT reports PowerState {n} ({}), neither on nor off",
            state_name(n)
        )),
        Err(_) => Err(format!(
            "AMT reports PowerState '{}', not a number",
            printable(value, 40)
        )),
    }
}

/// DSP1027's name of a `PowerState` value.
pub fn state_name(n: u16) -> &'static str {
    match n {
        1 => "other",
        2 => "on",
        3 => "sleep, light",
        4 => "sleep, deep",
        5 => "power cycle, off soft",
        6 => "off, hard",
        7 => "hibernate, off soft",
        8 => "off, soft",
        9 => "power cycle, off hard",
        10 => "master bus reset",
        11 => "diagnostic interrupt",
        12 => "off, soft graceful",
        13 => "off, hard graceful",
        14 => "master bus reset graceful",
        15 => "power cycle, off soft graceful",
        16 => "power cycle, off hard graceful",
        _ => "unknown",
    }
}

/// What a method's `ReturnValue` means.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Returned {
    /// 0 (completed) or 4096 (job started): accepted, not yet observed.
    Accepted,
    /// 2 (AMT: not possible in the present state) or 4097 (invalid state
    /// transition).
    NotInPresentState(u32),
    /// 1: not supported.
    NotSupported,
    /// Anything else.
    Failed(String),
}

/// Reads a method's `ReturnValue` text.
pub fn returned(value: &str) -> Returned {
    match value.parse::<u32>() {
        Ok(0) | Ok(4096) => Returned::Accepted,
        Ok(1) => Returned::NotSupported,
        Ok(n @ (2 | 4097)) => Returned::NotInPresentState(n),
        Ok(n) => Returned::Failed(format!("ReturnValue {n} ({})", return_name(n))),
        Err(_) => Returned::Failed(format!("ReturnValue '{}'", printable(value, 40))),
    }
}

/// `CIM_PowerManagementService.RequestPowerStateChange`'s names of its
/// return values (DSP1027, the CIM schema's ValueMap).
fn return_name(n: u32) -> &'static str {
    match n {
        0 => "completed with no error",
        1 => "not supported",
        2 => "unknown or unspecified error",
        3 => "cannot complete within the timeout",
        4 => "failed",
        5 => "invalid parameter",
        6 => "in use",
        4096 => "job started",
        4097 => "invalid state transition",
        4098 => "timeout parameter not supported",
        4099 => "busy",
        _ => "unknown",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn answer(class: &str, inner: &str) -> Vec<u8> {
        format!(
            r#"<?xml version="1.0"?><a:Envelope xmlns:a="{NS_SOAP}"><a:Header/><a:Body><g:{class} xmlns:g="{}">{inner}</g:{class}></a:Body></a:Envelope>"#,
            resource(class)
        )
        .into_bytes()
    }

    #[test]
    fn envelopes_name_the_class_the_selector_and_the_state() {
        let to = "http://amt.example:16992/wsman";
        for x in [
            get_power_state(to),
            request_power_state_change(to, state::OFF),
            change_boot_order(to, BootOption::HdSafe),
        ] {
            let doc = roxmltree::Document::parse(&x).unwrap();
            assert_eq!(doc.root_element().tag_name().namespace(), Some(NS_SOAP));
        }
        let g = get_power_state(to);
        assert!(g.contains(&resource(ASSOCIATED_PMS)) && g.contains(ACTION_GET));
        let r = request_power_state_change(to, state::OFF);
        assert!(r.contains("<p:PowerState>8</p:PowerState>"), "{r}");
        assert!(r.contains(r#"<w:Selector Name="Name">ManagedSystem</w:Selector>"#));
        assert!(r.contains(
            r#"<w:Selector Name="Name">Intel(r) AMT Power Management Service</w:Selector>"#
        ));
        assert!(r.contains("CIM_PowerManagementService/RequestPowerStateChange</a:Action>"));
        let b = change_boot_order(to, BootOption::HdSafe);
        assert!(b.contains("Force Hard-drive Boot") && b.contains("UseSafeMode"));
        assert_ne!(message_id(), message_id());
        assert_eq!(BootOption::parse("cd"), Some(BootOption::Cd));
        assert_eq!(BootOption::parse("usb"), None);
        assert_eq!(BootOption::parse("HdSafe"), Some(BootOption::HdSafe));
    }

    #[test]
    fn states_faults_and_return_values() {
        let a = answer(ASSOCIATED_PMS, "<g:PowerState>8</g:PowerState>");
        assert_eq!(
            read(&a, ASSOCIATED_PMS, "PowerState").unwrap(),
            Answer::Value(Some("8".into()))
        );
        // The same element name in another namespace is not evidence.
        let other = answer(PMS, "<g:PowerState>8</g:PowerState>");
        assert_eq!(
            read(&other, ASSOCIATED_PMS, "PowerState").unwrap(),
            Answer::Value(None)
        );
        for (v, want) in [
            ("2", Ok(PowerState::On)),
            ("4", Ok(PowerState::On)),
            ("7", Ok(PowerState::On)),
            ("6", Ok(PowerState::Off)),
            ("8", Ok(PowerState::Off)),
        ] {
            assert_eq!(judge(v), want, "{v}");
        }
        for v in ["1", "5", "10", "", "x", "99999999"] {
            assert!(judge(v).is_err(), "{v}");
        }
        let f = format!(
            r#"<s:Envelope xmlns:s="{NS_SOAP}"><s:Body><s:Fault><s:Code><s:Value>s:Sender</s:Value><s:Subcode><s:Value>w:AccessDenied</s:Value></s:Subcode></s:Code><s:Reason><s:Text xml:lang="en">denied</s:Text></s:Reason></s:Fault></s:Body></s:Envelope>"#
        );
        let Answer::Fault(f) = read(f.as_bytes(), PMS, "ReturnValue").unwrap() else {
            panic!("a fault")
        };
        assert!(f.access_denied());
        assert_eq!(f.to_string(), "SOAP fault w:AccessDenied: denied");
        assert_eq!(returned("0"), Returned::Accepted);
        assert_eq!(returned("4096"), Returned::Accepted);
        assert_eq!(returned("2"), Returned::NotInPresentState(2));
        assert_eq!(returned("1"), Returned::NotSupported);
        assert!(matches!(returned("4099"), Returned::Failed(m) if m.contains("busy")));
        assert!(matches!(returned("-1"), Returned::Failed(_)));
        for junk in [&b""[..], b"<x/>", b"<", b"\xff\xfe", b"<!DOCTYPE x><x/>"] {
            assert!(read(junk, PMS, "ReturnValue").is_err());
        }
    }
}
