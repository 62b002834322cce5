//! The native command line: `fencekit status|on|off|reboot|monitor|lab|demo|agent`.
//! Each command has one home named after it (`check/`, `verify`, `list`,
//! `lab`, `demo`); `run` holds the power commands, and what several share
//! (`args`, `plan`, `render`, `progress`) lies below them.
//!
//! Parses options with clap, resolves targets and credentials, runs the
//! engine, and renders results (human lines, JSON) and exit codes. The
//! engine never prints; everything a person sees comes from here.

pub mod args;
pub mod check;
#[cfg(feature = "lab")]
pub mod demo;
pub mod generate;
#[cfg(feature = "lab")]
pub mod lab;
pub mod list;
pub mod plan;
pub mod progress;
pub mod render;
pub mod run;
pub mod safety;
pub mod verify;
