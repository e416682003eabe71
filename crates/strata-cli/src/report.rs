//! Diagnostics for people: rustc-style, with the source line and a caret under the span.

use std::fmt::Write as _;

use strata_core::{Error, Warning};
use strata_doc::{Document, Lines};

use crate::style::{paint, ERROR, HEADLINE, NOTE, WARNING};

/// A document with its lines indexed once, so that the snippets of many errors in it cost
/// their windows, not a scan of the document each; indexed only as far as the last line an
/// error is on (one error near the top of a large file reads only the lines above it).
struct Indexed<'d> {
    doc: &'d Document,
    lines: Lines,
}

impl<'d> Indexed<'d> {
    fn of(doc: &'d Document, errors: &[Error]) -> Indexed<'d> {
        let last = errors
            .iter()
            .filter_map(|e| e.location())
            .filter(|l| l.file == doc.name)
            .map(|l| l.line)
            .max()
            .unwrap_or(0);
        Indexed {
            doc,
            lines: Lines::first(&doc.text, last),
        }
    }

    fn snippet(&self, out: &mut String, line: usize, column: usize, width: usize) {
        if let Some(text) = self.lines.line(&self.doc.text, line) {
            line_snippet(out, text, line, column, width);
        }
    }
}

/// The longest source line a snippet shows whole.
const LINE_CHARS: usize = 512;

/// How much of a longer line a snippet shows: a window around the column, marked with `…`,
/// so that an error about a huge line stays small.
const SNIPPET_CHARS: usize = 120;

/// Appends `text`, the source line numbered `line` (with whether it is all ASCII), with
/// carets under `width` characters from `column`. On an ASCII line this costs the window
/// shown, not the line: an error about one of thousands of placeholders on a long line
/// stays cheap.
pub(crate) fn line_snippet(
    out: &mut String,
    (text, ascii): (&str, bool),
    line: usize,
    column: usize,
    width: usize,
) {
    let gutter = line.to_string().len();
    let pad = " ".repeat(gutter);
    let (shown, column) = window(text, ascii, column.max(1));
    let available = shown.chars().count().saturating_sub(column - 1).max(1);
    let carets = "^".repeat(width.clamp(1, available));
    let bar = paint(NOTE, "|");
    let _ = writeln!(out, "{pad} {bar}");
    let _ = writeln!(out, "{} {bar} {shown}", paint(NOTE, line));
    let _ = writeln!(
        out,
        "{pad} {bar} {}{}",
        " ".repeat(column - 1),
        paint(HEADLINE, carets)
    );
}

/// `error[layer]: message` (or `warning…`), the label in its colour and the rest in bold.
pub(crate) fn headline(label: &str, code: &str, message: &str) -> String {
    let style = match label {
        "error" => ERROR,
        "note" => NOTE,
        _ => WARNING,
    };
    format!(
        "{}{}\n",
        paint(style, format!("{label}[{code}]")),
        paint(HEADLINE, format!(": {message}"))
    )
}

/// `  --> file:line:col`.
pub(crate) fn arrow(file: &str, line: usize, column: usize) -> String {
    format!("  {} {file}:{line}:{column}\n", paint(NOTE, "-->"))
}

/// `   = label: text`.
pub(crate) fn note(label: &str, text: &str) -> String {
    format!("   {} {text}\n", paint(NOTE, format!("= {label}:")))
}

/// The part of a long line shown around `column` (1-based), and the column within it.
fn window(text: &str, ascii: bool, column: usize) -> (String, usize) {
    if ascii && text.len() > LINE_CHARS {
        let start = (column - 1)
            .min(text.len())
            .saturating_sub(SNIPPET_CHARS / 3);
        let end = (start + SNIPPET_CHARS).min(text.len());
        let mut shown = String::with_capacity(SNIPPET_CHARS + 6);
        if start > 0 {
            shown.push('…');
        }
        shown.push_str(&text[start..end]);
        if end < text.len() {
            shown.push('…');
        }
        return (shown, column - start + usize::from(start > 0));
    }
    let len = text.chars().count();
    if len <= LINE_CHARS {
        return (text.to_string(), column);
    }
    let start = (column - 1).min(len).saturating_sub(SNIPPET_CHARS / 3);
    let end = (start + SNIPPET_CHARS).min(len);
    let mut shown = String::new();
    if start > 0 {
        shown.push('…');
    }
    shown.extend(text.chars().skip(start).take(end - start));
    if end < len {
        shown.push('…');
    }
    (shown, column - start + usize::from(start > 0))
}

/// Formats an error: headline, location, source snippet, field path and hint.
pub(crate) fn format_error(err: &Error, doc: Option<&Document>) -> String {
    format_errors(std::slice::from_ref(err), doc)
}

/// Formats errors of one document (see [`format_error`]), its lines indexed once: linear in
/// the errors and the document, however many errors one long line holds.
pub(crate) fn format_errors(errors: &[Error], doc: Option<&Document>) -> String {
    let shown = &errors[..errors.len().min(MAX_ERRORS)];
    let indexed = doc.map(|doc| Indexed::of(doc, shown));
    let mut out = String::new();
    for err in shown {
        error_text(&mut out, err, indexed.as_ref());
    }
    if errors.len() > MAX_ERRORS {
        let message = format!(
            "{} errors in all; the first {MAX_ERRORS} are shown (fix them, then run again)",
            errors.len()
        );
        out.push_str(&headline("error", "strata", &message));
    }
    out
}

/// The most errors of one file shown to people, as rustc bounds what it prints (`--json`
/// gives them all).
pub(crate) const MAX_ERRORS: usize = 20;

fn error_text(out: &mut String, err: &Error, doc: Option<&Indexed<'_>>) {
    out.push_str(&headline("error", &err.layer().to_string(), err.message()));
    let width = err.span().map_or(1, |s| s.end.saturating_sub(s.start));
    if let Some(loc) = err.location() {
        out.push_str(&arrow(&loc.file, loc.line, loc.column));
        if let Some(doc) = doc.filter(|d| d.doc.name == loc.file) {
            doc.snippet(out, loc.line, loc.column, width);
        }
    }
    if !err.path().is_root() || err.span().is_some() {
        out.push_str(&note("field", &field_text(err.path(), err.span())));
    }
    if let Some(hint) = err.hint() {
        out.push_str(&note("help", hint));
    }
}

/// `config.args[1] (bytes 3..9)`.
fn field_text(path: &strata_core::FieldPath, span: Option<strata_core::Span>) -> String {
    match span {
        Some(span) => format!("{path} (bytes {}..{})", span.start, span.end),
        None => path.to_string(),
    }
}

/// Formats a warning: headline, location and field path.
pub(crate) fn format_warning(w: &Warning, doc: Option<&Document>) -> String {
    let mut out = headline("warning", &w.layer.to_string(), &w.message);
    if let Some(doc) = doc {
        if let Some((line, column)) = doc.locate(&w.path, w.span.map(|s| s.start)) {
            out.push_str(&arrow(&doc.name, line, column));
        }
    }
    out.push_str(&note("field", &field_text(&w.path, w.span)));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Appends the source line `line` of `text` with carets under `width` characters from
    /// `column`.
    fn source_snippet(out: &mut String, text: &str, line: usize, column: usize, width: usize) {
        let lines = Lines::of(text);
        if let Some(text) = lines.line(text, line) {
            line_snippet(out, text, line, column, width);
        }
    }

    /// A snippet as printed where colour is off.
    fn plain(out: &str) -> String {
        anstream::adapter::strip_str(out).to_string()
    }

    #[test]
    fn short_lines_are_shown_whole() {
        let mut out = String::new();
        source_snippet(&mut out, "a: 1\nb: ${x\n", 2, 4, 4);
        assert_eq!(plain(&out), "  |\n2 | b: ${x\n  |    ^^^\n");
    }

    /// Lines are indexed as far as the last line an error is on, whichever error that is;
    /// an error about another file shows no snippet of this one.
    #[test]
    fn every_error_shows_its_line_whatever_their_order() {
        use strata_core::{ErrorKind, Layer, Location};
        let doc = Document::unparsed("d.yaml", "a: 1\nb: 2\nc: 3\nd: 4\n".to_string());
        let at = |file: &str, line| {
            Error::new(Layer::REQUEST, ErrorKind::Invalid, format!("on {line}")).at_location(
                Location {
                    file: file.into(),
                    line,
                    column: 1,
                },
            )
        };
        let errors = [at("d.yaml", 2), at("other.yaml", 9), at("d.yaml", 3)];
        assert_eq!(
            plain(&format_errors(&errors, Some(&doc))),
            "error[request]: on 2\n  --> d.yaml:2:1\n  |\n2 | b: 2\n  | ^\n\
             error[request]: on 9\n  --> other.yaml:9:1\n\
             error[request]: on 3\n  --> d.yaml:3:1\n  |\n3 | c: 3\n  | ^\n"
        );
    }

    /// A 10 MB line in a snippet made a 20 MB error message (issue 7's adversarial suite).
    /// Lines up to 512 characters are still shown whole.
    #[test]
    fn long_lines_are_cut_to_a_window_around_the_column() {
        let line = format!("{}X{}", "a".repeat(5_000_000), "b".repeat(5_000_000));
        let mut out = String::new();
        source_snippet(&mut out, &line, 1, 5_000_001, 3);
        let shown = format!("…{}X{}…", "a".repeat(40), "b".repeat(79));
        assert_eq!(
            plain(&out),
            format!("  |\n1 | {shown}\n  | {}^^^\n", " ".repeat(41))
        );
        let mut out = String::new();
        source_snippet(&mut out, &line, 1, 1, 1);
        assert_eq!(
            plain(&out),
            format!("  |\n1 | {}…\n  | ^\n", "a".repeat(120))
        );
    }
}
