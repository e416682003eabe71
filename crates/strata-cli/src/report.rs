//! Diagnostics for people: rustc-style, with the source line and a caret under the span.

use std::fmt::Write as _;

use strata_core::{Error, Warning};
use strata_doc::Document;

fn snippet(out: &mut String, doc: &Document, line: usize, column: usize, width: usize) {
    source_snippet(out, &doc.text, line, column, width);
}

/// Appends the source line `line` of `text` with carets under `width` characters from `column`.
pub fn source_snippet(out: &mut String, text: &str, line: usize, column: usize, width: usize) {
    let Some(text) = text.lines().nth(line.saturating_sub(1)) else {
        return;
    };
    let gutter = line.to_string().len();
    let pad = " ".repeat(gutter);
    let available = text.chars().count().saturating_sub(column - 1).max(1);
    let carets = "^".repeat(width.clamp(1, available));
    let _ = writeln!(out, "{pad} |");
    let _ = writeln!(out, "{line} | {text}");
    let _ = writeln!(out, "{pad} | {}{carets}", " ".repeat(column - 1));
}

/// Formats an error: headline, location, source snippet, field path and hint.
pub fn format_error(err: &Error, doc: Option<&Document>) -> String {
    let mut out = format!("error[{}]: {}\n", err.layer, err.message);
    let width = err.span.map_or(1, |s| s.end.saturating_sub(s.start));
    if let Some(loc) = &err.location {
        let _ = writeln!(out, "  --> {}:{}:{}", loc.file, loc.line, loc.column);
        if let Some(doc) = doc.filter(|d| d.name == loc.file) {
            snippet(&mut out, doc, loc.line, loc.column, width);
        }
    }
    if !err.path.is_root() || err.span.is_some() {
        let _ = write!(out, "   = field: {}", err.path);
        if let Some(span) = err.span {
            let _ = write!(out, " (bytes {}..{})", span.start, span.end);
        }
        out.push('\n');
    }
    if let Some(hint) = &err.hint {
        let _ = writeln!(out, "   = help: {hint}");
    }
    out
}

/// Formats a warning: headline, location and field path.
pub fn format_warning(w: &Warning, doc: Option<&Document>) -> String {
    let mut out = format!("warning[{}]: {}\n", w.layer, w.message);
    if let Some(doc) = doc {
        if let Some((line, column)) = doc.locate(&w.path, w.span.map(|s| s.start)) {
            let _ = writeln!(out, "  --> {}:{line}:{column}", doc.name);
        }
    }
    let _ = write!(out, "   = field: {}", w.path);
    if let Some(span) = w.span {
        let _ = write!(out, " (bytes {}..{})", span.start, span.end);
    }
    out.push('\n');
    out
}
