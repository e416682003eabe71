//! A plan as a Workflow: one DAG task per step, each depending on the steps the plan says
//! it depends on, each running `strata plan step` on its one step with the records of those
//! steps as inputs. References are resolved by strata inside the pod, never by Argo.
//!
//! Failure: a step whose tool fails ends its task Failed (exit 1), and its dependents, whose
//! `depends` asks for `<task>.Succeeded` of every step they depend on, are not run (Argo
//! says Omitted; `strata plan run` says skipped). `failFast: false` lets the independent
//! steps go on, as `strata plan run` does.

use serde_json::{json, Value};
use strata_core::{did_you_mean, Error, ErrorKind, PathSeg};
use strata_plans::Plan;

use crate::manifest::{
    arguments, container, document_input, inputs, outputs, secret_env, strata_args, workflow,
    Input, Options, Secrets, Source, TaskFiles, DOCUMENT_FILE,
};
use crate::names::{check_parameter_name, task_names};
use crate::transport::{carry, to_json};
use crate::ARGO;

/// The entry template of an exported plan (no step may become a task of that name).
pub const ENTRY: &str = "strata-plan";

/// The output of every step's task: its record.
pub const RECORD: &str = "record";

/// The Workflow running `plan` (read from `source`), its tasks given the secret variables
/// their tools read.
pub fn export_plan(
    plan: &Plan,
    source: &Source<'_>,
    options: &Options,
    secrets: &Secrets<'_>,
) -> Result<Value, Error> {
    options.check()?;
    let tasks = task_names("step", plan.ids(), &[ENTRY]).map_err(|(i, e)| {
        let step = &plan.steps[i];
        let at = match step.id_written {
            true => step.at.child(PathSeg::Key("id".into())),
            false => step.at.clone(),
        };
        e.at_path(&at)
    })?;
    let values = plan.value_names();
    for v in &values {
        check_parameter_name("user value", v)?;
    }
    if let Some(extra) = options
        .values
        .keys()
        .find(|k| !values.contains(&k.as_str()))
    {
        let mut e = Error::new(
            ARGO,
            ErrorKind::UnknownName,
            format!("the plan has no user value `{extra}`"),
        );
        e = match did_you_mean(extra, values.iter().copied()) {
            Some(best) => e.with_hint(format!("did you mean `{best}`?")),
            None if values.is_empty() => e.with_hint("the plan uses no `{{PLACEHOLDER_…}}`"),
            None => e.with_hint(format!("the plan's user values are {}", values.join(", "))),
        };
        return Err(e);
    }
    let mut dag = Vec::with_capacity(plan.steps.len());
    let mut templates = vec![Value::Null];
    for (i, step) in plan.steps.iter().enumerate() {
        let deps: Vec<Input> = plan.deps[i]
            .iter()
            .map(|&d| Input {
                file: plan.steps[d].id.clone(),
                from: tasks[d].clone(),
                output: RECORD.into(),
                default: None,
                artifact: true,
            })
            .collect();
        let values = step.args.value_names().into_iter().flat_map(|name| {
            [
                "--value-json".to_string(),
                format!("{name}={{{{workflow.parameters.{name}}}}}"),
            ]
        });
        let args = strata_args(
            options,
            &[
                "plan",
                "step",
                DOCUMENT_FILE,
                "--as",
                &carry(source.name),
                "--step",
                &step.id,
            ],
            TaskFiles::Dirs {
                inputs: "--records",
            },
            values,
        );
        let mut artifacts = vec![document_input()];
        artifacts.extend(deps.iter().flat_map(Input::template_artifacts));
        let mut template = json!({
            "name": tasks[i],
            "inputs": inputs(deps.iter().map(Input::template_parameter).collect(), artifacts),
            "container": container(options, args, secret_env(options, &(secrets.names)(&step.tool))),
            "outputs": outputs(&[(RECORD, None)]),
        });
        let scale = step.scale.over(&options.scale(&step.tool));
        crate::scale::apply(&mut template, &scale, &format!("step `{}`", step.id))
            .map_err(|e| e.at_path(&step.at))?;
        templates.push(template);
        let mut task = json!({"name": tasks[i], "template": tasks[i]});
        if !deps.is_empty() {
            let depends: Vec<String> = deps
                .iter()
                .map(|d| format!("{}.Succeeded", d.from))
                .collect();
            task["depends"] = json!(depends.join(" && "));
        }
        if let Some(a) = arguments(
            deps.iter().map(Input::task_parameter).collect(),
            deps.iter().filter_map(Input::task_artifact).collect(),
        ) {
            task["arguments"] = a;
        }
        dag.push(task);
    }
    templates[0] = json!({"name": ENTRY, "dag": {"failFast": false, "tasks": dag}});
    let parameters = values
        .iter()
        .map(|name| {
            let mut p = json!({
                "name": name,
                "description": format!("the plan's user value `{name}`, as JSON (text in double quotes)"),
            });
            if let Some(v) = options.values.get(*name) {
                p["value"] = json!(to_json(v));
            }
            p
        })
        .collect();
    let manifest = workflow(source, options, ENTRY, true, parameters, templates);
    Ok(manifest)
}
