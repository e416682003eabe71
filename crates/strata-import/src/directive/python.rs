//! Python-era directives (MAPPING §6): the ```` ```xml <directive> ```` block becomes the
//! front matter — name, version, description, model, inputs, limits — and the prose around it
//! the body.

use std::collections::BTreeSet;

use serde_json::{Map, Number, Value};
use strata_core::shown;

use super::body::{body_text, escape_description, Era, Undeclared};
use super::xml;
use super::{assemble, input_type, llm_limits_dropped, new_input, Refused};
use crate::model::FileImport;
use crate::position::position;
use crate::util::string;

/// The elements of a Python-era `<metadata>` (also found directly under `<directive>`).
const METADATA: [&str; 8] = [
    "description",
    "category",
    "author",
    "version",
    "model",
    "limits",
    "permissions",
    "context",
];

/// The strata directive of a Python-era `text` (its signature comments end at `start`), or
/// the reason it cannot be one.
pub(super) fn python_era(
    out: &mut FileImport,
    text: &str,
    start: usize,
) -> Result<String, Refused> {
    let Some((fence_start, block_start, block_end, fence_end)) = xml_block(text, start) else {
        return Err((
            "IMP-D-xml",
            "no ```xml <directive> block and no YAML front matter: not a RyeOS directive".into(),
        ));
    };
    let block = &text[block_start..block_end];
    let root = xml::parse(block, block_start).map_err(|(message, at)| {
        let (line, column) = position(text, at);
        (
            "IMP-D-xml",
            format!("the <directive> block does not parse at {line}:{column}: {message}"),
        )
    })?;
    if root.name != "directive" {
        return Err((
            "IMP-D-xml",
            format!(
                "the ```xml block holds <{}>, not <directive>",
                shown(&root.name)
            ),
        ));
    }
    out.rewrite("```xml <directive> block → YAML front matter");
    let mut front = Map::new();
    let at = |offset: usize| position(text, offset);

    // <directive name= version= extends=>
    let name = root.attr("name").unwrap_or_default().to_owned();
    if name.is_empty() {
        return Err(("IMP-D-xml", "<directive> has no `name`".into()));
    }
    front.insert("name".into(), string(&name));
    let mut description: Option<String> = None;
    let mut version: Option<String> = root.attr("version").map(str::to_owned);
    let mut inputs: Vec<Map<String, Value>> = Vec::new();
    let mut declared: BTreeSet<String> = BTreeSet::new();
    let mut model: Option<Map<String, Value>> = None;
    let mut limits = Map::new();
    for (key, value) in &root.attrs {
        match key.as_str() {
            "name" | "version" => {}
            "extends" => {
                let here = || at(root.offset);
                out.warn_with(
                    "IMP-D-extends",
                    format!("`extends=\"{}\"` dropped: strata directives have no inheritance (the parent's context, permissions and limits are not merged in)", shown(value)),
                    here,
                );
            }
            other => {
                let here = || at(root.offset);
                out.warn_with(
                    "IMP-D-attr",
                    format!(
                        "attribute `{}=\"{}\"` of <directive> has no strata equivalent: dropped",
                        shown(other),
                        shown(value)
                    ),
                    here,
                );
            }
        }
    }
    for child in root.elements() {
        match child.name.as_str() {
            name if name == "metadata" || METADATA.contains(&name) => {
                // Metadata elements are also accepted directly under <directive>.
                let list: Vec<&xml::Element> = if name == "metadata" {
                    child.elements().collect()
                } else {
                    vec![child]
                };
                for m in list {
                    let here = || at(m.offset);
                    match m.name.as_str() {
                        "description" => description = Some(m.text()),
                        "category" | "author" => {}
                        "version" => version = Some(m.text()),
                        "model" => {
                            let mut map = Map::new();
                            for (k, v) in &m.attrs {
                                map.insert(k.clone(), string(v));
                            }
                            let note = m.text();
                            if !note.is_empty() {
                                map.insert("description".into(), string(&note));
                                out.rewrite(format!(
                                    "<model> text \"{}\" → model.description",
                                    shown(&note)
                                ));
                            }
                            model = Some(map);
                        }
                        "limits" => limits_element(out, m, &mut limits, here),
                        "permissions" => {
                            let message = if m.children.is_empty() && m.attrs.is_empty() {
                                "empty <permissions /> dropped: RyeOS granted this directive no capability, strata enforces none (its actions may do what RyeOS denied)".to_owned()
                            } else {
                                format!(
                                    "<permissions> ({}) dropped: strata enforces no capabilities",
                                    m.summary()
                                )
                            };
                            out.warn_with("IMP-permissions", message, here);
                        }
                        "context" => out.warn_with(
                            "IMP-D-context",
                            format!(
                                "<context> knowledge injection ({}) dropped: strata injects no knowledge into prompts",
                                m.summary()
                            ),
                            here,
                        ),
                        other => out.warn_with(
                            "IMP-D-element",
                            format!("<{}> in <{name}> has no strata equivalent: dropped", shown(other)),
                            here,
                        ),
                    }
                }
            }
            "inputs" => {
                for i in child.elements() {
                    let here = || at(i.offset);
                    if i.name != "input" {
                        out.warn_with(
                            "IMP-D-element",
                            format!("<{}> in <inputs> is not an input: dropped", shown(&i.name)),
                            here,
                        );
                        continue;
                    }
                    if let Some(spec) = input_element(out, i, &declared, here) {
                        declared.insert(i.attr("name").unwrap_or_default().to_owned());
                        inputs.push(spec);
                    }
                }
            }
            "outputs" => {
                let here = || at(child.offset);
                out.warn_with(
                    "IMP-D-outputs",
                    format!(
                        "<outputs> ({}) dropped: strata directives declare no outputs",
                        child.summary()
                    ),
                    here,
                );
            }
            other => {
                let here = || at(child.offset);
                out.warn_with(
                    "IMP-D-element",
                    format!(
                        "<{}> in <directive> has no strata equivalent: dropped",
                        shown(other)
                    ),
                    here,
                );
            }
        }
    }
    if let Some(d) = &description {
        let escaped = escape_description(d);
        if escaped != *d {
            out.rewrite("description: `${`/`{input:` escaped (RyeOS did not render descriptions)");
        }
        front.insert("description".into(), string(&escaped));
    }
    if let Some(v) = version {
        front.insert("version".into(), string(&v));
    }

    // The body: the prose before the block and everything after it.
    let before = &text[start..fence_start];
    let after = &text[fence_end..];
    let body_start_after = fence_end;
    let mut body = String::new();
    let mut undeclared = Undeclared::default();
    let pre = body_text(
        out,
        text,
        start,
        before,
        &declared,
        Era::Python,
        &mut undeclared,
    );
    let post = body_text(
        out,
        text,
        body_start_after,
        after,
        &declared,
        Era::Python,
        &mut undeclared,
    );
    let pre = pre.trim_matches('\n');
    if !pre.is_empty() {
        body.push_str(pre);
        body.push_str("\n\n");
    }
    body.push_str(post.trim_matches('\n'));
    undeclared.declare(out, text, &mut inputs);
    Ok(assemble(
        front,
        inputs,
        model.map(Value::Object),
        limits,
        &body,
    ))
}

/// `<limits turns= duration_seconds= tokens= spend= spawns= depth=>`.
fn limits_element(
    out: &mut FileImport,
    m: &xml::Element,
    limits: &mut Map<String, Value>,
    here: impl Fn() -> (usize, usize) + Copy,
) {
    let mut dropped = Vec::new();
    for (k, v) in &m.attrs {
        match k.as_str() {
            "turns" => match v.trim().parse::<u64>() {
                Ok(n) => {
                    limits.insert("turns".into(), Value::Number(n.into()));
                    out.warn_with(
                        "IMP-D-limits-turns",
                        format!("limits turns={n} became `limits.turns: {n}`: RyeOS counted LLM turns, strata caps how many actions run"),
                        here,
                    );
                }
                Err(_) => out.warn_with(
                    "IMP-D-limits-turns",
                    format!("limits turns=\"{}\" is not a whole number: dropped", shown(v)),
                    here,
                ),
            },
            "duration_seconds" => match number_value(v.trim()) {
                Some(n) if n.as_f64().is_some_and(|x| x > 0.0 && x <= 604_800.0) => {
                    limits.insert("timeout".into(), n);
                    out.rewrite(format!(
                        "limits duration_seconds={} → limits.timeout: {}",
                        shown(v),
                        shown(v.trim())
                    ));
                }
                _ => out.warn_with(
                    "IMP-D-limits-llm",
                    format!("limits duration_seconds=\"{}\" is not a number of seconds strata accepts (more than 0, at most a week): dropped", shown(v)),
                    here,
                ),
            },
            _ => dropped.push(format!("{}={}", shown(k), shown(v))),
        }
    }
    llm_limits_dropped(out, dropped, here);
}

/// A number written `text`: a whole number when it is one (past 64 bits, its digits kept),
/// else a float; `None` when it is no number or not a finite one.
fn number_value(text: &str) -> Option<Value> {
    let whole = !text.is_empty() && text.bytes().all(|b| b.is_ascii_digit());
    match text.parse::<u64>() {
        Ok(n) => Some(Value::from(n)),
        Err(_) if whole => text.parse::<Number>().ok().map(Value::Number),
        Err(_) => text
            .parse::<f64>()
            .ok()
            .and_then(Number::from_f64)
            .map(Value::Number),
    }
}

/// `<input name type required default>description</input>`; `None` when it cannot be kept.
fn input_element(
    out: &mut FileImport,
    i: &xml::Element,
    declared: &BTreeSet<String>,
    here: impl Fn() -> (usize, usize) + Copy,
) -> Option<Map<String, Value>> {
    let name = i.attr("name").unwrap_or_default();
    if !new_input(out, name, declared, here) {
        return None;
    }
    let mut spec = Map::new();
    spec.insert("name".into(), string(name));
    let ty = input_type(out, name, i.attr("type").unwrap_or("string"), here);
    spec.insert("type".into(), string(ty));
    let required = i.attr("required").is_some_and(|r| r.trim() == "true");
    spec.insert("required".into(), Value::Bool(required));
    for (k, v) in &i.attrs {
        match k.as_str() {
            "name" | "type" | "required" => {}
            "default" => match typed_default(ty, v) {
                Some(d) => {
                    spec.insert("default".into(), d);
                }
                None => out.warn_with(
                    "IMP-D-input",
                    format!(
                        "default \"{}\" of input `{}` is not a {ty}: dropped",
                        shown(v),
                        shown(name)
                    ),
                    here,
                ),
            },
            other => out.warn_with(
                "IMP-D-input",
                format!(
                    "attribute `{}=\"{}\"` of input `{}` has no strata equivalent: dropped",
                    shown(other),
                    shown(v),
                    shown(name)
                ),
                here,
            ),
        }
    }
    let description = i.text();
    if !description.is_empty() {
        spec.insert("description".into(), string(&description));
    }
    Some(spec)
}

/// A default given as XML text, typed by the input's type.
fn typed_default(ty: &str, v: &str) -> Option<Value> {
    match ty {
        "string" => Some(string(v)),
        "integer" => v
            .trim()
            .parse::<i64>()
            .ok()
            .map(|n| Value::Number(n.into())),
        "number" => number_value(v.trim()),
        "boolean" => match v.trim() {
            "true" => Some(Value::Bool(true)),
            "false" => Some(Value::Bool(false)),
            _ => None,
        },
        _ => serde_json::from_str::<Value>(v).ok().filter(|j| match ty {
            "array" => j.is_array(),
            _ => j.is_object(),
        }),
    }
}

/// The first ```` ```xml ```` fence holding `<directive`: (fence line start, block start,
/// block end, end of the closing fence line).
fn xml_block(text: &str, from: usize) -> Option<(usize, usize, usize, usize)> {
    let mut offset = from;
    let mut open: Option<(usize, usize)> = None;
    for line in text[from..].split_inclusive('\n') {
        let trimmed = line.trim();
        match open {
            None if trimmed.starts_with("```xml") => open = Some((offset, offset + line.len())),
            Some((fence, body)) if trimmed == "```" => {
                if text[body..offset].contains("<directive") {
                    return Some((fence, body, offset, offset + line.len()));
                }
                open = None;
            }
            _ => {}
        }
        offset += line.len();
    }
    None
}
