//! Directive bodies (MAPPING §6 D-input-ref … D-env-ref, §7 HD-inputs-ref … HD-expr, §8):
//! the templates of a body and of a description rewritten so that strata's stages 1–2
//! render what RyeOS rendered and leave literal what RyeOS left literal.

use std::collections::BTreeSet;

use serde_json::{Map, Value};
use strata_core::{shown, SHOWN_CHARS};

use super::expr::head_expression;
use crate::model::FileImport;
use crate::position::position;
use crate::util::string;

/// Escapes a description: RyeOS never rendered it, strata renders it with stages 1–2.
pub(super) fn escape_description(d: &str) -> String {
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

/// `${inner}` as literal text of a strata body: `$${inner}`, or `${'${'}inner}` when `inner`
/// opens with `input:` (stage 1 would read the `{input:…}` of `$${input:…}`).
fn literal_dollar(inner: &str) -> String {
    if inner.starts_with("input:") {
        format!("${{'${{'}}{inner}}}")
    } else {
        format!("$${{{inner}}}")
    }
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

#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Era {
    Python,
    Head,
}

/// Rewrites one stretch of body text that starts at `base` in the RyeOS file.
pub(super) fn body_text(
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
        // HEAD's own escape, `$${…}`: literal text.
        if era == Era::Head && text[i..].starts_with("$${") {
            if let Some(close) = braces.closing(i + 2) {
                outp.push_str(&literal_dollar(&text[i + 3..close]));
                i = close + 1;
                continue;
            }
        }
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
                    let expr = head_expression(out, inner, here).filter(|(expr, _)| {
                        match strata_context::parse_expr(expr, 0) {
                            Ok(_) => true,
                            Err(e) => {
                                out.warn_with(
                                    "IMP-D-expr",
                                    format!("`${{{}}}` is no expression strata reads ({}): kept as literal text", shown(inner), e.message()),
                                    here,
                                );
                                false
                            }
                        }
                    });
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
                            outp.push_str(&literal_dollar(inner));
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
pub(super) struct Undeclared {
    names: BTreeSet<String>,
    reads: Vec<(String, usize)>,
}

impl Undeclared {
    /// Notes a read of input `name` at `offset`, unless it is declared or already noted.
    pub(super) fn note(&mut self, declared: &BTreeSet<String>, name: &str, offset: usize) {
        if !declared.contains(name) && self.names.insert(name.to_owned()) {
            self.reads.push((name.to_owned(), offset));
        }
    }

    /// Declares every input noted as an optional string (else `strata check` reports R003
    /// and `strata run` refuses it), each with a warning at its first read in `file`.
    pub(super) fn declare(
        self,
        out: &mut FileImport,
        file: &str,
        inputs: &mut Vec<Map<String, Value>>,
    ) {
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

#[cfg(test)]
mod tests {
    use super::*;

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
}
