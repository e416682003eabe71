//! Directives: Python-era Markdown with a ```` ```xml <directive> ```` block (MAPPING §6) and
//! HEAD Markdown with YAML front matter (§7) become strata directives, `directives/<id>.md`:
//! YAML front matter opening the file, then the body (the prompt), whose templates are
//! rewritten so that strata's stages 1–2 render what RyeOS rendered and leave literal what
//! RyeOS left literal (§8).

use std::collections::BTreeSet;

use serde_json::{Map, Number, Value};
use strata_core::{shown, SHOWN_CHARS};

use crate::model::{Catalog, FileImport};
use crate::position::{leading_signature_len, position, yaml_key_position};
use crate::util::{compact, named_list, string, text_of};

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
        head(&mut out, rel_id, text, start)
    } else {
        python_era(&mut out, text, start)
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

/// Serialises the front matter and joins it with the body.
fn assemble(front: Map<String, Value>, body: &str) -> String {
    let yaml = strata_doc::to_yaml(&Value::Object(front));
    let body = body.trim_matches('\n');
    if body.is_empty() {
        format!("---\n{yaml}---\n")
    } else {
        format!("---\n{yaml}---\n{body}\n")
    }
}

// ---------------------------------------------------------------------------------------
// Python era (§6)
// ---------------------------------------------------------------------------------------

fn python_era(out: &mut FileImport, text: &str, start: usize) -> Result<String, Refused> {
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
                            if !m.children.is_empty() || !m.attrs.is_empty() {
                                out.warn_with(
                                    "IMP-permissions",
                                    format!(
                                        "<permissions> ({}) dropped: strata enforces no capabilities",
                                        m.summary()
                                    ),
                                    here,
                                );
                            }
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
    if !inputs.is_empty() {
        front.insert(
            "inputs".into(),
            Value::Array(inputs.into_iter().map(Value::Object).collect()),
        );
    }
    if let Some(m) = model {
        front.insert("model".into(), Value::Object(m));
    }
    if !limits.is_empty() {
        front.insert("limits".into(), Value::Object(limits));
    }
    Ok(assemble(front, &body))
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

/// A number written `text`: a whole number when it is one, else a float; `None` when it is
/// no number or not a finite one.
fn number_value(text: &str) -> Option<Value> {
    match text.parse::<u64>() {
        Ok(n) => Some(Value::from(n)),
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
    if name.is_empty() || !name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_') {
        out.warn_with(
            "IMP-D-input",
            format!(
                "input name `{}` is not letters, digits and `_`: dropped",
                shown(name)
            ),
            here,
        );
        return None;
    }
    if declared.contains(name) {
        out.warn_with(
            "IMP-D-input",
            format!(
                "input `{}` is declared twice: the second declaration is dropped",
                shown(name)
            ),
            here,
        );
        return None;
    }
    let mut spec = Map::new();
    spec.insert("name".into(), string(name));
    let ty = i.attr("type").unwrap_or("string");
    let ty = if INPUT_TYPES.contains(&ty) {
        ty
    } else {
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
    };
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

/// Escapes a description: RyeOS never rendered it, strata renders it with stages 1–2.
fn escape_description(d: &str) -> String {
    let mut outp = String::with_capacity(d.len());
    let mut rest = d;
    while let Some(i) = rest.find(['$', '{']) {
        outp.push_str(&rest[..i]);
        let tail = &rest[i..];
        if let Some(after) = tail.strip_prefix("${") {
            outp.push_str("$${");
            rest = after;
        } else if let Some(len) = simple_input_ref(tail) {
            outp.push('{');
            outp.push_str(&tail[..len]);
            outp.push('}');
            rest = &tail[len..];
        } else {
            let ch = &tail[..1];
            outp.push_str(ch);
            rest = &tail[1..];
        }
    }
    outp.push_str(rest);
    outp
}

/// Whether `t` starts with a layer-I reference stage 1 accepts (`{input:key}`,
/// `{input:key?}`, `{input:key:default}`, `{input:key|default}`); `closed` tells whether a
/// `}` follows anywhere in the text (a default runs to it).
fn valid_input_ref(t: &str, closed: bool) -> bool {
    let Some(rest) = t.strip_prefix("{input:") else {
        return false;
    };
    let n = rest
        .bytes()
        .take_while(|b| b.is_ascii_alphanumeric() || *b == b'_')
        .count();
    let after = &rest[n..];
    n > 0
        && (after.starts_with('}')
            || after.starts_with("?}")
            || ((after.starts_with(':') || after.starts_with('|')) && closed))
}

/// The length of `{input:key}` / `{input:key?}` at the start of `t` (the forms `{{…}}`
/// escapes).
fn simple_input_ref(t: &str) -> Option<usize> {
    let rest = t.strip_prefix("{input:")?;
    let n = rest
        .bytes()
        .take_while(|b| b.is_ascii_alphanumeric() || *b == b'_')
        .count();
    if n == 0 {
        return None;
    }
    let after = &rest[n..];
    if after.starts_with('}') {
        Some(7 + n + 1)
    } else if after.starts_with("?}") {
        Some(7 + n + 2)
    } else {
        None
    }
}

// ---------------------------------------------------------------------------------------
// Bodies (§6 D-input-ref … D-env-ref, §7 HD-inputs-ref … HD-expr, §8)
// ---------------------------------------------------------------------------------------

#[derive(Clone, Copy, PartialEq, Eq)]
enum Era {
    Python,
    Head,
}

/// Rewrites one stretch of body text that starts at `base` in the RyeOS file.
fn body_text(
    out: &mut FileImport,
    file: &str,
    base: usize,
    text: &str,
    declared: &BTreeSet<String>,
    era: Era,
    undeclared: &mut Undeclared,
) -> String {
    let mut outp = String::with_capacity(text.len());
    let bytes = text.as_bytes();
    let braces = Braces::of(text);
    let last_close = text.rfind('}');
    let mut i = 0;
    let mut escaped = 0usize;
    let mut envs: BTreeSet<String> = BTreeSet::new();
    while i < bytes.len() {
        let b = bytes[i];
        if b == b'$' && bytes.get(i + 1) == Some(&b'{') {
            // `${input:k}`: a `$` before a layer-I reference, rendered by stage 1 alone.
            if era == Era::Python && text[i + 1..].starts_with("{input:") {
                outp.push('$');
                i += 1;
                continue;
            }
            let Some(close) = braces.closing(i + 1) else {
                outp.push_str("$${");
                escaped += 1;
                i += 2;
                continue;
            };
            let inner = &text[i + 2..close];
            let here = || position(file, base + i);
            match era {
                Era::Python => {
                    if let Some(name) = input_path(inner).filter(|n| declared.contains(*n)) {
                        out.warn_with(
                            "IMP-D-inputs-dollar",
                            format!("`${{{}}}` kept: it reads input `{}`, but when the input is not given it now renders empty where RyeOS kept the text", shown(inner), shown(name)),
                            here,
                        );
                        outp.push_str(&text[i..=close]);
                    } else {
                        outp.push_str("$${");
                        outp.push_str(inner);
                        outp.push('}');
                        escaped += 1;
                    }
                }
                Era::Head => {
                    let expr = head_expression(out, inner, here);
                    match expr {
                        Some((expr, names)) => {
                            for n in names {
                                undeclared.note(declared, &n, base + i);
                            }
                            outp.push_str("${");
                            outp.push_str(&expr);
                            outp.push('}');
                        }
                        None => {
                            outp.push_str("$${");
                            outp.push_str(inner);
                            outp.push('}');
                            escaped += 1;
                        }
                    }
                }
            }
            i = close + 1;
            continue;
        }
        if b == b'{' {
            let tail = &text[i..];
            if let Some(key_text) = tail.strip_prefix("{input:") {
                let literal_brace = match era {
                    Era::Python => !valid_input_ref(tail, last_close.is_some_and(|c| c > i)),
                    Era::Head => simple_input_ref(tail).is_none(),
                };
                if literal_brace {
                    // Not a reference strata can read (or HEAD text): `${'{'}` renders the
                    // brace as data, so no `{input:` is left for stage 1 to reject or fill.
                    out.rewrite(format!(
                        "`{}` kept literal: its `{{` written `${{'{{'}}`",
                        reference_at(tail)
                    ));
                    outp.push_str("${'{'}");
                    i += 1;
                    continue;
                }
                match era {
                    Era::Python => {
                        let n = key_text
                            .bytes()
                            .take_while(|b| b.is_ascii_alphanumeric() || *b == b'_')
                            .count();
                        if n > 0 {
                            undeclared.note(declared, &key_text[..n], base + i);
                        }
                    }
                    Era::Head => {
                        // HEAD removed `{input:…}`: the text is literal there.
                        if let Some(len) = simple_input_ref(tail) {
                            outp.push('{');
                            outp.push_str(&tail[..len]);
                            outp.push('}');
                            let reference = shown(&tail[..len]);
                            out.rewrite(format!(
                                "`{reference}` escaped as `{{{reference}}}` (literal text in HEAD RyeOS)"
                            ));
                            i += len;
                            continue;
                        }
                    }
                }
            } else if tail.starts_with("{env:") {
                let reference = reference_at(tail);
                if !envs.contains(&reference) {
                    let here = || position(file, base + i);
                    out.warn_with(
                        "IMP-D-env",
                        format!("`{reference}` is left literal: RyeOS filled it from the environment, strata renders no environment variable in a directive body"),
                        here,
                    );
                    envs.insert(reference);
                }
            }
        }
        let ch_len = text[i..].chars().next().map_or(1, char::len_utf8);
        outp.push_str(&text[i..i + ch_len]);
        i += ch_len;
    }
    if escaped > 0 {
        out.rewrite(format!(
            "{escaped} `${{…}}` of the body escaped as `$${{…}}` (literal text in RyeOS)"
        ));
    }
    outp
}

/// The inputs a body reads that the directive does not declare: each once, in the order
/// first read, with the offset of that read.
#[derive(Default)]
struct Undeclared {
    names: BTreeSet<String>,
    reads: Vec<(String, usize)>,
}

impl Undeclared {
    /// Notes a read of input `name` at `offset`, unless it is declared or already noted.
    fn note(&mut self, declared: &BTreeSet<String>, name: &str, offset: usize) {
        if !declared.contains(name) && self.names.insert(name.to_owned()) {
            self.reads.push((name.to_owned(), offset));
        }
    }

    /// Declares every input noted as an optional string (else `strata check` reports R003
    /// and `strata run` refuses it), each with a warning at its first read in `file`.
    fn declare(self, out: &mut FileImport, file: &str, inputs: &mut Vec<Map<String, Value>>) {
        for (name, offset) in self.reads {
            let here = || position(file, offset);
            out.warn_with(
                "IMP-D-undeclared",
                format!("the body reads input `{}`, which the directive does not declare (RyeOS supplied it): declared as an optional string input", shown(&name)),
                here,
            );
            let mut spec = Map::new();
            spec.insert("name".into(), string(&name));
            spec.insert("type".into(), string("string"));
            spec.insert("required".into(), Value::Bool(false));
            inputs.push(spec);
        }
    }
}

/// Where each `{` of a text closes — the `}` that brings the braces opened since back to
/// none — found for all of them in one pass, with the text's line ends: a body's references
/// are matched without reading the text again for each.
struct Braces {
    /// `(open, close)` of every `{` that closes, by `open`.
    pairs: Vec<(usize, usize)>,
    /// The offset of every `\n`.
    newlines: Vec<usize>,
}

impl Braces {
    fn of(text: &str) -> Braces {
        let (mut open, mut pairs, mut newlines) = (Vec::new(), Vec::new(), Vec::new());
        for (k, b) in text.bytes().enumerate() {
            match b {
                b'{' => open.push(k),
                b'}' => pairs.extend(open.pop().map(|o| (o, k))),
                b'\n' => newlines.push(k),
                _ => {}
            }
        }
        pairs.sort_unstable();
        Braces { pairs, newlines }
    }

    /// The `}` closing the `{` at `open`, when it closes before a sixth line end (a
    /// reference spans a few lines at most; past that, the `{` is text).
    fn closing(&self, open: usize) -> Option<usize> {
        let at = self.pairs.binary_search_by_key(&open, |p| p.0).ok()?;
        let close = self.pairs[at].1;
        let before = |offset: usize| self.newlines.partition_point(|n| *n < offset);
        (before(close) - before(open) < 6).then_some(close)
    }
}

/// The reference opening `tail` (`{env:HOME}`), as a message quotes it: through its `}` when
/// that comes within the characters a message shows, else cut there.
fn reference_at(tail: &str) -> String {
    let mut end = tail.len();
    for (n, (k, c)) in tail.char_indices().enumerate() {
        if n > SHOWN_CHARS {
            end = k;
            break;
        }
        if c == '}' {
            end = k + 1;
            break;
        }
    }
    shown(&tail[..end])
}

/// `inputs.<name>` (optionally deeper: `inputs.<name>.x`) → `<name>`.
fn input_path(inner: &str) -> Option<&str> {
    let p = inner.trim().strip_prefix("inputs.")?;
    let n = p
        .bytes()
        .take_while(|b| b.is_ascii_alphanumeric() || *b == b'_')
        .count();
    let rest = &p[n..];
    (n > 0
        && rest
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'.'))
    .then(|| &p[..n])
}

/// A HEAD rye-expr expression in strata's language, with the inputs it reads; `None` when it
/// reads a namespace other than `inputs` (then it is kept as literal text).
fn head_expression(
    out: &mut FileImport,
    inner: &str,
    here: impl Fn() -> (usize, usize) + Copy,
) -> Option<(String, Vec<String>)> {
    let mut expr = inner.trim().to_owned();
    // `a || b` (rye-expr's fallback) → `a ?? b`; `x | f` → `f(x)`.
    if expr.contains("||") {
        let new = expr.replace("||", "??");
        out.rewrite(format!("`${{{}}}` → `${{{}}}`", shown(&expr), shown(&new)));
        expr = new;
    }
    if let Some((value, f)) = split_filter(&expr) {
        let new = format!("{f}({value})");
        out.rewrite(format!("`${{{}}}` → `${{{}}}`", shown(&expr), shown(&new)));
        expr = new;
    }
    if expr
        .bytes()
        .next()
        .is_some_and(|b| b.is_ascii_digit() || b == b'+')
    {
        let new = format!("({expr})");
        out.rewrite(format!("`${{{}}}` → `${{{}}}` (an expression starting with a digit or `+` is literal text in strata)", shown(&expr), shown(&new)));
        expr = new;
    }
    let mut names = Vec::new();
    for (root, rest) in roots(&expr) {
        if root != "inputs" {
            out.warn_with(
                "IMP-D-expr",
                format!("`${{{}}}` reads `{}`, which a strata directive body does not have: kept as literal text", shown(inner), shown(&root)),
                here,
            );
            return None;
        }
        let n = rest
            .strip_prefix('.')
            .map(|r| {
                r.bytes()
                    .take_while(|b| b.is_ascii_alphanumeric() || *b == b'_')
                    .count()
            })
            .unwrap_or(0);
        if n > 0 {
            let name = rest[1..1 + n].to_owned();
            if !names.contains(&name) {
                names.push(name);
            }
        }
    }
    for f in ["json(", "keys(", "string("] {
        if contains_call(&expr, f) {
            out.warn_with(
                "IMP-D-json-order",
                format!("`${{{}}}`: strata's `{}` keeps the objects' key order where HEAD RyeOS sorted the keys", shown(inner), &f[..f.len() - 1]),
                here,
            );
            break;
        }
    }
    if outside_strings(&expr).contains('/') {
        out.warn_with(
            "IMP-D-expr",
            format!("`${{{}}}`: `/` of two integers is integer division in strata (HEAD RyeOS gave a float)", shown(inner)),
            here,
        );
    }
    Some((expr, names))
}

/// `x | f` at the top level (one `|`, a bare function name after it).
fn split_filter(expr: &str) -> Option<(String, String)> {
    let plain = outside_strings(expr);
    let idx = plain.find('|')?;
    if plain[idx + 1..].contains('|') {
        return None;
    }
    let f = expr[idx + 1..].trim();
    if f.is_empty() || !f.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_') {
        return None;
    }
    Some((expr[..idx].trim().to_owned(), f.to_owned()))
}

/// `expr` with the contents of string literals blanked out (same length).
fn outside_strings(expr: &str) -> String {
    let mut outp = String::with_capacity(expr.len());
    let mut quote: Option<char> = None;
    for ch in expr.chars() {
        match quote {
            Some(q) if ch == q => {
                quote = None;
                outp.push(ch);
            }
            Some(_) => outp.extend(std::iter::repeat_n(' ', ch.len_utf8())),
            None => {
                if ch == '\'' || ch == '"' {
                    quote = Some(ch);
                }
                outp.push(ch);
            }
        }
    }
    outp
}

fn contains_call(expr: &str, f: &str) -> bool {
    let plain = outside_strings(expr);
    plain.match_indices(f).any(|(i, _)| {
        i == 0
            || !plain.as_bytes()[i - 1].is_ascii_alphanumeric() && plain.as_bytes()[i - 1] != b'_'
    })
}

/// The roots of the paths an expression reads, each with the text after it.
fn roots(expr: &str) -> Vec<(String, &str)> {
    let plain = outside_strings(expr);
    let bytes = plain.as_bytes();
    let mut found = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        if b.is_ascii_alphabetic() || b == b'_' {
            let start = i;
            while i < bytes.len() && (bytes[i].is_ascii_alphanumeric() || bytes[i] == b'_') {
                i += 1;
            }
            let word = &plain[start..i];
            let prev = plain[..start].trim_end().as_bytes().last().copied();
            let next = plain[i..].trim_start().as_bytes().first().copied();
            let is_root = prev != Some(b'.')
                && next != Some(b'(')
                && !matches!(word, "true" | "false" | "null" | "in");
            if is_root {
                found.push((word.to_owned(), &expr[i..]));
            }
            continue;
        }
        if b.is_ascii_digit() {
            while i < bytes.len() && (bytes[i].is_ascii_alphanumeric() || bytes[i] == b'.') {
                i += 1;
            }
            continue;
        }
        i += 1;
    }
    found
}

// ---------------------------------------------------------------------------------------
// HEAD (§7)
// ---------------------------------------------------------------------------------------

fn head(out: &mut FileImport, rel_id: &str, text: &str, start: usize) -> Result<String, Refused> {
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
    if !inputs.is_empty() {
        front.insert(
            "inputs".into(),
            Value::Array(inputs.into_iter().map(Value::Object).collect()),
        );
    }
    if let Some(m) = model {
        front.insert("model".into(), m);
    }
    if !limits.is_empty() {
        front.insert("limits".into(), Value::Object(limits));
    }
    Ok(assemble(front, &body))
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
    if !dropped.is_empty() {
        out.warn_with(
            "IMP-D-limits-llm",
            format!(
                "limits [{}] dropped: strata runs no LLM",
                named_list(dropped)
            ),
            limits_here,
        );
    }
}

fn head_input(
    out: &mut FileImport,
    spec: &Map<String, Value>,
    declared: &BTreeSet<String>,
    here: impl Fn() -> (usize, usize) + Copy,
) -> Option<Map<String, Value>> {
    let name = spec.get("name").map(text_of).unwrap_or_default();
    if name.is_empty() || !name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_') {
        out.warn_with(
            "IMP-D-input",
            format!(
                "input name `{}` is not letters, digits and `_`: dropped",
                shown(&name)
            ),
            here,
        );
        return None;
    }
    if declared.contains(&name) {
        out.warn_with(
            "IMP-D-input",
            format!(
                "input `{}` is declared twice: the second declaration is dropped",
                shown(&name)
            ),
            here,
        );
        return None;
    }
    let mut outp = Map::new();
    outp.insert("name".into(), string(&name));
    let ty = spec
        .get("type")
        .map(text_of)
        .unwrap_or_else(|| "string".into());
    let ty = if INPUT_TYPES.contains(&ty.as_str()) {
        ty
    } else {
        out.warn_with(
            "IMP-D-input",
            format!(
                "input `{}` has type `{}`, which strata does not know: declared as `string`",
                shown(&name),
                shown(&ty)
            ),
            here,
        );
        "string".into()
    };
    outp.insert("type".into(), string(&ty));
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

// ---------------------------------------------------------------------------------------
// A minimal XML reader for the <directive> block
// ---------------------------------------------------------------------------------------

mod xml {
    use strata_core::shown;

    use crate::util::joined;

    /// An element: its name, attributes in order, children and its offset in the file.
    #[derive(Debug)]
    pub struct Element {
        pub name: String,
        pub attrs: Vec<(String, String)>,
        pub children: Vec<Node>,
        pub offset: usize,
    }

    /// A child: an element or text.
    #[derive(Debug)]
    pub enum Node {
        Element(Element),
        Text(String),
    }

    impl Element {
        pub fn attr(&self, name: &str) -> Option<&str> {
            self.attrs
                .iter()
                .find(|(k, _)| k == name)
                .map(|(_, v)| v.as_str())
        }

        pub fn elements(&self) -> impl Iterator<Item = &Element> {
            self.children.iter().filter_map(|c| match c {
                Node::Element(e) => Some(e),
                Node::Text(_) => None,
            })
        }

        /// The text of the element and its descendants, each line trimmed, joined by spaces.
        pub fn text(&self) -> String {
            let mut raw = String::new();
            self.collect(&mut raw);
            raw.split_whitespace().collect::<Vec<_>>().join(" ")
        }

        fn collect(&self, into: &mut String) {
            for c in &self.children {
                match c {
                    Node::Text(t) => {
                        into.push_str(t);
                        into.push(' ');
                    }
                    Node::Element(e) => e.collect(into),
                }
            }
        }

        /// A one-line summary of the contents, for messages: `execute: tool rye.*; fetch: *`.
        /// Each name, attribute and text is quoted as messages quote a file's text, and each
        /// list names ten items and counts the others.
        pub fn summary(&self) -> String {
            let parts = joined(self.elements().map(Element::part), "; ");
            if parts.is_empty() {
                shown(&self.text())
            } else {
                parts
            }
        }

        /// One part of [`Element::summary`]: `name k=v: child text, child text`.
        fn part(&self) -> String {
            let mut s = shown(&self.name);
            if !self.attrs.is_empty() {
                let attrs = self
                    .attrs
                    .iter()
                    .map(|(k, v)| format!("{}={}", shown(k), shown(v)));
                s.push(' ');
                s.push_str(&joined(attrs, " "));
            }
            let inner = joined(
                self.elements().map(|g| {
                    let t = g.text();
                    if t.is_empty() {
                        shown(&g.name)
                    } else {
                        format!("{} {}", shown(&g.name), shown(&t))
                    }
                }),
                ", ",
            );
            let text = if inner.is_empty() {
                shown(&self.text())
            } else {
                inner
            };
            if !text.is_empty() {
                s.push_str(": ");
                s.push_str(&text);
            }
            s
        }
    }

    /// How deeply elements may nest: far more than a directive needs, and few enough that
    /// reading them (recursively) never nears the end of the stack.
    const MAX_DEPTH: usize = 100;

    struct Parser<'a> {
        text: &'a str,
        pos: usize,
        base: usize,
    }

    type Failed = (String, usize);

    /// Parses the single root element of `text` (at `base` in its file).
    pub fn parse(text: &str, base: usize) -> Result<Element, Failed> {
        let mut p = Parser { text, pos: 0, base };
        p.skip_misc();
        if !p.rest().starts_with('<') {
            return Err(("expected an element".into(), p.at()));
        }
        let root = p.element(1)?;
        p.skip_misc();
        if p.pos < text.len() {
            return Err(("text after the root element".into(), p.at()));
        }
        Ok(root)
    }

    impl Parser<'_> {
        fn rest(&self) -> &str {
            &self.text[self.pos..]
        }

        fn at(&self) -> usize {
            self.base + self.pos
        }

        fn skip_ws(&mut self) {
            let n = self.rest().len() - self.rest().trim_start().len();
            self.pos += n;
        }

        /// Skips whitespace, comments and processing instructions.
        fn skip_misc(&mut self) {
            loop {
                self.skip_ws();
                if self.rest().starts_with("<!--") {
                    match self.rest().find("-->") {
                        Some(e) => self.pos += e + 3,
                        None => self.pos = self.text.len(),
                    }
                } else if self.rest().starts_with("<?") {
                    match self.rest().find("?>") {
                        Some(e) => self.pos += e + 2,
                        None => self.pos = self.text.len(),
                    }
                } else {
                    return;
                }
            }
        }

        fn name(&mut self) -> Result<String, Failed> {
            let n = self
                .rest()
                .bytes()
                .take_while(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b':' | b'.'))
                .count();
            if n == 0 {
                return Err(("expected a name".into(), self.at()));
            }
            let name = self.rest()[..n].to_owned();
            self.pos += n;
            Ok(name)
        }

        /// The element starting here, `depth` deep (the root is 1).
        fn element(&mut self, depth: usize) -> Result<Element, Failed> {
            let offset = self.at();
            if depth > MAX_DEPTH {
                return Err((format!("elements nest more than {MAX_DEPTH} deep"), offset));
            }
            self.pos += 1; // <
            let name = self.name()?;
            let mut attrs = Vec::new();
            loop {
                self.skip_ws();
                if self.rest().starts_with("/>") {
                    self.pos += 2;
                    return Ok(Element {
                        name,
                        attrs,
                        children: Vec::new(),
                        offset,
                    });
                }
                if self.rest().starts_with('>') {
                    self.pos += 1;
                    break;
                }
                let key = self.name()?;
                self.skip_ws();
                if !self.rest().starts_with('=') {
                    return Err((
                        format!("attribute `{}` has no value", shown(&key)),
                        self.at(),
                    ));
                }
                self.pos += 1;
                self.skip_ws();
                let quote = self.rest().chars().next();
                let Some(q @ ('"' | '\'')) = quote else {
                    return Err((
                        format!("attribute `{}`: expected a quoted value", shown(&key)),
                        self.at(),
                    ));
                };
                self.pos += 1;
                let Some(end) = self.rest().find(q) else {
                    return Err((
                        format!("attribute `{}`: unclosed value", shown(&key)),
                        self.at(),
                    ));
                };
                let value = unescape(&self.rest()[..end]);
                self.pos += end + 1;
                attrs.push((key, value));
            }
            let mut children = Vec::new();
            loop {
                if self.pos >= self.text.len() {
                    return Err((format!("<{}> is not closed", shown(&name)), offset));
                }
                let rest = self.rest();
                if rest.starts_with("</") {
                    let close_at = self.at();
                    self.pos += 2;
                    let close = self.name()?;
                    if close != name {
                        return Err((
                            format!("</{}> closes <{}>", shown(&close), shown(&name)),
                            close_at,
                        ));
                    }
                    self.skip_ws();
                    if !self.rest().starts_with('>') {
                        return Err(("expected `>`".into(), self.at()));
                    }
                    self.pos += 1;
                    return Ok(Element {
                        name,
                        attrs,
                        children,
                        offset,
                    });
                }
                if rest.starts_with("<!--") || rest.starts_with("<?") {
                    self.skip_misc();
                    continue;
                }
                if let Some(cdata) = rest.strip_prefix("<![CDATA[") {
                    let end = cdata.find("]]>").unwrap_or(cdata.len());
                    children.push(Node::Text(cdata[..end].to_owned()));
                    self.pos += 9 + end + 3;
                    continue;
                }
                if rest.starts_with('<')
                    && rest[1..]
                        .bytes()
                        .next()
                        .is_some_and(|b| b.is_ascii_alphabetic() || b == b'_')
                {
                    children.push(Node::Element(self.element(depth + 1)?));
                    continue;
                }
                let end = rest[1..].find('<').map_or(rest.len(), |e| e + 1);
                children.push(Node::Text(unescape(&rest[..end])));
                self.pos += end;
            }
        }
    }

    /// Decodes the five named entities and numeric references.
    fn unescape(t: &str) -> String {
        if !t.contains('&') {
            return t.to_owned();
        }
        let mut out = String::with_capacity(t.len());
        let mut rest = t;
        while let Some(i) = rest.find('&') {
            out.push_str(&rest[..i]);
            let tail = &rest[i..];
            let Some(semi) = tail.find(';').filter(|s| *s <= 10) else {
                out.push('&');
                rest = &tail[1..];
                continue;
            };
            let entity = &tail[1..semi];
            let decoded = match entity {
                "lt" => Some('<'),
                "gt" => Some('>'),
                "amp" => Some('&'),
                "quot" => Some('"'),
                "apos" => Some('\''),
                e if e.starts_with("#x") => u32::from_str_radix(&e[2..], 16)
                    .ok()
                    .and_then(char::from_u32),
                e if e.starts_with('#') => e[1..].parse().ok().and_then(char::from_u32),
                _ => None,
            };
            match decoded {
                Some(ch) => {
                    out.push(ch);
                    rest = &tail[semi + 1..];
                }
                None => {
                    out.push('&');
                    rest = &tail[1..];
                }
            }
        }
        out.push_str(rest);
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Outcome;

    fn convert(text: &str) -> FileImport {
        import_directive(".ai/directives/t/x.md", "t/x", text, &Catalog::default())
    }

    /// The `}` closing the `{` at `open`, read byte by byte from it (the reading `Braces`
    /// replaces): `None` past the fifth line end or at the end of the text.
    fn closing_scanned(text: &str, open: usize) -> Option<usize> {
        let (mut depth, mut lines) = (0usize, 0usize);
        for (k, b) in text.bytes().enumerate().skip(open) {
            match b {
                b'{' => depth += 1,
                b'}' => {
                    depth -= 1;
                    if depth == 0 {
                        return Some(k);
                    }
                }
                b'\n' => {
                    lines += 1;
                    if lines > 5 {
                        return None;
                    }
                }
                _ => {}
            }
        }
        None
    }

    #[test]
    fn braces_close_where_reading_from_each_brace_finds() {
        // Every text of up to 8 of `{`, `}`, a line end and a letter, at every `{`.
        let alphabet = [b'{', b'}', b'\n', b'a'];
        for len in 0..=8u32 {
            for n in 0..4usize.pow(len) {
                let text: String = (0..len)
                    .map(|k| alphabet[n / 4usize.pow(k) % 4] as char)
                    .collect();
                let braces = Braces::of(&text);
                for (open, _) in text.match_indices('{') {
                    assert_eq!(
                        braces.closing(open),
                        closing_scanned(&text, open),
                        "{text:?} at {open}"
                    );
                }
            }
        }
        let spread = "{\n\n\n\n\n}{\n\n\n\n\n\n}";
        assert_eq!(Braces::of(spread).closing(0), Some(6));
        assert_eq!(Braces::of(spread).closing(7), None);
    }

    #[test]
    fn references_are_quoted_through_their_brace_or_cut() {
        assert_eq!(reference_at("{env:HOME} rest"), "{env:HOME}");
        assert_eq!(reference_at("{input:é\n"), "{input:é\\n");
        let long = format!("{{env:{}}}", "é".repeat(100));
        assert_eq!(reference_at(&long), shown(&long[..long.len() - 1]));
    }

    fn written(f: &FileImport) -> &str {
        assert_eq!(f.outcome, Outcome::Imported, "{:?}", f.reason);
        assert_eq!(f.written.len(), 1);
        assert_eq!(f.written[0].path, "directives/t/x.md");
        &f.written[0].contents
    }

    /// (code, line, column) of every warning.
    fn codes(f: &FileImport) -> Vec<(&str, usize, usize)> {
        f.warnings
            .iter()
            .map(|w| (w.code.as_str(), w.line, w.column))
            .collect()
    }

    fn message<'a>(f: &'a FileImport, code: &str) -> &'a str {
        &f.warnings
            .iter()
            .find(|w| w.code == code)
            .unwrap_or_else(|| panic!("no {code} in {:#?}", f.warnings))
            .message
    }

    /// A Python-era directive: `meta` inside <metadata>, `rest` after it in <directive>,
    /// `body` after the block.
    fn py(meta: &str, rest: &str, body: &str) -> String {
        format!(
            "<!-- rye:signed:2026-04-19T09:49:53Z:abc:def==:0123\n<!-- rye:unsigned -->\n# Title\n\nProse before.\n\n```xml\n<directive name=\"x\" version=\"1.2.0\">\n  <metadata>\n    <description>Does x</description>\n    <category>t</category>\n    <author>rye-os</author>\n{meta}  </metadata>\n{rest}</directive>\n```\n\n{body}"
        )
    }

    // §6 D-xml, D-name, D-description, D-category / D-author, D-body, HD-leading-comment's
    // Python twin (signature comments dropped).
    #[test]
    fn d_xml_block_becomes_front_matter_and_the_rest_the_body() {
        let f = convert(&py(
            "",
            "",
            "<process>\n  <step name=\"a\">Do it.</step>\n</process>\n",
        ));
        assert_eq!(
            written(&f),
            "---\nname: x\ndescription: Does x\nversion: 1.2.0\n---\n# Title\n\nProse before.\n\n<process>\n  <step name=\"a\">Do it.</step>\n</process>\n"
        );
        assert!(f.warnings.is_empty(), "{:#?}", f.warnings);
        assert_eq!(f.rewrites, ["```xml <directive> block → YAML front matter"]);
    }

    // D-model (with the text some files give it).
    #[test]
    fn d_model_attributes_become_the_model_map() {
        let f = convert(&py(
            "    <model tier=\"fast\" id=\"claude-3-5-haiku-20241022\" provider=\"zen/zen\">Research</model>\n",
            "",
            "",
        ));
        assert_eq!(
            written(&f),
            "---\nname: x\ndescription: Does x\nversion: 1.2.0\nmodel:\n  tier: fast\n  id: claude-3-5-haiku-20241022\n  provider: zen/zen\n  description: Research\n---\n# Title\n\nProse before.\n"
        );
        assert!(f
            .rewrites
            .contains(&"<model> text \"Research\" → model.description".to_owned()));
    }

    // D-limits-turns, D-limits-duration, D-limits-llm.
    #[test]
    fn d_limits_keep_turns_and_duration_and_drop_the_llm_ones() {
        let f = convert(&py(
            "    <limits turns=\"10\" tokens=\"100000\" spend=\"1.0\" spawns=\"2\" depth=\"3\" duration_seconds=\"1\" />\n",
            "",
            "",
        ));
        assert!(written(&f).contains("limits:\n  turns: 10\n  timeout: 1\n---\n"));
        assert_eq!(
            codes(&f),
            [("IMP-D-limits-turns", 13, 5), ("IMP-D-limits-llm", 13, 5)]
        );
        assert_eq!(
            message(&f, "IMP-D-limits-turns"),
            "limits turns=10 became `limits.turns: 10`: RyeOS counted LLM turns, strata caps how many actions run"
        );
        assert_eq!(
            message(&f, "IMP-D-limits-llm"),
            "limits [tokens=100000, spend=1.0, spawns=2, depth=3] dropped: strata runs no LLM"
        );
        assert!(f
            .rewrites
            .contains(&"limits duration_seconds=1 → limits.timeout: 1".to_owned()));
    }

    // D-permissions (an empty one drops silently), also directly under <directive>.
    #[test]
    fn d_permissions_are_dropped_with_a_warning() {
        let f = convert(&py(
            "    <permissions>\n      <execute><tool>rye.file-system.*</tool></execute>\n      <fetch>*</fetch>\n    </permissions>\n",
            "",
            "",
        ));
        assert_eq!(codes(&f), [("IMP-permissions", 13, 5)]);
        assert_eq!(
            message(&f, "IMP-permissions"),
            "<permissions> (execute: tool rye.file-system.*; fetch: *) dropped: strata enforces no capabilities"
        );
        let f = convert(&py("    <permissions />\n", "", ""));
        assert!(f.warnings.is_empty());
        let f = convert(&py(
            "",
            "  <permissions><execute><tool>*</tool></execute></permissions>\n",
            "",
        ));
        assert_eq!(codes(&f), [("IMP-permissions", 14, 3)]);
    }

    // D-context.
    #[test]
    fn d_context_is_dropped_with_a_warning() {
        let f = convert(&py(
            "    <context>\n      <system>agent/core/Behavior</system>\n      <before>x/rules</before>\n    </context>\n",
            "",
            "",
        ));
        assert_eq!(codes(&f), [("IMP-D-context", 13, 5)]);
        assert_eq!(
            message(&f, "IMP-D-context"),
            "<context> knowledge injection (system: agent/core/Behavior; before: x/rules) dropped: strata injects no knowledge into prompts"
        );
    }

    // D-extends.
    #[test]
    fn d_extends_is_dropped_with_a_warning() {
        let text = py("", "", "").replace(
            "<directive name=\"x\" version=\"1.2.0\">",
            "<directive name=\"x\" version=\"1.2.0\" extends=\"rye/agent/core/base\">",
        );
        let f = convert(&text);
        assert_eq!(codes(&f), [("IMP-D-extends", 8, 1)]);
        assert_eq!(
            message(&f, "IMP-D-extends"),
            "`extends=\"rye/agent/core/base\"` dropped: strata directives have no inheritance (the parent's context, permissions and limits are not merged in)"
        );
    }

    // D-inputs (types, required, typed defaults, descriptions) and D-outputs.
    #[test]
    fn d_inputs_become_typed_inputs_and_outputs_are_dropped() {
        let f = convert(&py(
            "",
            "  <inputs>\n    <input name=\"path\" type=\"string\" required=\"true\">\n      The file\n      to read\n    </input>\n    <input name=\"timeout\" type=\"integer\" required=\"false\" default=\"30\">Seconds</input>\n    <input name=\"items\" type=\"array\" required=\"false\" />\n    <input name=\"flag\" type=\"boolean\" required=\"false\" default=\"true\" />\n    <input name=\"opts\" type=\"object\" required=\"false\" />\n    <input name=\"ratio\" type=\"number\" required=\"false\" default=\"0.5\" />\n  </inputs>\n  <outputs>\n    <output name=\"content\">The text</output>\n    <success>It worked</success>\n  </outputs>\n",
            "Read {input:path} within {input:timeout}s.\n",
        ));
        assert_eq!(
            written(&f),
            "---\nname: x\ndescription: Does x\nversion: 1.2.0\ninputs:\n- name: path\n  type: string\n  required: true\n  description: The file to read\n- name: timeout\n  type: integer\n  required: false\n  default: 30\n  description: Seconds\n- name: items\n  type: array\n  required: false\n- name: flag\n  type: boolean\n  required: false\n  default: true\n- name: opts\n  type: object\n  required: false\n- name: ratio\n  type: number\n  required: false\n  default: 0.5\n---\n# Title\n\nProse before.\n\nRead {input:path} within {input:timeout}s.\n"
        );
        assert_eq!(codes(&f), [("IMP-D-outputs", 25, 3)]);
        assert_eq!(
            message(&f, "IMP-D-outputs"),
            "<outputs> (output name=content: The text; success: It worked) dropped: strata directives declare no outputs"
        );
    }

    #[test]
    fn bad_inputs_are_reported() {
        let f = convert(&py(
            "",
            "  <inputs>\n    <input name=\"a\" type=\"dict\" required=\"false\" />\n    <input name=\"a\" type=\"string\" />\n    <input name=\"n\" type=\"integer\" default=\"many\" />\n  </inputs>\n",
            "{input:a} {input:n}",
        ));
        let messages: Vec<&str> = f.warnings.iter().map(|w| w.message.as_str()).collect();
        assert_eq!(
            messages,
            [
                "input `a` has type `dict`, which strata does not know: declared as `string`",
                "input `a` is declared twice: the second declaration is dropped",
                "default \"many\" of input `n` is not a integer: dropped",
            ]
        );
    }

    // D-input-ref (all four forms), D-output-ref, and `${input:k}` (a `$` before a layer-I
    // reference) stay as they are.
    #[test]
    fn d_input_and_output_references_are_unchanged() {
        let body =
            "{input:k} {input:k?} {input:k:user} {input:k|outputs} {output:verdict} ${input:k}\n";
        let f = convert(&py(
            "",
            "  <inputs><input name=\"k\" type=\"string\" required=\"false\" /></inputs>\n",
            body,
        ));
        assert!(written(&f).ends_with(&format!("Prose before.\n\n{body}")));
        assert!(f.warnings.is_empty());
    }

    // D-inputs-dollar and D-dollar-text.
    #[test]
    fn d_dollar_text_is_escaped_and_declared_inputs_are_kept() {
        let f = convert(&py(
            "",
            "  <inputs><input name=\"k\" type=\"string\" required=\"false\" /></inputs>\n",
            "Use ${inputs.k} and ${inputs.field}, ${result.<field>} or ${VAR:-default}.\n",
        ));
        assert!(written(&f).ends_with(
            "Use ${inputs.k} and $${inputs.field}, $${result.<field>} or $${VAR:-default}.\n"
        ));
        assert_eq!(codes(&f), [("IMP-D-inputs-dollar", 18, 5)]);
        assert_eq!(
            message(&f, "IMP-D-inputs-dollar"),
            "`${inputs.k}` kept: it reads input `k`, but when the input is not given it now renders empty where RyeOS kept the text"
        );
        assert!(f.rewrites.contains(
            &"3 `${…}` of the body escaped as `$${…}` (literal text in RyeOS)".to_owned()
        ));
    }

    // D-env-ref: left literal, one warning per reference.
    #[test]
    fn d_env_references_are_left_literal_with_a_warning() {
        let f = convert(&py(
            "",
            "",
            "Space {env:USER_SPACE}, again {env:USER_SPACE}, {env:AI_DIR}.\n",
        ));
        assert!(written(&f)
            .ends_with("Space {env:USER_SPACE}, again {env:USER_SPACE}, {env:AI_DIR}.\n"));
        assert_eq!(codes(&f), [("IMP-D-env", 17, 7), ("IMP-D-env", 17, 49)]);
        assert_eq!(
            f.warnings[0].message,
            "`{env:USER_SPACE}` is left literal: RyeOS filled it from the environment, strata renders no environment variable in a directive body"
        );
    }

    // D-description: what strata would render is escaped.
    #[test]
    fn d_description_templates_are_escaped() {
        let text = py("", "", "").replace(
            "<description>Does x</description>",
            "<description>Costs ${cost} for {input:k}, not {input:k:d}</description>",
        );
        let f = convert(&text);
        assert!(
            written(&f).contains("description: Costs $${cost} for {{input:k}}, not {input:k:d}\n")
        );
    }

    #[test]
    fn a_malformed_input_reference_is_kept_literal() {
        let f = convert(&py("", "", "Write {input:<name>} and {input:}.\n"));
        assert!(written(&f).ends_with("Write ${'{'}input:<name>} and ${'{'}input:}.\n"));
    }

    #[test]
    fn undeclared_input_references_are_declared_as_optional_strings() {
        let f = convert(&py("", "", "Hello {input:who}.\n"));
        assert!(
            written(&f).contains("inputs:\n- name: who\n  type: string\n  required: false\n---\n")
        );
        assert_eq!(codes(&f), [("IMP-D-undeclared", 17, 7)]);
        assert_eq!(
            f.warnings[0].message,
            "the body reads input `who`, which the directive does not declare (RyeOS supplied it): declared as an optional string input"
        );
    }

    #[test]
    fn a_file_without_a_directive_block_is_refused() {
        let f = convert("# Notes\n\n```xml\n<tool/>\n```\n");
        assert_eq!(f.outcome, Outcome::Refused);
        let r = f.reason.expect("a reason");
        assert_eq!(r.code, "IMP-D-xml");
        assert_eq!(
            r.message,
            "no ```xml <directive> block and no YAML front matter: not a RyeOS directive"
        );
        let f = convert("```xml\n<directive name=\"x\">\n  <metadata>\n</directive>\n```\n");
        assert_eq!(f.outcome, Outcome::Refused);
        assert_eq!(
            f.reason.expect("a reason").message,
            "the <directive> block does not parse at 4:1: </directive> closes <metadata>"
        );
    }

    #[test]
    fn xml_entities_and_comments_are_read() {
        let text = py("", "", "").replace(
            "<description>Does x</description>",
            "<!-- note --><description>A &lt;b&gt; &amp; &#233;</description>",
        );
        assert!(written(&convert(&text)).contains("description: A <b> & é\n"));
    }

    /// A HEAD directive: front matter `front`, body `body`.
    fn head(front: &str, body: &str) -> String {
        format!("<!-- ryeos:signed:2026-07-15T07:49:16Z:abc:def== -->\n---\n{front}---\n{body}")
    }

    // HD-leading-comment, HD-noname, HD-category, HD-model, HD-inputs, HD-inputs-ref.
    #[test]
    fn hd_front_matter_is_kept_and_named_after_the_file() {
        let f = convert(&head(
            "category: \"container\"\ndescription: \"Base\"\nversion: \"1.0.0\"\nmodel:\n  provider: zai\n  name: glm-4.7-flash\n  context_window: 200000\ninputs:\n  - name: input\n    type: string\n    required: true\n",
            "${inputs.input}\n",
        ));
        assert_eq!(
            written(&f),
            "---\nname: x\ndescription: Base\nversion: 1.0.0\ninputs:\n- name: input\n  type: string\n  required: true\nmodel:\n  provider: zai\n  name: glm-4.7-flash\n  context_window: 200000\n---\n${inputs.input}\n"
        );
        assert!(f.warnings.is_empty(), "{:#?}", f.warnings);
        assert_eq!(
            f.rewrites,
            [
                "signature comment before the front matter removed",
                "no `name:` → name: x (the file stem)"
            ]
        );
        let named = convert("---\nname: context\n---\nBody\n");
        assert_eq!(written(&named), "---\nname: context\n---\nBody\n");
        assert!(named.rewrites.is_empty());
    }

    // HD-limits, HD-continuation, HD-requires, HD-context, HD-hooks.
    #[test]
    fn hd_llm_keys_are_dropped_with_warnings() {
        let f = convert(&head(
            "limits:\n  turns: 80\n  tokens: 400000\n  spend_usd: \"4\"\n  depth: 5\ncontinuation:\n  carry_turns: 8\nrequires:\n  capabilities:\n    declared:\n      - ryeos.execute.tool.*\ncontext:\n  system:\n    - \"knowledge:container/important_fact\"\nhooks:\n  - id: summarize\n    event: continuation\n    action:\n      item_id: directive:ryeos/examples/summarize_continuation\n",
            "Work.\n",
        ));
        assert_eq!(
            written(&f),
            "---\nname: x\nlimits:\n  turns: 80\n---\nWork.\n"
        );
        assert_eq!(
            codes(&f),
            [
                ("IMP-D-limits-llm", 3, 1),
                ("IMP-D-limits-turns", 4, 3),
                ("IMP-D-continuation", 8, 1),
                ("IMP-permissions", 10, 1),
                ("IMP-D-context", 14, 1),
                ("IMP-D-hooks", 17, 1),
            ]
        );
        let messages: Vec<&str> = f.warnings.iter().map(|w| w.message.as_str()).collect();
        assert_eq!(
            messages,
            [
                "limits [tokens: 400000, spend_usd: \"4\", depth: 5] dropped: strata runs no LLM",
                "limits.turns 80 kept: RyeOS counted LLM turns, strata caps how many actions run",
                "`continuation: {\"carry_turns\":8}` dropped: strata runs no LLM thread, so there is no context window to continue",
                "`requires: {\"capabilities\":{\"declared\":[\"ryeos.execute.tool.*\"]}}` dropped: strata enforces no capabilities",
                "`context: {\"system\":[\"knowledge:container/important_fact\"]}` knowledge injection dropped: strata injects no knowledge into prompts",
                "hooks `summarize` on `continuation` dropped: they run a directive inline on a RyeOS thread event; strata hooks call tools on directive events",
            ]
        );
    }

    // HD-undeclared.
    #[test]
    fn hd_undeclared_inputs_are_declared_optional() {
        let f = convert(&head(
            "description: \"Continue\"\n",
            "Directive `${inputs.original_directive}`.\n\n${inputs.original_directive}\n",
        ));
        assert_eq!(
            written(&f),
            "---\nname: x\ndescription: Continue\ninputs:\n- name: original_directive\n  type: string\n  required: false\n---\nDirective `${inputs.original_directive}`.\n\n${inputs.original_directive}\n"
        );
        assert_eq!(codes(&f), [("IMP-D-undeclared", 5, 12)]);
    }

    // HD-expr (json order), HD-brace-literal, HD-rye-expr-only (`/`), and the §8 rewrites
    // `a || b` → `a ?? b`, `x | f` → `f(x)`, `${1 + 2}` → `${(1 + 2)}`.
    #[test]
    fn hd_expressions_are_rewritten_for_strata() {
        let f = convert(&head(
            "inputs:\n  - {name: usage, type: object}\n  - {name: n, type: integer}\n  - {name: s, type: string}\n",
            "`${json(inputs.usage ?? null)}` {directive_name} ${inputs.n / 2} ${inputs.s || 'none'} ${inputs.s | upper} ${1 + 2} ${exists(inputs.n) ? 1 : 0}\n",
        ));
        assert!(written(&f).ends_with(
            "---\n`${json(inputs.usage ?? null)}` {directive_name} ${inputs.n / 2} ${inputs.s ?? 'none'} ${upper(inputs.s)} ${(1 + 2)} ${exists(inputs.n) ? 1 : 0}\n"
        ));
        assert_eq!(
            codes(&f),
            [("IMP-D-json-order", 8, 2), ("IMP-D-expr", 8, 50)]
        );
        assert_eq!(
            f.warnings[0].message,
            "`${json(inputs.usage ?? null)}`: strata's `json` keeps the objects' key order where HEAD RyeOS sorted the keys"
        );
        assert_eq!(
            f.warnings[1].message,
            "`${inputs.n / 2}`: `/` of two integers is integer division in strata (HEAD RyeOS gave a float)"
        );
        assert_eq!(
            &f.rewrites[2..],
            [
                "`${inputs.s || 'none'}` → `${inputs.s ?? 'none'}`",
                "`${inputs.s | upper}` → `${upper(inputs.s)}`",
                "`${1 + 2}` → `${(1 + 2)}` (an expression starting with a digit or `+` is literal text in strata)",
            ]
        );
    }

    #[test]
    fn hd_other_namespaces_and_input_syntax_stay_literal() {
        let f = convert(&head("", "${thread.id} {input:k} {input:k:d}\n"));
        assert!(written(&f).ends_with("---\n$${thread.id} {{input:k}} ${'{'}input:k:d}\n"));
        assert_eq!(codes(&f), [("IMP-D-expr", 4, 1)]);
        assert_eq!(
            f.warnings[0].message,
            "`${thread.id}` reads `thread`, which a strata directive body does not have: kept as literal text"
        );
    }

    #[test]
    fn hd_bad_front_matter_is_refused() {
        let f = convert("---\nname: [\n---\nBody\n");
        assert_eq!(f.reason.expect("refused").code, "IMP-D-yaml");
        let f = convert("---\nname: x\n");
        assert_eq!(
            f.reason.expect("refused").message,
            "the front matter has no closing `---` line"
        );
        // Lines are the file's, counted past the signature comment and the opening `---`.
        let f = convert(&head("name: a\nname: b\n", "Body\n"));
        assert_eq!(
            f.reason.expect("refused"),
            crate::Refusal {
                code: "IMP-D-yaml".into(),
                message: "the front matter cannot be read: duplicate key `name` at line 4 column 1 (each key may appear once in a map)".into(),
            }
        );
    }
}
