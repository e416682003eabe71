//! Argo Workflows: plans and graphs exported as Workflow manifests whose tasks run strata
//! itself, one step (or node) per task, and the offline check of any Workflow manifest.
//!
//! [`export_plan`] turns a plan into a DAG whose tasks each run `strata plan step` on one
//! step; values travel between tasks as JSON ([`transport`]): output parameters, or
//! artifacts above Argo's limit. [`check::check`] validates a manifest against Argo's JSON
//! Schema (embedded) and the rules the schema cannot say. [`names`] maps step and node ids
//! to Argo names and checks the names a user gives.

pub mod check;
mod graph;
pub mod manifest;
pub mod names;
mod plan;
pub mod scale;
pub mod transport;

pub use graph::{export_graph, tools_of, Shape, ENTRY as GRAPH_ENTRY, INPUTS};
pub use manifest::{Options, Secrets, Source};
pub use plan::{export_plan, ENTRY as PLAN_ENTRY, RECORD};

use strata_core::Layer;

/// The layer the export's errors name.
pub const ARGO: Layer = Layer::new("argo");

#[cfg(test)]
mod tests {
    use serde_json::Value;
    use strata_core::FieldPath;
    use strata_plans::Plan;

    use super::*;

    fn no_secrets(_: &str) -> Vec<String> {
        Vec::new()
    }

    #[test]
    fn an_exported_plan_passes_the_check() {
        let text = "- {id: A, tool: t/json, arguments: {n: 1}}\n- {id: B, tool: t/json, arguments: {x: '{{A.result.n}}'}}\n- {id: c_d, tool: t/json, arguments: {x: '{{A.result}}', t: '{{PLACEHOLDER_title}}'}}\n- {id: D, tool: t/json, arguments: {}, depends_on: [B, c_d]}\n";
        let value: Value = strata_doc::Document::yaml_value(text).unwrap();
        let plan = Plan::from_value(&value, &FieldPath::root()).unwrap();
        let source = Source {
            name: "plans/x.yaml",
            text,
        };
        let secrets = Secrets { names: &no_secrets };
        let manifest = export_plan(&plan, &source, &Options::new("strata:1"), &secrets).unwrap();
        let summary = check::check(&manifest).unwrap_or_else(|e| {
            panic!("{:?}", e.iter().map(|e| e.to_string()).collect::<Vec<_>>())
        });
        assert_eq!(
            summary,
            check::Summary {
                templates: 5,
                tasks: 4
            }
        );
        let tasks = manifest.pointer("/spec/templates/0/dag/tasks").unwrap();
        let depends: Vec<&str> = tasks
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t.get("depends").and_then(Value::as_str).unwrap_or("-"))
            .collect();
        assert_eq!(
            depends,
            [
                "-",
                "A.Succeeded",
                "A.Succeeded",
                "B.Succeeded && c-d.Succeeded"
            ]
        );
        assert!(!serde_json::to_string(&manifest)
            .unwrap()
            .contains("{{A.result"));
    }
}
