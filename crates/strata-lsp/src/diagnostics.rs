//! `strata check`'s report as the protocol's diagnostics, file by file: the same code,
//! message, span and help, and its JSON form (what `strata check --json` prints) as the
//! diagnostic's data.

use std::collections::BTreeMap;

use lsp_types::{Diagnostic as LspDiagnostic, DiagnosticSeverity, NumberOrString};
use serde_json::Value;
use strata_app::{Diagnostic, Report, Severity};

use crate::text::range_at;

/// The source every diagnostic names.
pub const SOURCE: &str = "strata";

/// The diagnostics of each file of `report` (bounded as `strata check` bounds them), by
/// file relative to the project; `text` gives a file's text, to place each one.
pub fn by_file(
    report: &Report,
    text: &dyn Fn(&str) -> Option<String>,
) -> BTreeMap<String, Vec<LspDiagnostic>> {
    let mut out: BTreeMap<String, Vec<LspDiagnostic>> = BTreeMap::new();
    for file in report.by_file() {
        let Some(first) = file
            .diagnostics
            .first()
            .map(|d| d.file.clone())
            .or_else(|| file.omitted.map(|o| o.file.clone()))
        else {
            continue;
        };
        let body = text(&first).unwrap_or_default();
        let list = out.entry(first).or_default();
        list.extend(file.diagnostics.iter().map(|d| one(d, &body)));
        if let Some(o) = file.omitted {
            let (line, column) = o.first();
            list.push(shaped(
                o.severity(),
                "strata",
                format!("{}\nhelp: {}", o.message(), o.hint()),
                range_at(&body, line, column, 1),
                o.to_json(),
            ));
        }
    }
    out
}

/// One diagnostic of the check, placed in the text of its file.
pub fn one(d: &Diagnostic, text: &str) -> LspDiagnostic {
    let len = d.span.map_or(1, |s| s.end.saturating_sub(s.start));
    let message = match &d.help {
        Some(help) => format!("{}\nhelp: {help}", d.message),
        None => d.message.clone(),
    };
    shaped(
        d.severity,
        d.code.id(),
        message,
        range_at(text, d.line, d.column, len),
        d.to_json(),
    )
}

fn shaped(
    severity: Severity,
    code: &str,
    message: String,
    range: lsp_types::Range,
    data: Value,
) -> LspDiagnostic {
    LspDiagnostic {
        range,
        severity: Some(match severity {
            Severity::Error => DiagnosticSeverity::ERROR,
            Severity::Warning => DiagnosticSeverity::WARNING,
            Severity::Note => DiagnosticSeverity::INFORMATION,
        }),
        code: Some(NumberOrString::String(code.to_string())),
        source: Some(SOURCE.to_string()),
        message,
        data: Some(data),
        ..LspDiagnostic::default()
    }
}
