//! HPE iLO through RIBCL (Remote Insight Board Command Language): the XML
//! dialogue over TLS on port 443 that iLO, iLO 2 and iLO 3/4 speak, as
//! upstream's fence_ilo speaks it. [`model`] is what the documents mean
//! (pure: the request documents, the streamed answers, the off rule),
//! [`client`] one exchange (its own TLS connection and login), [`driver`]
//! the engine's `PowerDriver`. On the platform seam: [`config`]
//! (`ilo://[USER@]HOST[:PORT]` targets and the builder's settings),
//! [`platform`], [`agent`] (fence_ilo and fence_ilo2). docs/ilo.md is the
//! user's guide; the peer is `tests/peers/ribcl_peer.py`.

pub mod agent;
pub mod client;
pub mod config;
pub mod driver;
pub mod model;
pub mod platform;
