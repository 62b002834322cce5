//! Fuzz target `lab_pdu_agent`: a thin shim; the body is [`common::lab_pdu_agent`], shared
//! with the corpus replay test (`tests/fuzz_corpus.rs`).
#![no_main]

mod common;

libfuzzer_sys::fuzz_target!(|data: &[u8]| common::lab_pdu_agent(data));
