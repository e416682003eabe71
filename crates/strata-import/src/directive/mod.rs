//! Directives: Python-era Markdown with a ```` ```xml <directive> ```` block (MAPPING §6) and
//! HEAD Markdown with YAML front matter (§7) become strata directives, `directives/<id>.md`:
//! YAML front matter opening the file, then the body (the prompt), whose templates are
//! rewritten so that strata's stages 1–2 render what RyeOS rendered and leave literal what
//! RyeOS left literal (§8).

mod body;
mod expr;
mod head;
mod python;
#[cfg(test)]
mod tests;
mod xml;

use std::collections::BTreeSet;

use serde_json::{Map, Value};
use strata_core::shown;

use crate::model::{Catalog, FileImport};
use crate::position::leading_signature_len;
use crate::util::named_list;

/// The input types strata's directives accept (docs/directives.md "Inputs").
const INPUT_TYPES: [&str; 6] = ["string", "integer", "number", "boolean", "array", "object"];

/// Converts the RyeOS directive `text` (at `source`, relative to the RyeOS project; id
/// `rel_id`, its path under `.ai/directives/` without `.md`) into `directives/<rel_id>.md`.
/// The era is told by the file itself: YAML front matter (after an optional signature
/// comment) is HEAD, anything else must hold a ```` ```xml <directive> ```` block.
pub fn import_directive(source: &str, rel_id: &str, text: &str, catalog: &Catalog) -> FileImport {
    // Directives call no tools once imported (their `rye_execute(…)` calls are prompt text
    // for an LLM), so nothing needs resolving against the catalog.
    let _ = catalog;
    let mut out = FileImport::imported(source);
    let start = leading_signature_len(text);
    let rest = &text[start..];
    let converted = if rest.starts_with("---\n") || rest.starts_with("---\r\n") {
        head::head(&mut out, rel_id, text, start)
    } else {
        python::python_era(&mut out, text, start)
    };
    out.warnings.sort_by_key(|w| (w.line, w.column));
    match converted {
        Ok(contents) => {
            out.write(format!("directives/{rel_id}.md"), contents);
            out
        }
        Err((code, message)) => out.refuse(code, message),
    }
}

type Refused = (&'static str, String);

/// The directive file: the front matter (`front`, then the inputs, model and limits, those
/// given) and the body.
fn assemble(
    mut front: Map<String, Value>,
    inputs: Vec<Map<String, Value>>,
    model: Option<Value>,
    limits: Map<String, Value>,
    body: &str,
) -> String {
    if !inputs.is_empty() {
        let inputs = inputs.into_iter().map(Value::Object).collect();
        front.insert("inputs".into(), Value::Array(inputs));
    }
    if let Some(model) = model {
        front.insert("model".into(), model);
    }
    if !limits.is_empty() {
        front.insert("limits".into(), Value::Object(limits));
    }
    let yaml = strata_doc::to_yaml(&Value::Object(front));
    let body = body.trim_matches('\n');
    if body.is_empty() {
        format!("---\n{yaml}---\n")
    } else {
        format!("---\n{yaml}---\n{body}\n")
    }
}

/// Whether an input declared `name` can be kept: a name of letters, digits and `_`, not
/// declared before (else a warning at `here` says why it is dropped).
fn new_input(
    out: &mut FileImport,
    name: &str,
    declared: &BTreeSet<String>,
    here: impl Fn() -> (usize, usize),
) -> bool {
    let message =
        if name.is_empty() || !name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_') {
            format!(
                "input name `{}` is not letters, digits and `_`: dropped",
                shown(name)
            )
        } else if declared.contains(name) {
            format!(
                "input `{}` is declared twice: the second declaration is dropped",
                shown(name)
            )
        } else {
            return true;
        };
    out.warn_with("IMP-D-input", message, here);
    false
}

/// The type of input `name` declared `ty`: itself when strata knows it, else `string` (with a
/// warning at `here`).
fn input_type<'t>(
    out: &mut FileImport,
    name: &str,
    ty: &'t str,
    here: impl Fn() -> (usize, usize),
) -> &'t str {
    if INPUT_TYPES.contains(&ty) {
        return ty;
    }
    out.warn_with(
        "IMP-D-input",
        format!(
            "input `{}` has type `{}`, which strata does not know: declared as `string`",
            shown(name),
            shown(ty)
        ),
        here,
    );
    "string"
}

/// Warns (at `here`) of the limits dropped because only an LLM thread had them, if any.
fn llm_limits_dropped(
    out: &mut FileImport,
    dropped: Vec<String>,
    here: impl Fn() -> (usize, usize),
) {
    if !dropped.is_empty() {
        out.warn_with(
            "IMP-D-limits-llm",
            format!(
                "limits [{}] dropped: strata runs no LLM",
                named_list(dropped)
            ),
            here,
        );
    }
}
