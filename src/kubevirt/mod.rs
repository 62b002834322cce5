//! KubeVirt (and OpenShift Virtualization) as a fencing device: a
//! VirtualMachine is stopped with the `stop` subresource and a grace period
//! of 0 (a hard stop), started, and restarted, through the Kubernetes API
//! over HTTPS.
//!
//! The split follows [`crate::aws`]:
//!
//! * [`build`]: settings from a target URL or an inventory endpoint and the
//!   common method options, the VM uid pin;
//! * [`config`]: what a caller sets (namespace, VM, context, kubeconfig,
//!   API version), `kubevirt://[CONTEXT@]NAMESPACE/VM` targets, the
//!   environment;
//! * [`kubeconfig`]: credentials in the client libraries' order (the
//!   kubeconfig's context, cluster and user, or the in-cluster service
//!   account), with a reader of the YAML kubectl writes;
//! * [`model`]: pure decisions over the API's answers — VMI phases, launcher
//!   pods and node readiness into on / off / transition / not off, 409
//!   refusals named; no I/O;
//! * [`http`]: one reqwest client (rustls with the cluster's CA, a client
//!   certificate), request deadlines, bounded bodies;
//! * [`driver`]: the engine's [`crate::engine::driver::PowerDriver`].
//!
//! Evidence: the KubeVirt API is the fencing device's own view of the
//! guest (as EC2's is of an instance). Off is judged by the launcher, not
//! by the VMI alone: a VMI that failed because its node stopped answering
//! is not off while its virt-launcher pod may still run there.

pub mod agent;
pub mod args;
pub mod build;
pub mod config;
pub mod driver;
pub mod facts;
pub mod http;
pub mod kubeconfig;
pub mod model;
pub mod platform;
