//! `strata check`: every template mistake of a project, before anything runs.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Args, ValueEnum};
use serde_json::Value;
use strata_app::{Diagnostic, Failure, Report, Severity};

use crate::outcome::{open_project_as, plural, report, report_text};
use crate::shared_args::SharedArgs;

/// Output of `strata check`.
#[derive(Debug, Clone, Copy, ValueEnum)]
pub(crate) enum CheckFormat {
    /// rustc-style diagnostics grouped by file, with a summary.
    Human,
    /// A JSON array, one object per diagnostic.
    Json,
}

/// Options of `strata check`.
#[derive(Debug, Args)]
pub(crate) struct CheckArgs {
    /// The project root (default: the nearest ancestor of the current
    /// directory with tools/)
    #[arg(value_name = "DIR", conflicts_with = "project")]
    pub(crate) dir: Option<PathBuf>,
    /// Output format (`--format json` is `--json`)
    #[arg(long, value_enum, default_value = "human")]
    pub(crate) format: CheckFormat,
    /// Exit 1 on warnings too (never on notes)
    #[arg(long)]
    pub(crate) deny_warnings: bool,
    /// Leave out the warnings and notes of this code (`L008`; repeatable); errors are never
    /// left out
    #[arg(long, value_name = "CODE")]
    pub(crate) allow: Vec<String>,
    #[command(flatten)]
    pub(crate) shared: SharedArgs,
}

/// Runs `strata check`.
pub(crate) fn run(args: CheckArgs) -> ExitCode {
    let json = args.shared.json || matches!(args.format, CheckFormat::Json);
    let dir = args.dir.as_deref();
    let project = match open_project_as(dir, None, json) {
        Ok(p) => p,
        Err(code) => return code,
    };
    let mut found = match project.check() {
        Ok(r) => r,
        Err(e) => return report(Failure::Error(e), Some(&project), json),
    };
    found.leave_out(|code, severity| {
        severity != Severity::Error && args.allow.iter().any(|a| a.eq_ignore_ascii_case(code.id()))
    });
    found.bound();
    let text = match json {
        false => human(&found, &project.root),
        true => serde_json::to_string_pretty(&as_json(&found)).unwrap_or_default() + "\n",
    };
    crate::output::print_styled(&text);
    let errors = found.count(Severity::Error);
    let warnings = found.count(Severity::Warning);
    if errors > 0 || (args.deny_warnings && warnings > 0) {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}

/// Each file's diagnostics, then what it does not show, as one JSON list.
fn as_json(report: &Report) -> Vec<Value> {
    let mut all = Vec::new();
    for file in report.by_file() {
        all.extend(file.diagnostics.iter().map(Diagnostic::to_json));
        all.extend(file.omitted.map(|o| o.to_json()));
    }
    all
}

/// rustc-style diagnostics, grouped by file (they are sorted), each file's followed by what
/// it does not show, then a summary line (notes are counted only when there are some).
pub(crate) fn human(report: &Report, root: &Path) -> String {
    let mut out = report_text(report, root);
    let notes = match report.count(Severity::Note) {
        0 => String::new(),
        n => format!(", {}", plural(n, "note")),
    };
    let _ = writeln!(
        out,
        "checked {}: {}, {}{notes}",
        plural(report.files, "file"),
        plural(report.count(Severity::Error), "error"),
        plural(report.count(Severity::Warning), "warning")
    );
    out
}
