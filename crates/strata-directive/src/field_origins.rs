//! Where each field of a directive's canned responses can come from, as far as the files
//! tell (for `strata check` and `strata explain`): `responses.std`, the `response_fields` the
//! actions' tools declare, the generator.

use serde_json::{json, Value};
use strata_responses::names::{is_generative, is_std};
use strata_responses::std_field;

use crate::load::Directive;
use crate::responses::Candidate;

/// Where a field of a candidate can come from, as far as the files tell.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FieldOrigin {
    /// `responses.std` sets it (`std.missing_params` is always set).
    Std,
    /// The tool of the last action that declares it in its `response_fields`.
    Tool {
        /// The action's id.
        step: String,
        /// The tool.
        tool: String,
    },
    /// The configured generator.
    Generator {
        /// The generator's tool id.
        tool: String,
    },
    /// Nothing declares it; the closest field something declares, if one is close.
    Undeclared {
        /// A likely intended field.
        suggestion: Option<String>,
    },
}

impl FieldOrigin {
    /// The origin for people: `std`, ``tool fields of step `balance` (bank/check_balance)``,
    /// ``generator `gen/phrases` ``, `nothing declares it`.
    pub fn describe(&self) -> String {
        match self {
            FieldOrigin::Std => "std".into(),
            FieldOrigin::Tool { step, tool } => format!("tool fields of step `{step}` ({tool})"),
            FieldOrigin::Generator { tool } => format!("generator `{tool}`"),
            FieldOrigin::Undeclared { suggestion: None } => "nothing declares it".into(),
            FieldOrigin::Undeclared {
                suggestion: Some(s),
            } => format!("nothing declares it (did you mean `{s}`?)"),
        }
    }
}

impl Directive {
    /// The origin of every field of every candidate, in template order, given the response
    /// fields each tool declares (`declared(tool)`, the `response_fields` of its file).
    pub fn field_origins(
        &self,
        declared: &dyn Fn(&str) -> Vec<String>,
    ) -> Vec<(&Candidate, Vec<(String, FieldOrigin)>)> {
        let per_action: Vec<(String, String, Vec<String>)> = self
            .front
            .actions
            .iter()
            .map(|a| (a.id.clone(), a.tool.clone(), declared(&a.tool)))
            .collect();
        let std = self.declared_std();
        let mut known: Vec<String> = per_action
            .iter()
            .flat_map(|(_, _, f)| f.iter().cloned())
            .collect();
        known.sort();
        known.dedup();
        self.candidates()
            .iter()
            .map(|c| {
                let fields = c
                    .response
                    .fields()
                    .iter()
                    .map(|name| {
                        let origin = origin(name, &std, &per_action, self.generator(), &known);
                        (name.clone(), origin)
                    })
                    .collect();
                (c, fields)
            })
            .collect()
    }

    /// The standard fields `responses.std` sets, as a skeleton to look names up in.
    fn declared_std(&self) -> Value {
        let mut std = json!({"missing_params": []});
        if let Some(spec) = self.front.responses.as_ref().map(|r| &r.std) {
            if spec.customer.is_some() {
                std["customer"] = json!({"name": ""});
            }
            if spec.agent.is_some() {
                std["agent"] = json!({"name": ""});
            }
            std["variables"] = Value::Object(spec.variables.clone());
        }
        std
    }
}

fn origin(
    name: &str,
    std: &Value,
    per_action: &[(String, String, Vec<String>)],
    generator: Option<&str>,
    known: &[String],
) -> FieldOrigin {
    if is_std(name) && std_field(std, name).is_some() {
        return FieldOrigin::Std;
    }
    if let Some((step, tool, _)) = per_action
        .iter()
        .rev()
        .find(|(_, _, fields)| fields.iter().any(|f| f == name))
    {
        return FieldOrigin::Tool {
            step: step.clone(),
            tool: tool.clone(),
        };
    }
    if let (true, Some(tool)) = (is_generative(name), generator) {
        return FieldOrigin::Generator {
            tool: tool.to_string(),
        };
    }
    FieldOrigin::Undeclared {
        suggestion: strata_core::did_you_mean(name, known.iter().map(String::as_str))
            .map(str::to_string),
    }
}
