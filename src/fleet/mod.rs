//! Fleets and runbooks: inventories, host ranges, target selection, bounded
//! fan-out with fencing levels, audit records and per-target locks.
//!
//! * [`hostrange`]: `node[01-64,70]` expansion;
//! * [`method`]: one fencing method (driver, endpoint, credential reference) and the driver it builds;
//! * [`inventory`]: the TOML inventory, with line-numbered errors;
//! * [`inorder`]: a large fleet's loops on helper threads, results in order;
//! * [`plan`]: from command-line words to an ordered list of nodes and their levels;
//! * [`fanout`]: running a plan, kind to BMCs, one result per node;
//! * [`audit`]: the JSON-lines audit trail;
//! * [`lock`]: per-target advisory locks between fencekit processes;
//! * [`verify`]: evidence that a node is off or on, and fenceability checks;
//! * [`guard`]: the mass-fencing guard (`--max-fence`);
//! * [`hold`]: holds that keep nodes from power changes (`fencekit hold`);
//! * [`hook`]: the confirmed-off hook and the script runner behind it;
//! * [`sequence`]: `off`/`reboot` with crash dump first and the hook;
//! * [`identity`]: whether a node's levels agree about who it is, and the pins `check --record-identity` prints;
//! * [`drift`]: the `check --record` baseline and the named drifts from it;
//! * [`watch`]: `check --watch`, the schedule and what it keeps per level.

pub mod audit;
pub mod drift;
pub mod fanout;
pub mod guard;
pub mod hold;
pub mod hook;
pub mod hostrange;
pub mod identity;
pub mod inorder;
pub mod inventory;
pub mod manual;
pub mod plan;
pub mod result;
pub mod sections;
pub mod sequence;
pub mod tasks;
pub mod verify;
pub mod watch;
