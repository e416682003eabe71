//! The full pipeline over a JSON tree: the first byte picks a chain (the documented one, the
//! tool stages E P E P, other orders, repeats); the rest is a JSON document whose strings are
//! templates (or, when it is not JSON, one string template).
#![no_main]

use libfuzzer_sys::fuzz_target;
use serde_json::Value;

fuzz_target!(|data: &[u8]| {
    let Some((&pick, rest)) = data.split_first() else {
        return;
    };
    let doc = match serde_json::from_slice::<Value>(rest) {
        Ok(doc) => doc,
        Err(_) => match std::str::from_utf8(rest) {
            Ok(s) => Value::String(s.to_string()),
            Err(_) => return,
        },
    };
    strata_fuzz::render_all(&doc, &strata_fuzz::chain_of(pick));
});
