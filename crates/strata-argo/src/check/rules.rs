//! What Argo's schema lets through and Argo would refuse at submit or fail at run time: a
//! missing entrypoint, a task or step naming a template that does not exist, a `depends`
//! on an unknown task, a cycle of tasks, arguments a template does not take (or lacks), and
//! `{{…}}` references to parameters, tasks and steps that are not there.

use std::collections::HashMap;

use serde_json::Value;
use strata_core::{did_you_mean, Error, ErrorKind, FieldPath, PathSeg, Span};

use super::depends;
use crate::ARGO;

fn key(path: &FieldPath, k: &str) -> FieldPath {
    path.child(PathSeg::Key(k.to_string()))
}

fn index(path: &FieldPath, i: usize) -> FieldPath {
    path.child(PathSeg::Index(i))
}

fn err(kind: ErrorKind, message: String, path: &FieldPath) -> Error {
    Error::new(ARGO, kind, message).at_path(path)
}

/// `did you mean` among `names`, or the list of them.
fn suggest<'a>(name: &str, names: impl Iterator<Item = &'a str> + Clone, what: &str) -> String {
    match did_you_mean(name, names.clone()) {
        Some(best) => format!("did you mean `{best}`?"),
        None => {
            let all: Vec<String> = names.map(|n| format!("`{n}`")).collect();
            if all.is_empty() {
                format!("there are no {what}")
            } else {
                format!("the {what} are {}", all.join(", "))
            }
        }
    }
}

/// The `name`s of a list of `{name, …}` maps at `value[k]`.
fn names_of(value: Option<&Value>) -> Vec<&str> {
    value
        .and_then(Value::as_array)
        .map(|items| {
            items
                .iter()
                .filter_map(|i| i.get("name").and_then(Value::as_str))
                .collect()
        })
        .unwrap_or_default()
}

/// One template, as the checks see it.
struct Template<'v> {
    value: &'v Value,
    path: FieldPath,
}

impl<'v> Template<'v> {
    fn inputs(&self, kind: &str) -> Vec<&'v str> {
        names_of(self.value.get("inputs").and_then(|i| i.get(kind)))
    }

    fn outputs(&self, kind: &str) -> Vec<&'v str> {
        names_of(self.value.get("outputs").and_then(|i| i.get(kind)))
    }

    /// Input parameters that need a value from the caller (neither `value` nor `default`).
    fn required_inputs(&self) -> Vec<&'v str> {
        self.value
            .get("inputs")
            .and_then(|i| i.get("parameters"))
            .and_then(Value::as_array)
            .map(|ps| {
                ps.iter()
                    .filter(|p| {
                        p.get("value").is_none()
                            && p.get("default").is_none()
                            && p.get("valueFrom").is_none()
                    })
                    .filter_map(|p| p.get("name").and_then(Value::as_str))
                    .collect()
            })
            .unwrap_or_default()
    }
}

struct Cx<'v> {
    templates: HashMap<&'v str, Template<'v>>,
    names: Vec<&'v str>,
    globals: Vec<&'v str>,
    errors: Vec<Error>,
}

/// Every problem of `manifest` that Argo's schema does not see.
pub fn rule_errors(manifest: &Value) -> Vec<Error> {
    let Some(spec) = manifest.get("spec") else {
        return Vec::new();
    };
    let spec_path = key(&FieldPath::root(), "spec");
    let mut cx = Cx {
        templates: HashMap::new(),
        names: Vec::new(),
        globals: names_of(spec.get("arguments").and_then(|a| a.get("parameters"))),
        errors: Vec::new(),
    };
    let list: Vec<&Value> = spec
        .get("templates")
        .and_then(Value::as_array)
        .map(|t| t.iter().collect())
        .unwrap_or_default();
    let templates_path = key(&spec_path, "templates");
    for (i, t) in list.iter().enumerate() {
        let Some(name) = t.get("name").and_then(Value::as_str) else {
            continue;
        };
        let path = index(&templates_path, i);
        if cx.templates.contains_key(name) {
            cx.errors.push(err(
                ErrorKind::DuplicateId,
                format!("two templates are named `{name}`"),
                &key(&path, "name"),
            ));
            continue;
        }
        cx.names.push(name);
        cx.templates.insert(name, Template { value: t, path });
    }
    let referenced = spec.get("workflowTemplateRef").is_some();
    match spec.get("entrypoint").and_then(Value::as_str) {
        Some(entry) if !cx.templates.contains_key(entry) && !referenced => {
            let hint = suggest(entry, cx.names.iter().copied(), "templates");
            cx.errors.push(
                err(
                    ErrorKind::TemplateNotFound,
                    format!("the entrypoint `{entry}` is not a template of the workflow"),
                    &key(&spec_path, "entrypoint"),
                )
                .with_hint(hint),
            );
        }
        None if !referenced && spec.get("templates").is_some() => cx.errors.push(
            err(
                ErrorKind::MissingFields,
                "the workflow has no `entrypoint`".into(),
                &spec_path,
            )
            .with_hint("name the template that runs first"),
        ),
        _ => {}
    }
    for name in cx.names.clone() {
        cx.template(name);
    }
    cx.errors
}

impl<'v> Cx<'v> {
    fn template(&mut self, name: &'v str) {
        let Some(t) = self.templates.get(name) else {
            return;
        };
        let (value, path) = (t.value, t.path.clone());
        let inputs = t.inputs("parameters");
        let artifacts = t.inputs("artifacts");
        let tasks = value.get("dag").and_then(|d| d.get("tasks"));
        let task_names = names_of(tasks);
        let step_names: Vec<&str> = value
            .get("steps")
            .and_then(Value::as_array)
            .map(|groups| {
                groups
                    .iter()
                    .filter_map(Value::as_array)
                    .flatten()
                    .filter_map(|s| s.get("name").and_then(Value::as_str))
                    .collect()
            })
            .unwrap_or_default();
        let mut tags = Vec::new();
        for (p, s) in strata_core::string_leaves(value, &path) {
            for (tag, span) in tags_of(s) {
                tags.push((p.clone(), tag, span));
            }
        }
        for (at, tag, span) in tags {
            self.tag(
                name,
                &at,
                &tag,
                span,
                &inputs,
                &artifacts,
                &task_names,
                &step_names,
            );
        }
        if let Some(Value::Array(list)) = tasks {
            self.dag(name, list, &key(&key(&path, "dag"), "tasks"));
        }
        if let Some(Value::Array(groups)) = value.get("steps") {
            for (g, group) in groups.iter().enumerate() {
                let Some(group) = group.as_array() else {
                    continue;
                };
                for (s, step) in group.iter().enumerate() {
                    let at = index(&index(&key(&path, "steps"), g), s);
                    let step_name = step.get("name").and_then(Value::as_str).unwrap_or("?");
                    self.call(&format!("step `{step_name}`"), step, &at);
                }
            }
        }
    }

    /// A task or step calling a template: the template exists and takes its arguments.
    fn call(&mut self, who: &str, call: &Value, at: &FieldPath) {
        if call.get("templateRef").is_some() || call.get("inline").is_some() {
            return;
        }
        let Some(target) = call.get("template").and_then(Value::as_str) else {
            return;
        };
        let Some(t) = self.templates.get(target) else {
            let hint = suggest(target, self.names.iter().copied(), "templates");
            self.errors.push(
                err(
                    ErrorKind::TemplateNotFound,
                    format!("{who} uses template `{target}`, which the workflow does not have"),
                    &key(at, "template"),
                )
                .with_hint(hint),
            );
            return;
        };
        let takes = t.inputs("parameters");
        let needs = t.required_inputs();
        let takes_artifacts = t.inputs("artifacts");
        let args = call.get("arguments");
        let given = names_of(args.and_then(|a| a.get("parameters")));
        let args_path = key(&key(at, "arguments"), "parameters");
        for (i, g) in given.iter().enumerate() {
            if !takes.contains(g) {
                let hint = suggest(g, takes.iter().copied(), "parameters it takes");
                self.errors.push(
                    err(
                        ErrorKind::UnknownName,
                        format!(
                            "{who} passes parameter `{g}`, which template `{target}` does not take"
                        ),
                        &key(&index(&args_path, i), "name"),
                    )
                    .with_hint(hint),
                );
            }
        }
        for n in needs {
            if !given.contains(&n) {
                self.errors.push(err(
                    ErrorKind::MissingFields,
                    format!("{who} does not pass parameter `{n}`, which template `{target}` needs"),
                    at,
                ));
            }
        }
        let given_artifacts = names_of(args.and_then(|a| a.get("artifacts")));
        let art_path = key(&key(at, "arguments"), "artifacts");
        for (i, g) in given_artifacts.iter().enumerate() {
            if !takes_artifacts.contains(g) {
                let hint = suggest(g, takes_artifacts.iter().copied(), "artifacts it takes");
                self.errors.push(
                    err(
                        ErrorKind::UnknownName,
                        format!(
                            "{who} passes artifact `{g}`, which template `{target}` does not take"
                        ),
                        &key(&index(&art_path, i), "name"),
                    )
                    .with_hint(hint),
                );
            }
        }
    }

    /// The tasks of a DAG: their templates and arguments, their dependencies, no cycle.
    fn dag(&mut self, dag: &str, list: &'v [Value], at: &FieldPath) {
        let names: Vec<&str> = list
            .iter()
            .map(|t| t.get("name").and_then(Value::as_str).unwrap_or(""))
            .collect();
        let mut deps: Vec<Vec<usize>> = vec![Vec::new(); list.len()];
        for (i, task) in list.iter().enumerate() {
            let here = index(at, i);
            let me = names[i];
            if names[..i].contains(&me) {
                self.errors.push(err(
                    ErrorKind::DuplicateId,
                    format!("two tasks of template `{dag}` are named `{me}`"),
                    &key(&here, "name"),
                ));
            }
            self.call(&format!("task `{me}`"), task, &here);
            let mut uses: Vec<(String, FieldPath, Option<Span>)> = Vec::new();
            if let Some(expr) = task.get("depends").and_then(Value::as_str) {
                let dpath = key(&here, "depends");
                match depends::parse(expr) {
                    Ok(found) => uses.extend(found.into_iter().map(|(n, off)| {
                        let span = Span::new(off, off + n.len());
                        (n, dpath.clone(), Some(span))
                    })),
                    Err(e) => self.errors.push(
                        err(
                            ErrorKind::Syntax,
                            format!(
                                "the `depends` of task `{me}` is not an expression: {}",
                                e.message
                            ),
                            &dpath,
                        )
                        .with_span(Span::new(e.at, e.at + 1)),
                    ),
                }
            }
            if let Some(Value::Array(ds)) = task.get("dependencies") {
                for (k, d) in ds.iter().enumerate() {
                    if let Some(d) = d.as_str() {
                        uses.push((d.to_string(), index(&key(&here, "dependencies"), k), None));
                    }
                }
            }
            for (name, path, span) in uses {
                match names.iter().position(|n| *n == name) {
                    Some(j) => {
                        if !deps[i].contains(&j) {
                            deps[i].push(j);
                        }
                    }
                    None => {
                        let others = names.iter().copied().filter(|n| *n != me);
                        let hint = suggest(&name, others, "other tasks");
                        let e = err(
                            ErrorKind::UnknownName,
                            format!("task `{me}` depends on `{name}`, which is not a task of template `{dag}`"),
                            &path,
                        )
                        .with_hint(hint)
                        .with_span(span);
                        self.errors.push(e);
                    }
                }
            }
        }
        if let Err(cycle) = strata_plans::graph::levels(&deps) {
            let shown: Vec<&str> = cycle.iter().map(|&i| names[i]).collect();
            self.errors.push(
                err(
                    ErrorKind::Cycle,
                    format!(
                        "the tasks of template `{dag}` depend on each other in a circle: {}",
                        shown.join(" -> ")
                    ),
                    &key(&index(at, cycle[0]), "name"),
                )
                .with_hint("a DAG cannot have a cycle; Argo would never start these tasks"),
            );
        }
    }

    /// One `{{…}}` reference inside template `template`.
    #[allow(clippy::too_many_arguments)]
    fn tag(
        &mut self,
        template: &str,
        at: &FieldPath,
        tag: &str,
        span: Span,
        inputs: &[&str],
        artifacts: &[&str],
        tasks: &[&str],
        steps: &[&str],
    ) {
        let parts: Vec<&str> = tag.split('.').collect();
        let problem = match parts.as_slice() {
            ["inputs", "parameters", p, ..] if !inputs.contains(p) => Some((
                format!("`{{{{{tag}}}}}` names input parameter `{p}`, which template `{template}` does not declare"),
                suggest(p, inputs.iter().copied(), "input parameters"),
            )),
            ["inputs", "artifacts", a, ..] if !artifacts.contains(a) => Some((
                format!("`{{{{{tag}}}}}` names input artifact `{a}`, which template `{template}` does not declare"),
                suggest(a, artifacts.iter().copied(), "input artifacts"),
            )),
            ["workflow", "parameters", p, ..] if !self.globals.contains(p) => Some((
                format!("`{{{{{tag}}}}}` names workflow parameter `{p}`, which `spec.arguments` does not declare"),
                suggest(p, self.globals.iter().copied(), "workflow parameters"),
            )),
            ["tasks", t, rest @ ..] if *t != "name" => self.output_ref("task", t, rest, tasks, tag, template),
            ["steps", s, rest @ ..] if *s != "name" => self.output_ref("step", s, rest, steps, tag, template),
            _ => None,
        };
        if let Some((message, hint)) = problem {
            self.errors.push(
                err(ErrorKind::UnknownName, message, at)
                    .with_span(span)
                    .with_hint(hint),
            );
        }
    }

    /// `tasks.T.outputs.parameters.P` (or `steps.…`): T is a task of the template and P an
    /// output of T's template.
    fn output_ref(
        &self,
        what: &str,
        name: &str,
        rest: &[&str],
        siblings: &[&str],
        tag: &str,
        template: &str,
    ) -> Option<(String, String)> {
        let Some(call) = self.call_named(template, what, name) else {
            return Some((
                format!("`{{{{{tag}}}}}` names {what} `{name}`, which template `{template}` does not have"),
                suggest(name, siblings.iter().copied(), &format!("{what}s")),
            ));
        };
        let target = call.get("template").and_then(Value::as_str)?;
        let t = self.templates.get(target)?;
        let (kind, out) = match rest {
            ["outputs", "parameters", p, ..] => ("parameters", *p),
            ["outputs", "artifacts", a, ..] => ("artifacts", *a),
            _ => return None,
        };
        let declared = t.outputs(kind);
        (!declared.contains(&out)).then(|| {
            (
                format!("`{{{{{tag}}}}}` names output `{out}`, which template `{target}` does not declare"),
                suggest(out, declared.iter().copied(), &format!("output {kind}")),
            )
        })
    }

    /// The task (or step) `name` of template `template`.
    fn call_named(&self, template: &str, what: &str, name: &str) -> Option<&'v Value> {
        let t = self.templates.get(template)?;
        let named = |v: &&Value| v.get("name").and_then(Value::as_str) == Some(name);
        if what == "task" {
            t.value
                .get("dag")?
                .get("tasks")?
                .as_array()?
                .iter()
                .find(named)
        } else {
            t.value
                .get("steps")?
                .as_array()?
                .iter()
                .filter_map(Value::as_array)
                .flatten()
                .find(named)
        }
    }
}

/// The `{{…}}` tags of a string (inside trimmed), with their byte spans; expressions
/// (`{{=…}}`) are left out.
fn tags_of(s: &str) -> Vec<(String, Span)> {
    let mut out = Vec::new();
    let mut from = 0;
    while let Some(open) = s[from..].find("{{").map(|o| o + from) {
        let Some(close) = s[open + 2..].find("}}").map(|c| c + open + 2) else {
            break;
        };
        let inner = s[open + 2..close].trim();
        if !inner.starts_with('=') {
            out.push((inner.to_string(), Span::new(open, close + 2)));
        }
        from = close + 2;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tags_are_found_with_their_spans() {
        assert_eq!(
            tags_of("a {{ inputs.parameters.x }} b {{=1+1}} {{item}}"),
            [
                ("inputs.parameters.x".to_string(), Span::new(2, 27)),
                ("item".to_string(), Span::new(39, 47)),
            ]
        );
    }
}
