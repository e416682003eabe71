//! A plan's outline: its steps with their tools, dependencies and levels, and the user values
//! it needs — what `strata plan show --json` prints and the bindings' `Plan.steps` return.

use serde::Serialize;
use serde_json::Value;

use crate::plan::Plan;

impl Plan {
    /// Each step, in plan order, as `{"id", "tool", "depends_on", "level", "intent"}`.
    pub fn step_outlines(&self) -> Vec<Value> {
        let mut level_of = vec![0; self.steps.len()];
        for (k, level) in self.levels().iter().enumerate() {
            for &i in level {
                level_of[i] = k;
            }
        }
        self.steps
            .iter()
            .enumerate()
            .map(|(i, s)| {
                let deps: Vec<&str> = self.deps[i]
                    .iter()
                    .map(|&d| self.steps[d].id.as_str())
                    .collect();
                let outline = StepOutline {
                    id: &s.id,
                    tool: &s.tool,
                    depends_on: deps,
                    level: level_of[i],
                    intent: s.intent.as_deref(),
                };
                serde_json::to_value(outline).unwrap_or(Value::Null)
            })
            .collect()
    }

    /// The outline: `{"steps": [...], "levels": [[ids]], "values": [names]}`.
    pub fn outline(&self) -> Value {
        let outline = Outline {
            steps: self.step_outlines(),
            levels: self.level_ids(),
            values: self.value_names(),
        };
        serde_json::to_value(outline).unwrap_or(Value::Null)
    }
}

/// A step of the outline.
#[derive(Serialize)]
struct StepOutline<'a> {
    id: &'a str,
    tool: &'a str,
    depends_on: Vec<&'a str>,
    level: usize,
    intent: Option<&'a str>,
}

/// The outline of a plan.
#[derive(Serialize)]
struct Outline<'a> {
    steps: Vec<Value>,
    levels: Vec<Vec<String>>,
    values: Vec<&'a str>,
}
