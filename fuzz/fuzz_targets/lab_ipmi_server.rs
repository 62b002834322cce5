//! Fuzz target `lab_ipmi_server`: a thin shim; the body is [`common::lab_ipmi_server`], shared
//! with the corpus replay test (`tests/fuzz_corpus.rs`).
#![no_main]

mod common;

libfuzzer_sys::fuzz_target!(|data: &[u8]| common::lab_ipmi_server(data));
