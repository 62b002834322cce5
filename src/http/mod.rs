//! HTTP for every REST platform (KubeVirt, vSphere, EC2, the clouds and
//! hypervisors after them): one request loop, written once, beside the
//! TLS trust it uses (`crate::tls`).
//!
//! What it owns: sending one request within the step's bound and the
//! action's deadline (`client`), a connection that could not be made tried
//! again briefly (nothing was delivered), "sent, no answer" as its own
//! failure so that the at-most-once rule can see it ([`Failed::Silent`]),
//! a capped body, the throttling answers (429, 503) waited out within the
//! deadline when the caller asks (`patience`), proxies (`HTTPS_PROXY`,
//! `NO_PROXY`, an agent's own proxy option: `proxy`), and the credentials
//! it sent scrubbed from every text a server sends back (`scrub`) and
//! made printable (`text`), HTTP Digest authentication computed without
//! I/O (`digest`, RFC 7616), and a connection opened ahead of its first
//! request while a token comes from another host (`Client::preopen`), and
//! a bearer token kept between processes, encrypted with a key derived from
//! the credential it came for (`token_cache`).
//!
//! What it leaves to each platform: its retry policy beyond connecting
//! and throttling, its model of the answers, its login and its wording
//! (each request names its peer and what it asks, and the client its
//! device and what to do about a refused certificate).

pub mod client;
pub mod digest;
pub mod jwt;
pub mod patience;
pub mod proxy;
pub mod scrub;
pub mod text;
pub mod token_cache;
pub mod when;

pub use client::{Client, Failed, Reply, Request, Setup};
pub use patience::Patience;
pub use proxy::Proxy;
pub use scrub::Scrub;
pub use text::printable;
pub use token_cache::TokenCache;
