//! Documents (YAML and JSON) into values: whatever the bytes, a value or an error, never a
//! panic. (That the YAML nesting pre-scan refuses only documents nested too deeply is a
//! differential property tested in crates/strata-doc/tests/nesting.rs.)
#![no_main]

use libfuzzer_sys::fuzz_target;
use strata_doc::{Document, Format};

fuzz_target!(|data: &[u8]| {
    let limits = strata_fuzz::loader_limits();
    let _ = Document::parse("d.json", data.to_vec(), Format::Json, &limits);
    let _ = Document::parse("d.yaml", data.to_vec(), Format::Yaml, &limits);
});
