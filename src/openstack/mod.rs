//! OpenStack Nova (issue 40): servers through the compute API, with a
//! Keystone v3 token (a password, an application credential or a token)
//! and the compute endpoint from its catalog (region and interface).
//! [`model`] is what the answers mean for fencing (pure: the token's
//! catalog, a server's status, power state and task, the rule that
//! decides off), [`cloud`] where the settings come from (clouds.yaml and
//! secure.yaml, the `OS_*` environment, an openrc file).
//! docs/hypervisors.md is the user's guide; the peer is
//! `tests/peers/openstack_api.py`.

pub mod agent;
pub mod args;
pub mod build;
pub mod client;
pub mod cloud;
pub mod config;
pub mod driver;
pub mod facts;
pub mod model;
pub mod platform;
