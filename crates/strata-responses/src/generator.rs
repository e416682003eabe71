//! What fills `generative.*` fields: anything that implements [`Generate`] — a generator
//! tool of the project ([`Generator`]), or a library caller's own function (the Python
//! bindings' callables).
//!
//! The tool protocol: the tool is called through the shared [`ToolRunner`] with the
//! parameters `{template, field, context}` (a generator tool passes them on as JSON on stdin
//! with `input_data: "{params_json}"`) and prints the field's value as JSON on stdout.

use serde_json::{json, Map, Value};
use strata_core::{Error, ErrorKind};
use strata_tools::{CallOptions, ToolRunner};

use crate::sources::Place;
use crate::RESPONSE;

/// Fills `generative.*` fields, one call per field, once every other field was found.
pub trait Generate {
    /// How field sources name it: the tool id, or the function's name.
    fn name(&self) -> &str;

    /// Where it was configured: errors about the values it made point there.
    fn place(&self) -> Place<'_>;

    /// The value of `field`, generated from the template as written, the field's name and the
    /// context (`{std, fields}`: the standard fields and every field filled so far). A failure
    /// is an error of kind [`ErrorKind::Generator`] naming the field ([`failed`]).
    fn generate(&self, template: &str, field: &str, context: &Value) -> Result<Value, Error>;
}

/// The error of a generator that could not fill `field`: `why` it failed, and a `hint`.
pub fn failed(field: &str, why: impl std::fmt::Display, hint: impl Into<String>) -> Error {
    Error::new(
        RESPONSE,
        ErrorKind::Generator,
        format!("the generator of `{field}` failed: {why}"),
    )
    .with_hint(hint)
}

/// A configured generator tool.
#[derive(Clone, Copy)]
pub struct Generator<'a> {
    /// The tool id.
    pub tool: &'a str,
    /// The runner that runs it.
    pub runner: &'a dyn ToolRunner,
    /// Per-call options (a remaining time budget).
    pub call: CallOptions,
    /// Where the generator was configured.
    pub place: Place<'a>,
}

impl Generate for Generator<'_> {
    fn name(&self) -> &str {
        self.tool
    }

    fn place(&self) -> Place<'_> {
        self.place
    }

    /// Runs the tool with `{template, field, context}` and parses what it printed as JSON.
    fn generate(&self, template: &str, field: &str, context: &Value) -> Result<Value, Error> {
        let mut params = Map::new();
        params.insert("template".into(), json!(template));
        params.insert("field".into(), json!(field));
        params.insert("context".into(), context.clone());
        let fail = |why: String, hint: &str| failed(field, why, hint);
        let run = self
            .runner
            .run(self.tool, &params, &self.call)
            .map_err(|e| fail(e.message().to_string(), e.hint().unwrap_or(PROTOCOL)))?;
        if !run.success {
            return Err(fail(run.failure_message(self.tool), PROTOCOL));
        }
        if run.stdout_truncated {
            return Err(fail(
                format!("tool `{}` printed more than its output cap", self.tool),
                PROTOCOL,
            ));
        }
        serde_json::from_slice(&run.stdout).map_err(|_| {
            fail(
                format!("tool `{}` printed something that is not JSON", self.tool),
                "a generator prints the field's value as JSON: a text is printed with its quotes (\"Have a nice day.\")",
            )
        })
    }
}

/// The hint of generator failures.
const PROTOCOL: &str = "a generator reads {template, field, context} as JSON on stdin (`input_data: \"{params_json}\"`) and prints the field's value as JSON";

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use strata_tools::{FakeTools, RunResult};

    use super::*;

    fn generator(tools: &FakeTools) -> Generator<'_> {
        Generator {
            tool: "gen",
            runner: tools,
            call: CallOptions::default(),
            place: Place::Nowhere,
        }
    }

    #[test]
    fn the_generator_gets_template_field_and_context_and_prints_json() {
        let tools = FakeTools::new().tool("gen", |p| {
            Ok(RunResult::ok(
                json!(format!("<{}>", p["field"].as_str().unwrap())).to_string(),
            ))
        });
        let v = generator(&tools)
            .generate("T", "generative.greeting", &json!({"std": {}}))
            .unwrap();
        assert_eq!(v, json!("<generative.greeting>"));
        assert_eq!(
            tools.calls()[0].1,
            json!({"template": "T", "field": "generative.greeting", "context": {"std": {}}})
        );
    }

    #[test]
    fn failures_timeouts_and_text_are_generator_errors() {
        let tools = FakeTools::new()
            .tool("gen", |_| Ok(RunResult::exited(3, "", "boom")))
            .tool("slow", |_| {
                let mut run = RunResult::exited(0, "", "");
                (run.success, run.exit_code, run.timed_out) = (false, None, true);
                run.duration = Duration::from_secs(1);
                Ok(run)
            })
            .tool("text", |_| Ok(RunResult::ok("Have a nice day")));
        let e = generator(&tools)
            .generate("T", "generative.g", &json!({}))
            .unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Generator);
        assert_eq!(
            e.message(),
            "the generator of `generative.g` failed: tool `gen` exited with code 3"
        );
        let slow = Generator {
            tool: "slow",
            ..generator(&tools)
        };
        assert_eq!(
            slow.generate("T", "generative.g", &json!({}))
                .unwrap_err()
                .message(),
            "the generator of `generative.g` failed: tool `slow` timed out"
        );
        let text = Generator {
            tool: "text",
            ..generator(&tools)
        };
        assert_eq!(
            text.generate("T", "generative.g", &json!({})).unwrap_err().message(),
            "the generator of `generative.g` failed: tool `text` printed something that is not JSON"
        );
        let missing = Generator {
            tool: "nope",
            ..generator(&tools)
        };
        assert_eq!(
            missing
                .generate("T", "generative.g", &json!({}))
                .unwrap_err()
                .message(),
            "the generator of `generative.g` failed: unknown tool `nope`"
        );
    }
}
