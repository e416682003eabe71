//! Canned responses: the bytes up to the first NUL are the template, the rest a tool result
//! read as a JSON document (`results/r.json`). The template is compiled with small Jinja
//! limits, its fields found and located, then filled as `strata respond` fills them —
//! standard fields, the tool result's `canned_response_fields`, a stub generator — completed
//! and rendered. Errors are expected; panics, hangs and memory blow-ups are findings, and so
//! is a rendered reply or error that shows the secret a field was refused for.
#![no_main]

use libfuzzer_sys::fuzz_target;
use serde_json::{json, Value};
use strata_core::Error;
use strata_doc::{Document, Format};
use strata_responses::{check_std, Generate, JinjaLimits, Place, Response, Sources, ToolResult};

const SECRET: &str = "s3cr3t-r3sp0nse";

/// Fills every `generative.*` field with text holding other layers' syntax; a field named
/// `…fail…` fails, one named `…secret…` yields the secret.
struct Stub;

impl Generate for Stub {
    fn name(&self) -> &str {
        "stub/generator"
    }

    fn place(&self) -> Place<'_> {
        Place::Nowhere
    }

    fn generate(&self, _template: &str, field: &str, context: &Value) -> Result<Value, Error> {
        if field.contains("fail") {
            return Err(strata_responses::generator_failed(field, "stub", "none"));
        }
        if field.contains("secret") {
            return Ok(json!(SECRET));
        }
        Ok(json!(format!(
            "{} {{{{ std.customer.name }}}} ({} fields so far)",
            strata_fuzz::EVIL,
            context.get("fields").map_or(0, |f| f.as_object().map_or(0, |o| o.len()))
        )))
    }
}

fuzz_target!(|data: &[u8]| {
    let (template, result) = match data.iter().position(|&b| b == 0) {
        Some(i) => (&data[..i], &data[i + 1..]),
        None => (data, &b""[..]),
    };
    let Ok(source) = std::str::from_utf8(template) else {
        return;
    };
    let jinja = JinjaLimits {
        fuel: 20_000,
        recursion: 16,
        output_bytes: 1 << 16,
    };
    let Ok(response) = Response::compile(source, Some("responses/fuzz.j2"), jinja) else {
        return;
    };
    for field in response.fields() {
        let _ = response.span_of(field);
    }

    let limits = strata_fuzz::loader_limits();
    let doc = Document::parse("results/r.json", result.to_vec(), Format::Json, &limits).ok();
    let mut tools = Vec::new();
    if let Some(doc) = &doc {
        if let Ok(Some(t)) = ToolResult::of("`results/r.json`", &doc.value, Place::Doc(doc)) {
            tools.push(t);
        }
    }
    let std = json!({
        "customer": {"name": strata_fuzz::EVIL},
        "agent": {"name": "{{ std.customer.name }}"},
        "variables": {"tier": "gold", "x": "{% for i in range(9) %}{{i}}{% endfor %}", "secret": SECRET},
        "missing_params": ["p", "${HOME}"],
    });
    let std_ok = check_std(&std, Place::Nowhere).is_ok();
    let secrets = vec![SECRET.to_string()];
    let stub = Stub;
    for generator in [None, Some(&stub as &dyn Generate)] {
        let sources = Sources {
            std: if std_ok { &std } else { &Value::Null },
            std_place: Place::Nowhere,
            tools: &tools,
            generator,
            secrets: &secrets,
        };
        let extraction = response.extract(&sources);
        let _ = extraction.is_complete();
        if let Some(e) = extraction.missing_error(&response) {
            let _ = e.to_string();
        }
        match extraction.complete(&response, &sources) {
            Ok(fields) => {
                for f in &fields {
                    let _ = f.shown();
                }
                match response.render(&fields) {
                    Ok(text) => {
                        if !source.contains(SECRET) {
                            assert!(!text.contains(SECRET), "a reply shows the secret: {text:?}");
                        }
                    }
                    Err(e) => {
                        let _ = e.to_string();
                    }
                }
            }
            Err(e) => {
                let _ = e.to_string();
            }
        }
        let _ = response.respond(&sources).map(|r| r.to_json());
    }
});
