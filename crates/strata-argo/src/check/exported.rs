//! The check of a manifest strata exported, on top of [`super::check`]: Argo replaces every
//! `{{…}}` it finds, in any text and any parameter value, and has no escape, so a `{{` may
//! stand only where the export writes one of its own tags. Anywhere else it is user text
//! (a value, a default, a file name, an id, a directory) that reached the manifest as
//! written, and the manifest is refused.
//!
//! strata's tags stand in these places, each as one whole tag: an input artifact's
//! `raw.data`; a task argument's `value` and an artifact's `from`; a task's `withParam`; a
//! container argument after `--params-json`, `--run-id`, `--run-uid` or `--index` (and after
//! `--value-json`, as `NAME=` and the tag); and a task's `when`, as `'{{tag}}' == 'task'`
//! comparisons joined by `||`.

use std::collections::HashSet;

use serde_json::Value;
use strata_core::{string_leaves, Error, ErrorKind, FieldPath, PathSeg};

use crate::ARGO;

/// A tag as the export writes it: `{{` and `}}` around letters, digits, `_`, `-` and `.`.
fn whole_tag(s: &str) -> bool {
    s.strip_prefix("{{")
        .and_then(|s| s.strip_suffix("}}"))
        .is_some_and(|inner| {
            !inner.is_empty()
                && inner
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b"_-.".contains(&b))
        })
}

/// A `when` as the export writes it: `'{{tag}}' == 'name'` joined by ` || `.
fn when_shape(s: &str) -> bool {
    s.split(" || ").all(|c| {
        c.split_once(" == ").is_some_and(|(a, b)| {
            fn quoted(x: &str) -> Option<&str> {
                x.strip_prefix('\'').and_then(|x| x.strip_suffix('\''))
            }
            quoted(a).is_some_and(whole_tag)
                && quoted(b).is_some_and(|n| !n.contains('{') && !n.contains('\''))
        })
    })
}

fn at(path: &FieldPath, segs: &[PathSeg]) -> FieldPath {
    segs.iter().fold(path.clone(), |p, s| p.child(s.clone()))
}

fn key(k: &str) -> PathSeg {
    PathSeg::Key(k.to_string())
}

fn list(v: &Value, k: &str) -> Vec<(usize, Value)> {
    v.get(k)
        .and_then(Value::as_array)
        .map(|a| a.iter().cloned().enumerate().collect())
        .unwrap_or_default()
}

/// The places where the export writes its tags, each with its text when it has the shape
/// the export gives it.
fn own_tags(manifest: &Value) -> HashSet<FieldPath> {
    let mut ok = HashSet::new();
    let mut allow = |path: FieldPath, s: Option<&str>, shape: &dyn Fn(&str) -> bool| {
        if s.is_some_and(shape) {
            ok.insert(path);
        }
    };
    let root = FieldPath::root();
    let templates = manifest
        .get("spec")
        .map(|s| list(s, "templates"))
        .unwrap_or_default();
    for (i, t) in templates {
        let tp = at(&root, &[key("spec"), key("templates"), PathSeg::Index(i)]);
        if let Some(inputs) = t.get("inputs") {
            for (j, a) in list(inputs, "artifacts") {
                let p = at(
                    &tp,
                    &[
                        key("inputs"),
                        key("artifacts"),
                        PathSeg::Index(j),
                        key("raw"),
                        key("data"),
                    ],
                );
                allow(
                    p,
                    a.pointer("/raw/data").and_then(Value::as_str),
                    &whole_tag,
                );
            }
        }
        if let Some(c) = t.get("container") {
            let args = list(c, "args");
            for (j, a) in args.iter().skip(1) {
                let before = args[j - 1].1.as_str().unwrap_or_default();
                let p = at(&tp, &[key("container"), key("args"), PathSeg::Index(*j)]);
                let s = a.as_str();
                match before {
                    "--params-json" | "--run-id" | "--run-uid" | "--index" => {
                        allow(p, s, &whole_tag)
                    }
                    "--value-json" => allow(p, s, &|s: &str| {
                        s.split_once('=')
                            .is_some_and(|(name, tag)| !name.contains('{') && whole_tag(tag))
                    }),
                    _ => {}
                }
            }
        }
        let Some(dag) = t.get("dag") else { continue };
        for (j, task) in list(dag, "tasks") {
            let kp = at(&tp, &[key("dag"), key("tasks"), PathSeg::Index(j)]);
            allow(
                at(&kp, &[key("withParam")]),
                task["withParam"].as_str(),
                &whole_tag,
            );
            allow(at(&kp, &[key("when")]), task["when"].as_str(), &when_shape);
            let Some(args) = task.get("arguments") else {
                continue;
            };
            for (k, a) in list(args, "parameters") {
                let p = at(
                    &kp,
                    &[
                        key("arguments"),
                        key("parameters"),
                        PathSeg::Index(k),
                        key("value"),
                    ],
                );
                allow(p, a["value"].as_str(), &whole_tag);
            }
            for (k, a) in list(args, "artifacts") {
                let p = at(
                    &kp,
                    &[
                        key("arguments"),
                        key("artifacts"),
                        PathSeg::Index(k),
                        key("from"),
                    ],
                );
                allow(p, a["from"].as_str(), &whole_tag);
            }
        }
    }
    ok
}

/// Every `{{` of an exported manifest that is not one of the export's own tags.
pub fn stray_tags(manifest: &Value) -> Vec<Error> {
    let ok = own_tags(manifest);
    string_leaves(manifest, &FieldPath::root())
        .into_iter()
        .filter(|(path, s)| s.contains("{{") && !ok.contains(path))
        .map(|(path, s)| {
            Error::new(
                ARGO,
                ErrorKind::Invalid,
                format!("`{s}` holds `{{{{` where the export writes no tag of its own: Argo would replace it"),
            )
            .at_path(&path)
            .with_hint("user text (values, defaults, file names, ids, directories) must reach a manifest encoded, with no `{{`")
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn shapes() {
        assert!(whole_tag("{{workflow.parameters.in-a_b}}"));
        assert!(!whole_tag("{{ x }}"));
        assert!(!whole_tag("a{{x}}"));
        assert!(!whole_tag("{{=1+1}}"));
        assert!(when_shape("'{{tasks.a.outputs.parameters.next}}' == 'b' || '{{tasks.c.outputs.parameters.next}}' == 'b'"));
        assert!(!when_shape(
            "'{{tasks.a.outputs.parameters.next}}' == '{{workflow.name}}'"
        ));
    }

    #[test]
    fn a_tag_anywhere_else_is_refused() {
        let manifest = json!({"spec": {"arguments": {"parameters": [{"name": "t", "value": "{{workflow.name}}"}]},
            "templates": [{"name": "a", "container": {"args": ["--as", "{{workflow.name}}", "--run-id", "{{workflow.name}}"], "workingDir": "/{{x}}"}}]}});
        let errors: Vec<String> = stray_tags(&manifest)
            .iter()
            .map(|e| e.to_string())
            .collect();
        assert_eq!(errors, [
            "argo error at spec.arguments.parameters[0].value: `{{workflow.name}}` holds `{{` where the export writes no tag of its own: Argo would replace it (hint: user text (values, defaults, file names, ids, directories) must reach a manifest encoded, with no `{{`)",
            "argo error at spec.templates[0].container.args[1]: `{{workflow.name}}` holds `{{` where the export writes no tag of its own: Argo would replace it (hint: user text (values, defaults, file names, ids, directories) must reach a manifest encoded, with no `{{`)",
            "argo error at spec.templates[0].container.workingDir: `/{{x}}` holds `{{` where the export writes no tag of its own: Argo would replace it (hint: user text (values, defaults, file names, ids, directories) must reach a manifest encoded, with no `{{`)",
        ]);
    }
}
