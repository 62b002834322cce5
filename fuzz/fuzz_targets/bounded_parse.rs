//! Fuzz target `bounded_parse`: a thin shim; the body is [`common::bounded_parse`], shared
//! with the corpus replay test (`tests/fuzz_corpus.rs`).
#![no_main]

mod common;

libfuzzer_sys::fuzz_target!(|data: &[u8]| common::bounded_parse(data));
