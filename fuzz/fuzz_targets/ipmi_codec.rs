//! Fuzz target `ipmi_codec`: a thin shim; the body is [`common::ipmi_codec`], shared
//! with the corpus replay test (`tests/fuzz_corpus.rs`).
#![no_main]

mod common;

libfuzzer_sys::fuzz_target!(|data: &[u8]| common::ipmi_codec(data));
