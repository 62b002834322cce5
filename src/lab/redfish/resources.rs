//! The resources the lab serves: the service root, Systems and each
//! ComputerSystem (its visible power state, identity and reset action, and
//! the fault knobs that change its body), Chassis and their `Power`
//! meters. Routing and authentication are [`super::service`]'s; resets and
//! tasks are [`super::actions`]'.

use super::http::{not_found, respond, Answer};
use super::options::SystemBody;
use super::state::{reset_types, Shared};
use super::vendor::Vendor;
use crate::lab::bmc::Bmc;
use http_body_util::Full;
use hyper::body::Bytes;
use hyper::header::{HeaderValue, CONTENT_TYPE};
use hyper::Response;
use serde_json::{json, Value};

pub(super) fn is_system(shared: &Shared, id: &str) -> bool {
    id == shared.opts.system_id || shared.decoys.iter().any(|(d, _)| d == id)
}

pub(super) fn service_root(shared: &Shared) -> Value {
    let mut root = json!({
        "@odata.id": "/redfish/v1/",
        "@odata.type": "#ServiceRoot.v1_5_0.ServiceRoot",
        "Id": "RootService",
        "Name": "fencekit lab Redfish service",
        "RedfishVersion": "1.6.0",
        "UUID": "00000000-0000-4000-8000-00000000fe00",
        "Systems": {"@odata.id": "/redfish/v1/Systems"},
        "Chassis": {"@odata.id": "/redfish/v1/Chassis"},
    });
    if shared.opts.sessions {
        root["SessionService"] = json!({"@odata.id": "/redfish/v1/SessionService"});
        root["Links"] = json!({"Sessions": {"@odata.id": "/redfish/v1/SessionService/Sessions"}});
    }
    root
}

pub(super) fn systems(shared: &Shared) -> Value {
    let mut members =
        vec![json!({"@odata.id": format!("/redfish/v1/Systems/{}", shared.opts.system_id)})];
    members.extend(
        shared
            .decoys
            .iter()
            .map(|(id, _)| json!({"@odata.id": format!("/redfish/v1/Systems/{id}")})),
    );
    json!({
        "@odata.id": "/redfish/v1/Systems",
        "@odata.type": "#ComputerSystemCollection.ComputerSystemCollection",
        "Name": "Computer System Collection",
        "Members@odata.count": members.len(),
        "Members": members,
    })
}

/// The visible PowerState: a change under way shows as PoweringOn /
/// PoweringOff where the family shows transitions, as the old state where
/// it does not (vendors.md "GET during a transition").
pub(super) fn power_word(shared: &Shared, bmc: &Bmc, main: bool) -> &'static str {
    let (on, moving) = {
        let mut c = bmc.lock();
        c.counters.status_reads += 1;
        (c.is_on(), c.transition())
    };
    if main && shared.opts.vendor.shows_transitions() {
        if let Some(target) = moving {
            return if target { "PoweringOn" } else { "PoweringOff" };
        }
    }
    if on {
        "On"
    } else {
        "Off"
    }
}

pub(super) fn chassis_id(system_id: &str) -> String {
    system_id.to_string()
}

pub(super) fn system(shared: &Shared, id: &str, path: &str) -> Answer {
    let vendor = shared.opts.vendor;
    let (bmc, name, main) = if id == shared.opts.system_id {
        (&shared.bmc, shared.opts.system_name.clone(), true)
    } else if let Some((_, b)) = shared.decoys.iter().find(|(d, _)| d == id) {
        (b, format!("decoy {id}"), false)
    } else {
        return not_found(path);
    };
    let power = power_word(shared, bmc, main);
    let identity = bmc.identity();
    let reset_target = format!("{path}/Actions/ComputerSystem.Reset");
    let action = if shared.opts.action_info {
        json!({"target": reset_target, "@Redfish.ActionInfo": format!("{path}/ResetActionInfo")})
    } else {
        json!({"target": reset_target, "ResetType@Redfish.AllowableValues": reset_types(shared)})
    };
    let mut body = json!({
        "@odata.id": path,
        "@odata.type": "#ComputerSystem.v1_13_0.ComputerSystem",
        "Id": id,
        "Name": name,
        "UUID": identity.uuid,
        "SerialNumber": identity.serial,
        "Manufacturer": vendor.manufacturer(),
        "SystemType": "Physical",
        "PowerState": power,
        "Status": {"State": "Enabled", "Health": "OK"},
        "Links": {"Chassis": [{"@odata.id": format!("/redfish/v1/Chassis/{}", chassis_id(id))}]},
        "Actions": {"#ComputerSystem.Reset": action},
    });
    if let Some(key) = vendor.oem() {
        body["Oem"] = json!({ key: {} });
    }
    if bmc.lock().faults.no_identity {
        // Firmware that publishes neither (both are optional in the schema).
        if let Some(o) = body.as_object_mut() {
            o.remove("UUID");
            o.remove("SerialNumber");
        }
    }
    if !main {
        if matches!(vendor, Vendor::Ami | Vendor::AmiTask) {
            // The DGX capture's HGX_Baseboard_0 has no reset action.
            if let Some(o) = body.as_object_mut() {
                o.remove("Actions");
            }
            body["Oem"] = json!({"Nvidia": {}});
        }
        return respond(200, &body);
    }
    let (shape, flip) = {
        let mut i = shared.inner();
        i.stats.system_reads += 1;
        let flip = i.faults.flip_after_read && !i.flipped;
        if flip {
            i.flipped = true;
        }
        (i.faults.system_body.clone(), flip)
    };
    if flip {
        // Another actor, right after this read: the power changes at once.
        let now = shared.bmc.is_on();
        shared.bmc.set_on(!now);
    }
    match shape {
        SystemBody::Normal => respond(200, &body),
        SystemBody::NotJson => {
            let mut r = Response::new(Full::new(Bytes::from_static(
                b"<html><body>Service temporarily unavailable</body></html>",
            )));
            r.headers_mut()
                .insert(CONTENT_TYPE, HeaderValue::from_static("text/html"));
            r
        }
        SystemBody::Huge(n) => {
            body["Oem"] = json!({"Padding": "x".repeat(n)});
            respond(200, &body)
        }
        SystemBody::PowerState(p) => {
            match p {
                Some(s) => body["PowerState"] = json!(s),
                None => {
                    if let Some(o) = body.as_object_mut() {
                        o.remove("PowerState");
                    }
                }
            }
            respond(200, &body)
        }
    }
}

/// The bmc behind a system id (the main one or a decoy).
pub(super) fn bmc_of<'a>(shared: &'a Shared, id: &str) -> Option<&'a Bmc> {
    if id == chassis_id(&shared.opts.system_id) {
        Some(&shared.bmc)
    } else {
        shared
            .decoys
            .iter()
            .find(|(d, _)| chassis_id(d) == id)
            .map(|(_, b)| b)
    }
}

pub(super) fn chassis_collection(shared: &Shared) -> Value {
    let mut ids = vec![chassis_id(&shared.opts.system_id)];
    ids.extend(shared.decoys.iter().map(|(d, _)| chassis_id(d)));
    let members: Vec<Value> = ids
        .iter()
        .map(|i| json!({"@odata.id": format!("/redfish/v1/Chassis/{i}")}))
        .collect();
    json!({
        "@odata.id": "/redfish/v1/Chassis",
        "@odata.type": "#ChassisCollection.ChassisCollection",
        "Name": "Chassis Collection",
        "Members@odata.count": members.len(),
        "Members": members,
    })
}

pub(super) fn chassis(shared: &Shared, id: &str, path: &str) -> Answer {
    let Some(bmc) = bmc_of(shared, id) else {
        return not_found(path);
    };
    let identity = bmc.identity();
    let mut doc = json!({
        "@odata.id": path,
        "@odata.type": "#Chassis.v1_14_0.Chassis",
        "Id": id,
        "Name": format!("chassis {id}"),
        "ChassisType": "RackMount",
        "SerialNumber": identity.serial,
        "PowerState": if bmc.truly_on() { "On" } else { "Off" },
        "Links": {"ComputerSystems": [{"@odata.id": format!("/redfish/v1/Systems/{id}")}]},
    });
    // A chassis without a power meter (`no-meter`) links no Power resource.
    if bmc.lock().meter().is_some() {
        doc["Power"] = json!({"@odata.id": format!("{path}/Power")});
    }
    respond(200, &doc)
}

/// `Power`: the meter's reading (the real draw, unless it lies: `draw-lies`).
pub(super) fn chassis_power(shared: &Shared, id: &str, path: &str) -> Answer {
    let Some(bmc) = bmc_of(shared, id) else {
        return not_found(path);
    };
    let Some(watts) = bmc.lock().meter() else {
        return not_found(path);
    };
    respond(
        200,
        &json!({
            "@odata.id": path,
            "@odata.type": "#Power.v1_7_0.Power",
            "Id": "Power",
            "Name": "Power",
            "PowerControl": [{
                "@odata.id": format!("{path}#/PowerControl/0"),
                "MemberId": "0",
                "Name": "System Power Control",
                "PowerConsumedWatts": watts,
            }],
        }),
    )
}
