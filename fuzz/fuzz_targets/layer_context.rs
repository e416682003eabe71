//! Layer Context's parser and renderer alone, over any UTF-8 string; the same string also goes
//! through the full documented chain.
#![no_main]

use libfuzzer_sys::fuzz_target;
use strata_core::Layer;

fuzz_target!(|data: &[u8]| {
    if let Ok(s) = std::str::from_utf8(data) {
        strata_fuzz::render_str(s, Layer::CONTEXT);
        strata_fuzz::render_all(
            &serde_json::Value::String(s.to_string()),
            &strata_pipeline::Chain::full(),
        );
    }
});
