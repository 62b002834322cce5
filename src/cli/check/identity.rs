//! `check --record-identity`: the `[identity.NODE]` tables of the machines
//! the levels reached, to append to the inventory.

use crate::fleet::plan::NodePlan;
use crate::fleet::verify::CheckRow;

/// `check --record-identity`: the `[identity.NODE]` tables of every
/// inventory node that is not pinned yet, and why a node was not recorded.
/// URL targets get a comment with the `--expect-uuid` to use.
pub fn record_identity(plans: &[NodePlan], rows: &[CheckRow]) -> (String, Vec<String>) {
    use crate::fleet::identity::{identity_table, pin_for, LevelIdentity};
    let mut toml = format!(
        "# Recorded by `fencekit check --record-identity` at {}: the machine behind\n\
         # each node's fencing levels. Appended to the inventory, it makes every level\n\
         # refuse to power anything but this machine.\n",
        crate::time::utc_now()
    );
    let mut skipped = Vec::new();
    // Each node's rows, in order (grouped once, not searched per node).
    let mut by_node: std::collections::HashMap<&str, Vec<&CheckRow>> =
        std::collections::HashMap::new();
    for r in rows {
        by_node.entry(r.node.as_str()).or_default().push(r);
    }
    for p in plans {
        let own: &[&CheckRow] = by_node.get(p.name.as_str()).map_or(&[], |v| v);
        // Levels a node pin applies to (not manual or PDU methods).
        let pinnable = |level: usize| p.levels.get(level - 1).is_some_and(|m| m.pinnable());
        let levels: Vec<LevelIdentity<'_>> = own
            .iter()
            .filter(|r| pinnable(r.level))
            .map(|r| LevelIdentity {
                level: r.level,
                endpoint: &r.endpoint,
                found: r.identity.as_ref(),
            })
            .collect();
        if p.levels.iter().any(|m| !m.expected().is_empty()) {
            toml.push_str(&format!(
                "# {}: already pinned in the inventory (not recorded again)\n",
                p.name
            ));
            continue;
        }
        // A level that would fail (a disagreement, a machine another node
        // also reports, no answer) leaves the node unrecorded.
        let failing = own.iter().find(|r| !r.ok).map(|r| {
            format!(
                "level {} would fail: {}",
                r.level,
                r.error.as_deref().unwrap_or("?")
            )
        });
        let pin = match failing.map_or_else(|| pin_for(&levels).map_err(|e| e.to_string()), Err) {
            Ok(pin) => pin,
            Err(why) => {
                // A comment stays one line whatever the device said.
                let line = why.replace(['\n', '\r'], " ");
                toml.push_str(&format!("# {}: not recorded: {line}\n", p.name));
                skipped.push(format!("{}: {why}", p.name));
                continue;
            }
        };
        if p.name.contains("://") {
            let mut opts = Vec::new();
            opts.extend(pin.uuid.as_ref().map(|u| format!("--expect-uuid {u}")));
            opts.extend(pin.serial.as_ref().map(|s| format!("--expect-serial {s}")));
            toml.push_str(&format!(
                "# {}: not an inventory node; pin it with {}\n",
                p.name,
                opts.join(" ")
            ));
            continue;
        }
        toml.push('\n');
        toml.push_str(&identity_table(&p.name, &pin));
    }
    (toml, skipped)
}
