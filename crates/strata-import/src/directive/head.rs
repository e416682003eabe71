//! HEAD directives (MAPPING §7): the YAML front matter is kept for what strata's directives
//! have (name, version, description, model, inputs, limits) and the rest dropped with a
//! warning; the body's expressions are rewritten.

use std::collections::BTreeSet;

use serde_json::{Map, Value};
use strata_core::shown;

use super::body::{body_text, escape_description, Era, Undeclared};
use super::{assemble, input_type, llm_limits_dropped, new_input, Refused};
use crate::model::FileImport;
use crate::position::{position, yaml_key_position};
use crate::util::{compact, named_list, string, text_of};

/// The strata directive of a HEAD `text` (its signature comments end at `start`; its id
/// `rel_id` names it when its front matter does not), or the reason it cannot be one.
pub(super) fn head(
    out: &mut FileImport,
    rel_id: &str,
    text: &str,
    start: usize,
) -> Result<String, Refused> {
    let rest = &text[start..];
    let first_nl = rest.find('\n').map_or(rest.len(), |n| n + 1);
    let yaml_start = start + first_nl;
    let mut offset = yaml_start;
    let mut yaml_end = None;
    for line in text[yaml_start..].split_inclusive('\n') {
        if line.trim_end() == "---" {
            yaml_end = Some((offset, offset + line.len()));
            break;
        }
        offset += line.len();
    }
    let Some((yaml_end, body_start)) = yaml_end else {
        return Err((
            "IMP-D-yaml",
            "the front matter has no closing `---` line".into(),
        ));
    };
    let yaml = &text[yaml_start..yaml_end];
    let first_line = position(text, yaml_start).0;
    let value = crate::yaml::read_from(yaml, first_line).map_err(|why| {
        (
            "IMP-D-yaml",
            format!("the front matter cannot be read: {why}"),
        )
    })?;
    let map = match value {
        Value::Object(map) => map,
        Value::Null => Map::new(),
        _ => return Err(("IMP-D-yaml", "the front matter is not a map".into())),
    };
    if start > 0 {
        out.rewrite("signature comment before the front matter removed");
    }
    let at = |path: &[&str]| yaml_key_position(text, yaml_start, path);
    let mut front = Map::new();
    let stem = rel_id.rsplit('/').next().unwrap_or(rel_id).to_owned();
    let name = match map.get("name") {
        Some(Value::String(n)) if !n.is_empty() => n.clone(),
        _ => {
            out.rewrite(format!("no `name:` → name: {stem} (the file stem)"));
            stem
        }
    };
    front.insert("name".into(), string(&name));
    let mut inputs: Vec<Map<String, Value>> = Vec::new();
    let mut declared: BTreeSet<String> = BTreeSet::new();
    let mut model = None;
    let mut limits = Map::new();
    let mut description = None;
    let mut version = None;
    for (k, v) in &map {
        let key = k.as_str();
        let here = || at(&[key]);
        match key {
            "name" | "category" => {}
            "description" => description = Some(text_of(v)),
            "version" => version = Some(text_of(v)),
            "model" => model = Some(v.clone()),
            "limits" => head_limits(out, text, yaml_start, v, &mut limits),
            "inputs" => {
                let Value::Array(list) = v else {
                    out.warn_with("IMP-D-input", "`inputs:` is not a list: dropped", here);
                    continue;
                };
                for (idx, item) in list.iter().enumerate() {
                    let Value::Object(spec) = item else {
                        out.warn_with(
                            "IMP-D-input",
                            format!("inputs[{idx}] is not a map: dropped"),
                            here,
                        );
                        continue;
                    };
                    if let Some(spec) = head_input(out, spec, &declared, here) {
                        declared.insert(spec.get("name").and_then(Value::as_str).unwrap_or_default().to_owned());
                        inputs.push(spec);
                    }
                }
            }
            "continuation" => out.warn_with(
                "IMP-D-continuation",
                format!("`continuation: {}` dropped: strata runs no LLM thread, so there is no context window to continue", compact(v)),
                here,
            ),
            "requires" => out.warn_with(
                "IMP-permissions",
                format!("`requires: {}` dropped: strata enforces no capabilities", compact(v)),
                here,
            ),
            "context" => out.warn_with(
                "IMP-D-context",
                format!("`context: {}` knowledge injection dropped: strata injects no knowledge into prompts", compact(v)),
                here,
            ),
            "hooks" => {
                let ids: Vec<String> = match v {
                    Value::Array(list) => list
                        .iter()
                        .map(|h| {
                            let id = h.get("id").map(text_of).unwrap_or_else(|| "?".into());
                            let event = h.get("event").map(text_of).unwrap_or_else(|| "?".into());
                            format!("`{}` on `{}`", shown(&id), shown(&event))
                        })
                        .collect(),
                    _ => vec![compact(v)],
                };
                out.warn_with(
                    "IMP-D-hooks",
                    format!("hooks {} dropped: they run a directive inline on a RyeOS thread event; strata hooks call tools on directive events", named_list(ids)),
                    here,
                );
            }
            other => out.warn_with(
                "IMP-D-key",
                format!("`{}: {}` has no strata equivalent: dropped", shown(other), compact(v)),
                here,
            ),
        }
    }
    if let Some(d) = description {
        let escaped = escape_description(&d);
        if escaped != d {
            out.rewrite("description: `${`/`{input:` escaped (RyeOS did not render descriptions)");
        }
        front.insert("description".into(), string(&escaped));
    }
    if let Some(v) = version {
        front.insert("version".into(), string(&v));
    }
    let mut undeclared = Undeclared::default();
    let body = body_text(
        out,
        text,
        body_start,
        &text[body_start..],
        &declared,
        Era::Head,
        &mut undeclared,
    );
    undeclared.declare(out, text, &mut inputs);
    Ok(assemble(front, inputs, model, limits, &body))
}

fn head_limits(
    out: &mut FileImport,
    text: &str,
    yaml_start: usize,
    v: &Value,
    limits: &mut Map<String, Value>,
) {
    let Value::Object(m) = v else {
        let here = || yaml_key_position(text, yaml_start, &["limits"]);
        out.warn_with(
            "IMP-D-limits-llm",
            format!("`limits: {}` is not a map: dropped", compact(v)),
            here,
        );
        return;
    };
    let mut dropped = Vec::new();
    let limits_here = || yaml_key_position(text, yaml_start, &["limits"]);
    for (k, val) in m {
        let key = k.as_str();
        let here = || yaml_key_position(text, yaml_start, &["limits", key]);
        match key {
            "turns" => match val.as_u64() {
                Some(n) => {
                    limits.insert("turns".into(), Value::Number(n.into()));
                    out.warn_with(
                        "IMP-D-limits-turns",
                        format!("limits.turns {n} kept: RyeOS counted LLM turns, strata caps how many actions run"),
                        here,
                    );
                }
                None => out.warn_with(
                    "IMP-D-limits-turns",
                    format!(
                        "limits.turns {} is not a whole number: dropped",
                        compact(val)
                    ),
                    here,
                ),
            },
            "duration_seconds" | "timeout" => match val.as_f64() {
                Some(x) if x > 0.0 && x <= 604_800.0 => {
                    limits.insert("timeout".into(), val.clone());
                    out.rewrite(format!("limits.{key} → limits.timeout"));
                }
                _ => dropped.push(format!("{}: {}", shown(key), compact(val))),
            },
            _ => dropped.push(format!("{}: {}", shown(key), compact(val))),
        }
    }
    llm_limits_dropped(out, dropped, limits_here);
}

fn head_input(
    out: &mut FileImport,
    spec: &Map<String, Value>,
    declared: &BTreeSet<String>,
    here: impl Fn() -> (usize, usize) + Copy,
) -> Option<Map<String, Value>> {
    let name = spec.get("name").map(text_of).unwrap_or_default();
    if !new_input(out, &name, declared, here) {
        return None;
    }
    let mut outp = Map::new();
    outp.insert("name".into(), string(&name));
    let ty = spec
        .get("type")
        .map(text_of)
        .unwrap_or_else(|| "string".into());
    outp.insert("type".into(), string(input_type(out, &name, &ty, here)));
    for (k, v) in spec {
        let key = k.as_str();
        match key {
            "name" | "type" => {}
            "required" => {
                outp.insert("required".into(), Value::Bool(v.as_bool().unwrap_or(false)));
            }
            "default" | "description" => {
                outp.insert(key.into(), v.clone());
            }
            other => out.warn_with(
                "IMP-D-input",
                format!(
                    "`{}` of input `{}` has no strata equivalent: dropped",
                    shown(other),
                    shown(&name)
                ),
                here,
            ),
        }
    }
    Some(outp)
}
