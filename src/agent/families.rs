//! Finding an agent family's platform code: a definition's `driver`
//! (`agents/*.toml`) names a registered platform, which declares how it
//! serves the family (`Platform::agent_family`, in the platform's folder:
//! `src/NAME/agent.rs`). Nothing here names a platform; a new platform's
//! family needs no line here (docs/design.md, "Adding a platform").

use super::defs::{Agent, Family};
use super::values::Values;
pub use crate::platform::agent::AgentFamily;

/// How the platform named by definition `def` serves it (`None`: no
/// platform of that name in this build, or one that serves no agent).
pub fn of_family(def: &Family) -> Option<&'static AgentFamily> {
    crate::method::platforms::by_name(def.driver)?.agent_family(def)
}

/// The family entry of `agent` (every definition names one: a test checks).
pub fn of(agent: &Agent) -> Option<&'static AgentFamily> {
    of_family(agent.family)
}

/// The checks only `agent`'s family makes, after the shared ones
/// (`values::validate`): each failure's message.
pub fn check(values: &Values, agent: &Agent) -> Vec<String> {
    of(agent).map_or_else(Vec::new, |f| (f.check)(values, agent))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::defs::defs;
    use crate::agent::key::Key;

    #[test]
    fn every_definition_names_a_registered_platform_and_family() {
        for f in &defs().families {
            assert!(
                crate::method::platforms::by_name(f.driver).is_some(),
                "{}: driver '{}' is not a registered platform",
                f.name,
                f.driver
            );
            assert!(
                of_family(f).is_some(),
                "{}: platform '{}' declares no agent family (Platform::agent_family)",
                f.name,
                f.driver
            );
        }
    }

    #[test]
    fn every_defined_option_is_a_key_or_read_by_name_by_its_family() {
        for f in &defs().families {
            let fam = of_family(f).unwrap();
            for o in f.options {
                let keyed = Key::from_name(o.key_str()).is_some();
                let named = fam.read_by_name.contains(&o.key_str());
                assert!(
                    keyed || named,
                    "{}: option '{}' has no Key (add it to src/platform/agent/key.rs) and its \
                     family does not read it by name",
                    f.name,
                    o.key_str()
                );
                assert!(
                    !(keyed && named),
                    "{}: option '{}' is a Key and also read by name",
                    f.name,
                    o.key_str()
                );
            }
            for n in fam.read_by_name {
                assert!(
                    f.options.iter().any(|o| o.key_str() == *n),
                    "{}: its family reads '{n}' by name, which it does not define",
                    f.name
                );
            }
        }
    }
}
