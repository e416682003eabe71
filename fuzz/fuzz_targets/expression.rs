//! Layer C's expression language: parsing and type checking at compile time (through a
//! `${…}` placeholder), evaluation against a context, `when:`-style conditions
//! (`eval_bool`), and structured conditions read from JSON.
#![no_main]

use libfuzzer_sys::fuzz_target;
use serde_json::Value;
use strata_context::{condition::Condition, eval_bool, eval_value, parse_expr};

fuzz_target!(|data: &[u8]| {
    let Ok(s) = std::str::from_utf8(data) else {
        return;
    };
    let ctx = strata_fuzz::Data::new().context;
    if let Ok(expr) = parse_expr(s, 0) {
        let _ = eval_value(&expr, &ctx);
        let _ = eval_bool(&expr, &ctx);
    }
    // The same text as a whole placeholder and inside running text.
    if !s.contains('}') {
        strata_fuzz::render_str(&format!("${{{s}}}"), strata_core::Layer::CONTEXT);
        strata_fuzz::render_str(&format!("<${{{s}}}>"), strata_core::Layer::CONTEXT);
    }
    if let Ok(v) = serde_json::from_str::<Value>(s) {
        if let Ok(cond) = Condition::parse(&v) {
            let _ = cond.eval(&ctx);
        }
    }
});
