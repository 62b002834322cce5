//! `fencekit check`: would every fencing level work, without touching power
//! (`levels`, the entry); compared with a recorded baseline (`baseline`),
//! the machines recorded (`identity`), the configuration doctor
//! (`doctor`: `--pacemaker`, `--far`), kept watching (`watch`, with its
//! `--web-config`: `webconfig`), and the metrics all of them export
//! (`metrics`).

pub mod baseline;
pub mod doctor;
pub mod identity;
pub mod levels;
pub mod metrics;
pub mod watch;
pub mod webconfig;

pub use levels::main;
