//! ePowerSwitch 8M+ (issue 41): a switched PDU through its "hidden page",
//! the only interface fence_eps speaks: plain HTTP, optional Basic
//! authentication. [`model`] is what the page means (pure: outlet lines,
//! values, the outlet numbers), [`driver`] the engine's `PowerDriver` for a
//! node's outlets (and the listing), on the shared HTTP layer. On the
//! platform seam: [`config`] (`eps://[USER@]HOST[:PORT]/OUTLET[,OUTLET…]`
//! targets), [`build`] (settings from the method options), [`platform`]
//! (the `Platform`, its `Method`), [`agent`] (the fence_eps family).
//! docs/pdu.md is the user's guide; the peer is `tests/peers/eps_http.py`.

pub mod agent;
pub mod build;
pub mod config;
pub mod driver;
pub mod model;
pub mod platform;
