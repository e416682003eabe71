//! Canned responses (`strata-responses`): seed 004's bank template filled from ten tool
//! results, against minijinja rendering the same template with a prepared context.
//!
//! * `response_bank`: the extraction chain (std, then the `canned_response_fields` of ten
//!   results, latest first, flat key then nested path) and the render of the compiled
//!   template, against minijinja rendering the same template (compiled once) against the
//!   final values, converted to a minijinja value once.
//! * `response_bank_files`: what `strata respond bank.j2 --tool-result r0.json …` does in
//!   process — read and compile the template file, read and parse the ten result files,
//!   extract, render — against minijinja doing the same job from the same files by hand
//!   (compile the template, parse the files, merge their fields into a context, render).

use std::hint::black_box;
use std::path::Path;

use minijinja::Environment;
use serde_json::{json, Map, Value};
use strata_core::Limits;
use strata_doc::{Document, Format};
use strata_responses::{JinjaLimits, Place, Response, Sources, ToolResult};

use super::exec::write;
use crate::harness::{compare, Settings};
use crate::report::Report;

/// Seed 004's bank template.
pub const BANK: &str = "Your {{account.type}} account (ending in {{account.last_four}}) has a current balance of {{account.balance}}.";

/// What both sides must produce.
pub const EXPECTED: &str =
    "Your Checking account (ending in 1234) has a current balance of $5,432.10.";

/// Number of tool results.
pub const RESULTS: usize = 10;

/// Ten tool results: each has `data` and a few fields of its own; earlier ones hold stale
/// account values (flat keys) that the later ones replace (nested paths and flat keys).
pub fn results() -> Vec<Value> {
    (0..RESULTS)
        .map(|i| {
            let mut fields = Map::new();
            fields.insert(format!("step{i}.note"), json!(format!("result {i}")));
            fields.insert("account.balance".into(), json!(format!("${i}.00")));
            if i == RESULTS - 2 {
                fields.insert(
                    "account".into(),
                    json!({"type": "Checking", "last_four": "1234"}),
                );
            }
            if i == RESULTS - 1 {
                fields.insert("account.balance".into(), json!("$5,432.10"));
            }
            json!({"data": {"index": i, "rows": [1, 2, 3]}, "canned_response_fields": fields})
        })
        .collect()
}

/// The values minijinja renders with: what the extraction finds.
fn prepared() -> Value {
    json!({"account": {"type": "Checking", "last_four": "1234", "balance": "$5,432.10"}})
}

/// Extraction and render, from parsed results.
fn respond(response: &Response, values: &[Value]) -> String {
    let tools: Vec<ToolResult<'_>> = values
        .iter()
        .filter_map(|v| ToolResult::of("result", v, Place::Nowhere).expect("fields"))
        .collect();
    let std = Value::Object(Map::new());
    let sources = Sources {
        std: &std,
        std_place: Place::Nowhere,
        tools: &tools,
        generator: None,
        secrets: &[],
    };
    response.respond(&sources).expect("renders").text
}

/// The whole of `strata respond` in process, from files.
fn respond_files(dir: &Path, limits: &Limits) -> String {
    let template = dir.join("bank.j2");
    let source = std::fs::read_to_string(&template).expect("template");
    let response =
        Response::compile(source, Some("bank.j2"), JinjaLimits::default()).expect("compiles");
    let docs: Vec<Document> = (0..RESULTS)
        .map(|i| {
            let name = format!("results/r{i}.json");
            let bytes = std::fs::read(dir.join(&name)).expect("result");
            Document::parse(&name, bytes, Format::Json, limits).expect("parses")
        })
        .collect();
    let values: Vec<Value> = docs.into_iter().map(|d| d.value).collect();
    respond(&response, &values)
}

/// minijinja doing the same job from the same files: fields merged by hand (flat keys
/// split at dots, later results replacing earlier ones).
fn minijinja_files(dir: &Path) -> String {
    let source = std::fs::read_to_string(dir.join("bank.j2")).expect("template");
    let env = Environment::new();
    let template = env.template_from_str(&source).expect("compiles");
    let mut context = Map::new();
    for i in 0..RESULTS {
        let bytes = std::fs::read(dir.join(format!("results/r{i}.json"))).expect("result");
        let value: Value = serde_json::from_slice(&bytes).expect("parses");
        let Some(Value::Object(fields)) = value.get("canned_response_fields") else {
            continue;
        };
        for (key, v) in fields {
            merge(&mut context, key, v);
        }
    }
    template
        .render(minijinja::value::Serde(&context))
        .expect("renders")
}

fn merge(context: &mut Map<String, Value>, key: &str, value: &Value) {
    match (key.split_once('.'), value) {
        (Some((head, rest)), _) => {
            let slot = context
                .entry(head.to_string())
                .or_insert_with(|| Value::Object(Map::new()));
            if let Value::Object(inner) = slot {
                merge(inner, rest, value);
            }
        }
        (None, Value::Object(inner)) => {
            for (k, v) in inner {
                let slot = context
                    .entry(key.to_string())
                    .or_insert_with(|| Value::Object(Map::new()));
                if let Value::Object(map) = slot {
                    merge(map, k, v);
                }
            }
        }
        (None, _) => {
            context.insert(key.to_string(), value.clone());
        }
    }
}

/// Measures both comparisons.
pub fn run(settings: &Settings, report: &mut Report) {
    let values = results();
    let response = Response::compile(BANK, None, JinjaLimits::default()).expect("compiles");
    let env = Environment::new();
    let jinja = env.template_from_str(BANK).expect("compiles");
    let context = minijinja::Value::from(minijinja::value::Serde(prepared()));
    assert_eq!(respond(&response, &values), EXPECTED);
    assert_eq!(jinja.render(&context).expect("renders"), EXPECTED);
    let (strata, peer) = compare(
        settings,
        || respond(&response, black_box(&values)),
        || jinja.render(black_box(&context)).expect("renders"),
    );
    report.compare("response_bank", &strata, "minijinja", &peer);

    let dir = tempfile::tempdir().expect("a temporary directory");
    write(dir.path(), "bank.j2", BANK);
    for (i, v) in values.iter().enumerate() {
        write(dir.path(), &format!("results/r{i}.json"), &v.to_string());
    }
    let limits = Limits::default();
    assert_eq!(respond_files(dir.path(), &limits), EXPECTED);
    assert_eq!(minijinja_files(dir.path()), EXPECTED);
    let (strata, peer) = compare(
        settings,
        || respond_files(black_box(dir.path()), &limits),
        || minijinja_files(black_box(dir.path())),
    );
    report.compare("response_bank_files", &strata, "minijinja", &peer);
}
