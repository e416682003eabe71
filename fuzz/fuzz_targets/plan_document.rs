//! Plan documents (YAML or JSON, a list or `{steps: [...]}`): `parse_document`, then
//! `Plan::load` with its located validation (ids, references, cycles); for every plan that
//! loads its levels, outlines and both drawings, a tool check against stub tools, each
//! step's resolution against no records and against synthetic results holding other
//! layers' syntax, the partial assessment (nothing done; half completed and half failed) and
//! the reply of a request. The same bytes are also answered as a `plan resolve --batch` line.
#![no_main]

use libfuzzer_sys::fuzz_target;
use serde_json::{json, Map, Value};
use strata_plans::draw::{draw, Format as Drawing};
use strata_plans::{
    answer_line_within, assess, check_arguments, check_tools, resolve_parameters_within,
    resolve_within, Plan, RecordMap, Request, Sources,
};
use strata_tools::{StepRecord, StepStatus};

/// What every completed step returned: paths that references are likely to take, and data
/// holding other layers' syntax (it must be copied in, never expanded).
fn result_of(id: &str) -> Value {
    json!({
        "step": id,
        "text": strata_fuzz::EVIL,
        "n": 3,
        "items": [1, "two", {"k": strata_fuzz::EVIL}, null],
        "data": {"a": {"b": [true, 2.5]}, "words": 3, "s": "{{A.result.step}}"},
        "result": {"step": id},
    })
}

fuzz_target!(|data: &[u8]| {
    let limits = strata_core::Limits {
        output_bytes_per_string: 1 << 16,
        output_bytes_per_config: 1 << 18,
        ..strata_fuzz::loader_limits()
    };
    if let Ok(line) = std::str::from_utf8(data) {
        let reply = answer_line_within(line, &limits);
        assert!(reply.is_object(), "a batch reply is a JSON object");
    }
    let Ok(doc) = strata_plans::parse_document("plans/fuzz.yaml", data.to_vec(), &limits) else {
        return;
    };
    let Ok(mut plan) = Plan::load(&doc) else {
        return;
    };
    plan.limits = limits.clone();

    let levels = plan.levels();
    let ids = plan.level_ids();
    assert_eq!(levels.len(), ids.len());
    assert_eq!(
        levels.iter().map(Vec::len).sum::<usize>(),
        plan.steps.len(),
        "every step is on exactly one level"
    );
    let _ = plan.value_names();
    let _ = plan.outline();
    let _ = draw(&plan, Drawing::Mermaid);
    let _ = draw(&plan, Drawing::Dot);
    let _ = check_tools(&plan, &strata_fuzz::StubTools);
    let schema = json!({"type": "object", "properties": {"step": {"type": "string"}}});
    for step in &plan.steps {
        let _ = step.uses();
        let _ = check_arguments(step, Some(&schema));
    }

    // Nothing finished and no user values.
    let none = RecordMap::default();
    let no_values = Map::new();
    let sources = Sources {
        records: &none,
        values: &no_values,
    };
    for step in &plan.steps {
        let _ = resolve_within(step, &sources, &limits);
    }
    let _ = assess(&plan, &none, &no_values);

    // Every step completed with a synthetic result, every user value given.
    let mut all = RecordMap::default();
    for step in &plan.steps {
        all.insert(
            step.id.clone(),
            StepRecord {
                id: step.id.clone(),
                status: StepStatus::Completed,
                result: result_of(&step.id),
                error: None,
                run: None,
            },
        );
    }
    let values: Map<String, Value> = plan
        .value_names()
        .into_iter()
        .enumerate()
        .map(|(i, name)| {
            let v = match i % 3 {
                0 => json!(strata_fuzz::EVIL),
                1 => json!({"k": [1, 2]}),
                _ => Value::Null,
            };
            (name.to_string(), v)
        })
        .collect();
    let sources = Sources {
        records: &all,
        values: &values,
    };
    for step in &plan.steps {
        let _ = resolve_parameters_within(step, &sources, &limits);
    }
    let _ = assess(&plan, &all, &values);

    // A request: even steps completed, odd ones failed, the values given.
    let mut results = Map::new();
    let mut failed = Vec::new();
    for (i, step) in plan.steps.iter().enumerate() {
        if i % 2 == 0 {
            results.insert(step.id.clone(), result_of(&step.id));
        } else {
            failed.push(json!(step.id));
        }
    }
    if let Ok(request) = Request::with_plan(
        Some(json!(1)),
        plan,
        Some(Value::Object(results)),
        Some(Value::Array(failed)),
        Some(Value::Object(values)),
    ) {
        let _ = request.reply();
    }
});
