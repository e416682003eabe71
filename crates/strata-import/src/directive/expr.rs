//! HEAD rye-expr expressions of a body (`${inputs.x || 'y'}`, `${x | f}`) in strata's
//! expression language, with the warnings where the two read differently.

use strata_core::shown;

use crate::model::FileImport;

/// A HEAD rye-expr expression in strata's language, with the inputs it reads; `None` when it
/// reads a namespace other than `inputs` (then it is kept as literal text).
pub(super) fn head_expression(
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
