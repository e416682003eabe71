//! A plan's outline: its steps with their tools, dependencies and levels, and the user values
//! it needs — what `strata plan show --json` prints and the bindings' `Plan.steps` return.

use serde_json::{json, Value};

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
                json!({"id": s.id, "tool": s.tool, "depends_on": deps, "level": level_of[i], "intent": s.intent})
            })
            .collect()
    }

    /// The outline: `{"steps": [...], "levels": [[ids]], "values": [names]}`.
    pub fn outline(&self) -> Value {
        json!({"steps": self.step_outlines(), "levels": self.level_ids(), "values": self.value_names()})
    }
}
