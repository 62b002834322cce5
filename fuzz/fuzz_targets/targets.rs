//! Fuzz target `targets`: a thin shim; the body is [`common::targets`], shared
//! with the corpus replay test (`tests/fuzz_corpus.rs`).
#![no_main]

mod common;

libfuzzer_sys::fuzz_target!(|data: &[u8]| common::targets(data));
