//! Argo's DAG controller, locally, for the fidelity tests: every task of an exported
//! Workflow run with the binary, in dependency order, as Argo v4 would run it.
//!
//! * A task is eligible once every task its `depends` names has ended; a `depends` that does
//!   not hold leaves it Omitted, a `when` that does not hold Skipped.
//! * A `withParam` task runs its template once per element (`{{item}}`); none when the list
//!   is empty (Skipped). Its outputs are the aggregated ones: for each output parameter, the
//!   JSON list of the elements' values.
//! * Each pod has a directory of its own for `/tmp/strata`; `/project` is the project. Input
//!   artifacts are written from their `raw.data` or copied from the artifact the task's
//!   arguments name (an optional one may be missing). Output parameters are read from their
//!   files (their `default` when missing), output artifacts kept when their file exists.
//! * Every `{{…}}` in a template text or a parameter value (the workflow's own, a task's
//!   argument, an input's default) is replaced as Argo replaces it: with no escape, and again
//!   inside what a replacement put in. A tag left unresolved in a pod's command, artifact or
//!   working directory fails the test.
//! * The outputs of a Skipped or Omitted task are their declared defaults (empty without
//!   one), as Argo v4 gives them.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::common::Ran;

/// How a task ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    /// Every pod exited 0.
    Succeeded,
    /// A pod exited non-zero.
    Failed,
    /// Its `when` did not hold, or its `withParam` was empty.
    Skipped,
    /// Its `depends` did not hold.
    Omitted,
}

/// What a task left.
#[derive(Debug)]
pub struct Done {
    /// How it ended.
    pub phase: Phase,
    /// Its output parameters.
    pub parameters: HashMap<String, String>,
    /// The files of its output artifacts.
    pub artifacts: HashMap<String, PathBuf>,
    /// What its pods printed on standard output, in order.
    pub stdout: String,
}

/// The elements of array `pointer` of `v` (none when absent).
pub fn list<'v>(v: &'v Value, pointer: &str) -> &'v [Value] {
    v.pointer(pointer)
        .and_then(Value::as_array)
        .map_or(&[], Vec::as_slice)
}

/// The `name` of `v`.
pub fn name(v: &Value) -> &str {
    v["name"].as_str().unwrap()
}

/// The `{{…}}` tags of `text` replaced by `lookup` (a tag it does not know stays), as Argo
/// replaces them: in every template text and parameter value, with no escape, and again in
/// what a replacement put in (a value holding `{{workflow.name}}` gets the name) — repeated
/// until nothing changes.
fn substitute(text: &str, lookup: &dyn Fn(&str) -> Option<String>) -> String {
    let mut text = text.to_string();
    for _ in 0..8 {
        let next = substitute_once(&text, lookup);
        if next == text {
            break;
        }
        text = next;
    }
    text
}

/// One pass of [`substitute`].
fn substitute_once(text: &str, lookup: &dyn Fn(&str) -> Option<String>) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(open) = rest.find("{{") {
        let Some(close) = rest[open..].find("}}").map(|c| c + open) else {
            break;
        };
        out.push_str(&rest[..open]);
        let tag = rest[open + 2..close].trim();
        match lookup(tag) {
            Some(v) => out.push_str(&v),
            None => out.push_str(&rest[open..close + 2]),
        }
        rest = &rest[close + 2..];
    }
    out.push_str(rest);
    out
}

/// The tasks a `depends` expression names, and whether it holds (`A.Succeeded`, joined by
/// `&&` or by `||`).
fn depends(expr: &str, done: &HashMap<String, Done>) -> (Vec<String>, Option<bool>) {
    let any = expr.contains("||");
    let terms: Vec<(&str, &str)> = expr
        .split(if any { "||" } else { "&&" })
        .map(|t| t.trim().split_once('.').expect("a term `task.Phase`"))
        .collect();
    let names = terms.iter().map(|(t, _)| t.to_string()).collect();
    if terms.iter().any(|(t, _)| !done.contains_key(*t)) {
        return (names, None);
    }
    let holds = |(t, p): &(&str, &str)| format!("{:?}", done[*t].phase) == *p;
    let result = match any {
        true => terms.iter().any(holds),
        false => terms.iter().all(holds),
    };
    (names, Some(result))
}

/// Whether a `when` holds: `'a' == 'b'` comparisons joined by `||`, once substituted.
fn when(expr: &str) -> bool {
    expr.split(" || ").any(|c| {
        let (a, b) = c.split_once(" == ").expect("a comparison");
        a.trim().trim_matches('\'') == b.trim().trim_matches('\'')
    })
}

/// The uid Argo gives the run of workflow `workflow` (one per run, as Kubernetes makes it).
fn uid(workflow: &str) -> String {
    format!("6f1c2d3e-uid-of-{workflow}")
}

/// Runs every task of `manifest`'s entry DAG; `workflow` is its `workflow.name`. Returns
/// each task as it ended, in the order they ended.
pub fn run(ran: &Ran, manifest: &Value, workflow: &str) -> Vec<(String, Done)> {
    let raw: HashMap<String, String> = list(manifest, "/spec/arguments/parameters")
        .iter()
        .map(|p| (name(p).into(), p["value"].as_str().unwrap_or("").into()))
        .collect();
    let global = |tag: &str| -> Option<String> {
        match tag.split('.').collect::<Vec<_>>().as_slice() {
            ["workflow", "parameters", p] => raw.get(*p).cloned(),
            ["workflow", "name"] => Some(workflow.to_string()),
            ["workflow", "uid"] => Some(uid(workflow)),
            _ => None,
        }
    };
    // Argo substitutes the workflow's own parameter values too.
    let globals: HashMap<String, String> = raw
        .iter()
        .map(|(k, v)| (k.clone(), substitute(v, &global)))
        .collect();
    let templates: HashMap<&str, &Value> = list(manifest, "/spec/templates")
        .iter()
        .map(|t| (name(t), t))
        .collect();
    let entry = templates[manifest["spec"]["entrypoint"].as_str().unwrap()];
    let tasks = list(entry, "/dag/tasks");
    let mut done: HashMap<String, Done> = HashMap::new();
    let mut order = Vec::new();
    while order.len() < tasks.len() {
        let (task, holds) = tasks
            .iter()
            .filter(|t| !done.contains_key(name(t)))
            .find_map(|t| match t["depends"].as_str() {
                None => Some((t, true)),
                Some(d) => depends(d, &done).1.map(|h| (t, h)),
            })
            .expect("a task whose dependencies have ended");
        let me = name(task).to_string();
        let template = templates[task["template"].as_str().unwrap()];
        let scope = |tag: &str| -> Option<String> {
            let parts: Vec<&str> = tag.split('.').collect();
            match parts.as_slice() {
                ["tasks", t, "outputs", "parameters", p] => done[*t].parameters.get(*p).cloned(),
                ["workflow", "parameters", p] => globals.get(*p).cloned(),
                ["workflow", "name"] => Some(workflow.to_string()),
                ["workflow", "uid"] => Some(uid(workflow)),
                _ => None,
            }
        };
        let phase = if !holds {
            Some(Phase::Omitted)
        } else if task["when"]
            .as_str()
            .is_some_and(|w| !when(&substitute(w, &scope)))
        {
            Some(Phase::Skipped)
        } else {
            None
        };
        let left = match phase {
            Some(phase) => not_run(template, phase),
            None => {
                let items: Vec<Option<String>> = match task["withParam"].as_str() {
                    None => vec![None],
                    Some(p) => {
                        let text = substitute(p, &scope);
                        let items: Vec<Value> = serde_json::from_str(&text)
                            .unwrap_or_else(|e| panic!("withParam of {me}: {e}: {text}"));
                        items
                            .into_iter()
                            .map(|i| match i {
                                Value::String(s) => Some(s),
                                other => Some(other.to_string()),
                            })
                            .collect()
                    }
                };
                if items.is_empty() {
                    not_run(template, Phase::Skipped)
                } else {
                    let pods: Vec<Done> = items
                        .iter()
                        .enumerate()
                        .map(|(i, item)| {
                            let pod = match item {
                                None => me.clone(),
                                Some(_) => format!("{me}-{i}"),
                            };
                            let given = |tag: &str| match (tag, item) {
                                ("item", Some(item)) => Some(item.clone()),
                                _ => scope(tag),
                            };
                            run_pod(ran, &pod, task, template, &done, &given)
                        })
                        .collect();
                    match items[0] {
                        None => pods.into_iter().next().unwrap(),
                        Some(_) => aggregate(pods),
                    }
                }
            }
        };
        order.push(me.clone());
        done.insert(me, left);
    }
    order
        .into_iter()
        .map(|t| {
            let d = done.remove(&t).unwrap();
            (t, d)
        })
        .collect()
}

/// What a task that did not run leaves: its outputs' defaults.
fn not_run(template: &Value, phase: Phase) -> Done {
    Done {
        phase,
        parameters: list(template, "/outputs/parameters")
            .iter()
            .map(|p| {
                let default = p.pointer("/valueFrom/default").and_then(Value::as_str);
                (name(p).to_string(), default.unwrap_or("").to_string())
            })
            .collect(),
        artifacts: HashMap::new(),
        stdout: String::new(),
    }
}

/// The outputs of a fanned-out task from those of its pods.
fn aggregate(pods: Vec<Done>) -> Done {
    let failed = pods.iter().any(|p| p.phase == Phase::Failed);
    let mut names: Vec<&String> = pods.iter().flat_map(|p| p.parameters.keys()).collect();
    names.sort();
    names.dedup();
    let parameters = names
        .into_iter()
        .map(|n| {
            let values: Vec<&String> = pods.iter().filter_map(|p| p.parameters.get(n)).collect();
            (n.clone(), serde_json::to_string(&values).unwrap())
        })
        .collect();
    Done {
        phase: if failed {
            Phase::Failed
        } else {
            Phase::Succeeded
        },
        parameters,
        artifacts: HashMap::new(),
        stdout: pods.iter().map(|p| p.stdout.as_str()).collect(),
    }
}

/// Runs one pod of `task`: its inputs set up, its container's command run with the binary,
/// its outputs read.
fn run_pod(
    ran: &Ran,
    pod: &str,
    task: &Value,
    template: &Value,
    done: &HashMap<String, Done>,
    scope: &dyn Fn(&str) -> Option<String>,
) -> Done {
    let dir = ran.path().join("pods").join(pod);
    let local = |p: &str| {
        p.replace("/tmp/strata", &dir.display().to_string())
            .replace("/project", &ran.path().display().to_string())
    };
    let mut given: HashMap<String, String> = list(template, "/inputs/parameters")
        .iter()
        .filter_map(|p| {
            let default = substitute(p["default"].as_str()?, scope);
            Some((name(p).to_string(), default))
        })
        .collect();
    for p in list(task, "/arguments/parameters") {
        given.insert(
            name(p).into(),
            substitute(p["value"].as_str().unwrap(), scope),
        );
    }
    let given_artifacts: HashMap<&str, &Path> = list(task, "/arguments/artifacts")
        .iter()
        .filter_map(|a| {
            let from = a["from"].as_str().unwrap();
            let parts: Vec<&str> = from.trim_matches(['{', '}']).split('.').collect();
            let ["tasks", t, "outputs", "artifacts", o] = parts.as_slice() else {
                panic!("{from}")
            };
            done[*t].artifacts.get(*o).map(|p| (name(a), p.as_path()))
        })
        .collect();
    let inputs = |tag: &str| -> Option<String> {
        match tag.split('.').collect::<Vec<_>>().as_slice() {
            ["inputs", "parameters", p] => Some(given.get(*p).cloned().expect(tag)),
            _ => scope(tag),
        }
    };
    for a in list(template, "/inputs/artifacts") {
        let path = local(a["path"].as_str().unwrap());
        std::fs::create_dir_all(Path::new(&path).parent().unwrap()).unwrap();
        if let Some(data) = a.pointer("/raw/data").and_then(Value::as_str) {
            let data = substitute(data, &inputs);
            assert!(
                !data.contains("{{"),
                "every tag of {pod}'s artifact {} is resolved: {data}",
                name(a)
            );
            std::fs::write(&path, data).unwrap();
        } else if let Some(from) = given_artifacts.get(name(a)) {
            std::fs::copy(from, &path).unwrap();
        } else {
            assert_eq!(a["optional"], true, "input artifact {}", name(a));
        }
    }
    let argv: Vec<String> = list(template, "/container/args")
        .iter()
        .map(|a| local(&substitute(a.as_str().unwrap(), &inputs)))
        .collect();
    assert!(
        argv.iter().all(|a| !a.contains("{{")),
        "every tag of {pod} is resolved: {argv:?}"
    );
    let dir_in_image = template
        .pointer("/container/workingDir")
        .and_then(Value::as_str)
        .map(|d| substitute(d, &inputs));
    assert!(
        !dir_in_image.as_deref().is_some_and(|d| d.contains("{{")),
        "the working directory of {pod} is resolved: {dir_in_image:?}"
    );
    let argv: Vec<&str> = argv.iter().map(String::as_str).collect();
    // A pod's exit status is its task's phase: the harness reads it.
    let out = ran.then(&argv).any_status().run();
    let parameters = list(template, "/outputs/parameters")
        .iter()
        .map(|p| {
            let path = local(
                p.pointer("/valueFrom/path")
                    .and_then(Value::as_str)
                    .unwrap(),
            );
            let text = std::fs::read_to_string(&path).unwrap_or_else(|_| {
                p.pointer("/valueFrom/default")
                    .and_then(Value::as_str)
                    .unwrap_or_else(|| panic!("{pod} left no {path}:\n{}", out.brief()))
                    .to_string()
            });
            (name(p).to_string(), text.trim_end_matches('\n').to_string())
        })
        .collect();
    let artifacts = list(template, "/outputs/artifacts")
        .iter()
        .filter_map(|a| {
            let path = PathBuf::from(local(a["path"].as_str().unwrap()));
            path.is_file().then(|| (name(a).to_string(), path))
        })
        .collect();
    assert!(
        out.code == Some(0) || out.code == Some(1) || out.code == Some(3),
        "strata itself failed in {pod}:\n{}",
        out.brief()
    );
    Done {
        phase: if out.code == Some(0) {
            Phase::Succeeded
        } else {
            Phase::Failed
        },
        parameters,
        artifacts,
        stdout: out.stdout,
    }
}
