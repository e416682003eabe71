//! The directive loader (front matter, inputs, actions, hooks, stages 1-2 compiled), then a
//! run against stub tools that return canned results (nothing is spawned).
#![no_main]

use libfuzzer_sys::fuzz_target;
use serde_json::{json, Map, Value};
use strata_core::RenderOptions;
use strata_directive::{Directive, RunOptions};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let limits = strata_fuzz::loader_limits();
    let tools = strata_fuzz::StubTools;
    let Ok(d) = Directive::load("directives/fuzz.md", text, &tools, &[], &limits) else {
        return;
    };
    let _ = d.sites();
    let given: Map<String, Value> = match json!({"text": strata_fuzz::EVIL, "n": "3"}) {
        Value::Object(m) => m,
        _ => unreachable!(),
    };
    for given in [Map::new(), given] {
        if let Ok(inputs) = d.bind_inputs(&given) {
            for dry_run in [true, false] {
                let options = RunOptions {
                    dry_run,
                    render: RenderOptions::default(),
                    secrets: &[],
                    ..RunOptions::default()
                };
                let _ = d.run(&inputs, &tools, options);
            }
        }
    }
});
