//! Fuzz target `redfish_json`: a thin shim; the body is [`common::redfish_json`], shared
//! with the corpus replay test (`tests/fuzz_corpus.rs`).
#![no_main]

mod common;

libfuzzer_sys::fuzz_target!(|data: &[u8]| common::redfish_json(data));
