//! Checks of a plan against the project's tools, before anything runs: every tool exists,
//! and every step's arguments can match its tool's parameter schema as far as they are
//! known before running (constants checked, references left to the run).

use std::collections::HashMap;

use serde_json::{Map, Value};
use strata_core::{Error, ErrorKind, FieldPath, PathSeg};
use strata_tools::{check_known, ToolRunner};

use crate::plan::{Plan, Step};
use crate::PLAN;

fn key(k: &str) -> PathSeg {
    PathSeg::Key(k.to_string())
}

/// Every problem of the plan's steps with the tools of `runner`, in plan order; paths are
/// in the plan document's terms.
pub fn check_tools(plan: &Plan, runner: &dyn ToolRunner) -> Vec<Error> {
    let mut errors = Vec::new();
    // Each tool is looked up once, however many steps call it.
    let mut schemas: HashMap<&str, Option<Option<Value>>> = HashMap::new();
    for step in &plan.steps {
        let schema = schemas.entry(step.tool.as_str()).or_insert_with(|| {
            runner
                .has_tool(&step.tool)
                .then(|| runner.parameters(&step.tool))
        });
        let Some(schema) = schema else {
            let e = runner
                .unknown_tool(&step.tool)
                .with_message(format!(
                    "step `{}` calls unknown tool `{}`",
                    step.id, step.tool
                ))
                .with_path(step.at.child(key("tool")));
            errors.push(e);
            continue;
        };
        if let Err(e) = check_arguments(step, schema.as_ref()) {
            errors.push(e);
        }
    }
    errors
}

/// Checks what is known of a step's arguments before running against `schema`.
pub fn check_arguments(step: &Step, schema: Option<&Value>) -> Result<(), Error> {
    let at = step.at.child(key(step.args_key));
    let not_a_map = |value: &Value| {
        Err(Error::new(
            PLAN,
            ErrorKind::Invalid,
            crate::plan::arguments_not_a_map(&step.id, value),
        )
        .at_path(&at))
    };
    let args = &step.args;
    let root_hole = args.holes.iter().find(|h| h.at.is_empty());
    let (known, pending) = match (&args.skeleton, root_hole) {
        (_, Some(hole)) => match hole.fill {
            // One reference as the whole arguments: known only when running.
            crate::compile::Fill::Ref(_) => return Ok(()),
            crate::compile::Fill::Text(_) => return not_a_map(&Value::String(String::new())),
        },
        (Value::Object(map), None) if args.is_const() => (map.clone(), Vec::new()),
        (Value::Object(map), None) => {
            let mut known = Map::new();
            let mut pending = Vec::new();
            for (i, (k, v)) in map.iter().enumerate() {
                if args.holes.iter().any(|h| h.at.first() == Some(&i)) {
                    pending.push(k.clone());
                } else {
                    known.insert(k.clone(), v.clone());
                }
            }
            (known, pending)
        }
        (other, None) => return not_a_map(other),
    };
    check_known(&step.tool, schema, &known, &pending).map_err(|e| {
        e.map_message(|m| format!("step `{}`: {m}", step.id))
            .with_path(FieldPath::root())
            .at_path(&at)
    })
}

#[cfg(test)]
mod tests {
    use serde_json::json;
    use strata_tools::{FakeTools, RunResult};

    use super::*;

    struct Schema(FakeTools, Value);

    impl ToolRunner for Schema {
        fn has_tool(&self, id: &str) -> bool {
            self.0.has_tool(id)
        }
        fn unknown_tool(&self, id: &str) -> Error {
            self.0.unknown_tool(id)
        }
        fn parameters(&self, _: &str) -> Option<Value> {
            Some(self.1.clone())
        }
        fn run(
            &self,
            id: &str,
            p: &Map<String, Value>,
            o: &strata_tools::CallOptions,
        ) -> Result<RunResult, Error> {
            self.0.run(id, p, o)
        }
    }

    #[test]
    fn unknown_tools_and_arguments_that_cannot_match() {
        let tools = Schema(
            FakeTools::new().tool("examples/echo", |_| Ok(RunResult::ok(""))),
            json!({"type": "object", "properties": {"message": {"type": "string"}, "n": {"type": "integer"}}, "required": ["message"]}),
        );
        let plan = Plan::from_value(
            &json!([
                {"tool": "examples/ecko", "arguments": {}},
                {"tool": "examples/echo", "arguments": {"message": "$step1", "n": "x"}},
                {"tool": "examples/echo", "arguments": {"mesage": "{$step1.a}"}},
                {"tool": "examples/echo", "arguments": {"message": "{$step1.a}"}},
                {"tool": "examples/echo", "arguments": "$step1"},
            ]),
            &FieldPath::root(),
        )
        .unwrap();
        let got: Vec<String> = check_tools(&plan, &tools)
            .iter()
            .map(|e| e.to_string())
            .collect();
        assert_eq!(
            got,
            [
                "request error at [0].tool: step `step1` calls unknown tool `examples/ecko` (hint: did you mean `examples/echo`?)",
                "params error at [1].arguments: step `step2`: invalid parameters for `examples/echo`: parameter `n` must be an integer, not a string (hint: the parameters are: message (string, required), n (integer))",
                "params error at [2].arguments: step `step3`: invalid parameters for `examples/echo`: unknown parameter `mesage`; missing required parameter `message` (hint: did you mean `message`? the parameters are: message (string, required), n (integer))",
            ]
        );
    }
}
