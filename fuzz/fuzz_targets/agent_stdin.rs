//! Fuzz target `agent_stdin`: a thin shim; the body is [`common::agent_stdin`], shared
//! with the corpus replay test (`tests/fuzz_corpus.rs`).
#![no_main]

mod common;

libfuzzer_sys::fuzz_target!(|data: &[u8]| common::agent_stdin(data));
