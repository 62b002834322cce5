//! Fuzz target `snmp_codec`: a thin shim; the body is [`common::snmp_codec`], shared
//! with the corpus replay test (`tests/fuzz_corpus.rs`).
#![no_main]

mod common;

libfuzzer_sys::fuzz_target!(|data: &[u8]| common::snmp_codec(data));
