//! The offline check of a Workflow manifest: Argo's JSON Schema and the keys it does not
//! know ([`schema`]), and the rules the schema cannot say
//! ([`rules`]): templates that exist, dependencies on tasks that exist, no cycle, arguments
//! that match the parameters, references to parameters, tasks and steps that are there.

pub mod depends;
pub mod exported;
pub mod rules;
pub mod schema;

use serde_json::Value;
use strata_core::Error;

/// Checks a manifest strata exported: [`check`], and no `{{` but the export's own tags
/// ([`exported`]).
pub fn check_exported(manifest: &Value) -> Result<Summary, Vec<Error>> {
    let stray = exported::stray_tags(manifest);
    match check(manifest) {
        Ok(summary) if stray.is_empty() => Ok(summary),
        Ok(_) => Err(stray),
        Err(mut errors) => {
            errors.extend(stray);
            Err(errors)
        }
    }
}

/// What a manifest that passed holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Summary {
    /// Its templates.
    pub templates: usize,
    /// Its DAG tasks and steps, over every template.
    pub tasks: usize,
}

/// Checks a Workflow manifest; every problem is returned, each with its field path.
pub fn check(manifest: &Value) -> Result<Summary, Vec<Error>> {
    let mut errors = schema::schema_errors(manifest);
    errors.extend(rules::rule_errors(manifest));
    if !errors.is_empty() {
        return Err(errors);
    }
    let templates = manifest
        .pointer("/spec/templates")
        .and_then(Value::as_array)
        .map_or(&[][..], Vec::as_slice);
    let tasks = templates
        .iter()
        .map(|t| {
            let dag = t
                .pointer("/dag/tasks")
                .and_then(Value::as_array)
                .map_or(0, Vec::len);
            let steps = t.get("steps").and_then(Value::as_array).map_or(0, |gs| {
                gs.iter().filter_map(Value::as_array).map(Vec::len).sum()
            });
            dag + steps
        })
        .sum();
    Ok(Summary {
        templates: templates.len(),
        tasks,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Argo's nine examples (`tests/fixtures/argo/`), parsed.
    fn examples() -> Vec<(String, Value)> {
        let dir =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/argo");
        let mut out: Vec<(String, Value)> = std::fs::read_dir(&dir)
            .unwrap()
            .filter_map(|e| {
                let path = e.unwrap().path();
                let name = path.file_name()?.to_str()?.to_string();
                name.ends_with(".yaml").then(|| {
                    let text = std::fs::read_to_string(&path).unwrap();
                    (name, strata_doc::Document::yaml_value(&text).unwrap())
                })
            })
            .collect();
        out.sort_by(|a, b| a.0.cmp(&b.0));
        out
    }

    #[test]
    fn argos_examples_pass() {
        let all = examples();
        assert_eq!(all.len(), 9);
        for (name, manifest) in all {
            if let Err(errors) = check(&manifest) {
                panic!(
                    "{name}: {:?}",
                    errors.iter().map(|e| e.to_string()).collect::<Vec<_>>()
                );
            }
        }
    }

    /// Argo's `dag-diamond` example with `change` applied, checked: each error as text.
    fn mutated(change: impl FnOnce(&mut Value)) -> Vec<String> {
        let (_, mut manifest) = examples()
            .into_iter()
            .find(|(n, _)| n == "dag-diamond.yaml")
            .unwrap();
        change(&mut manifest);
        check(&manifest)
            .unwrap_err()
            .iter()
            .map(|e| format!("{}: {e}", e.kind().name()))
            .collect()
    }

    fn task(m: &mut Value, i: usize) -> &mut serde_json::Map<String, Value> {
        m.pointer_mut(&format!("/spec/templates/0/dag/tasks/{i}"))
            .and_then(Value::as_object_mut)
            .unwrap()
    }

    #[test]
    fn mutations_of_an_example_are_refused() {
        assert_eq!(
            mutated(|m| {
                task(m, 1).insert("template".into(), "echoo".into());
            }),
            ["template_not_found: argo error at spec.templates[0].dag.tasks[1].template: task `B` uses template `echoo`, which the workflow does not have (hint: did you mean `echo`?)"]
        );
        assert_eq!(
            mutated(|m| {
                task(m, 3).insert("depends".into(), "B && X".into());
            }),
            ["unknown_name: argo error at spec.templates[0].dag.tasks[3].depends 5..6: task `D` depends on `X`, which is not a task of template `diamond` (hint: the other tasks are `A`, `B`, `C`)"]
        );
        assert_eq!(
            mutated(|m| {
                task(m, 0).insert("depends".into(), "D".into());
            }),
            ["cycle: argo error at spec.templates[0].dag.tasks[0].name: the tasks of template `diamond` depend on each other in a circle: A -> B -> D -> A (hint: a DAG cannot have a cycle; Argo would never start these tasks)"]
        );
        assert_eq!(
            mutated(|m| {
                m.pointer_mut("/spec/templates/1").unwrap().as_object_mut().unwrap()
                    .insert("retryStratgy".into(), serde_json::json!({"limit": 2}));
            }),
            ["unknown_field: argo error at spec.templates[1].retryStratgy: unknown key `retryStratgy`: Argo's schema does not have it here (hint: did you mean `retryStrategy`?)"]
        );
        assert_eq!(
            mutated(|m| {
                m.pointer_mut("/spec").unwrap().as_object_mut().unwrap()
                    .insert("parallelism".into(), "two".into());
            }),
            ["type: argo error at spec.parallelism: Argo's schema: \"two\" is not of type \"integer\""]
        );
    }
}
