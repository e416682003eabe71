//! `strata check`: every template mistake of a project, before anything runs.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Args, ValueEnum};
use strata_app::{Diagnostic, Failure, Report, Severity};

use crate::outcome::{diagnostics_text, open_project_as, plural, report};

/// Output of `strata check`.
#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum CheckFormat {
    /// rustc-style diagnostics grouped by file, with a summary.
    Human,
    /// A JSON array, one object per diagnostic.
    Json,
}

/// Options of `strata check`.
#[derive(Debug, Args)]
pub struct CheckArgs {
    /// The project root (default: the nearest ancestor of the current directory with tools/)
    pub project: Option<PathBuf>,
    /// Output format
    #[arg(long, value_enum, default_value = "human")]
    pub format: CheckFormat,
    /// Exit 1 on warnings too
    #[arg(long)]
    pub deny_warnings: bool,
}

/// Runs `strata check`.
pub fn run(args: CheckArgs) -> ExitCode {
    let json = matches!(args.format, CheckFormat::Json);
    let project = match open_project_as(args.project.as_deref(), None, json) {
        Ok(p) => p,
        Err(code) => return code,
    };
    let found = match project.check() {
        Ok(r) => r,
        Err(e) => return report(Failure::Error(e), Some(&project), json),
    };
    let text = match args.format {
        CheckFormat::Human => human(&found, &project.root),
        CheckFormat::Json => {
            let all: Vec<_> = found.diagnostics.iter().map(Diagnostic::to_json).collect();
            serde_json::to_string_pretty(&all).unwrap_or_default() + "\n"
        }
    };
    crate::style::print_all(&text);
    let errors = found.count(Severity::Error);
    let warnings = found.count(Severity::Warning);
    if errors > 0 || (args.deny_warnings && warnings > 0) {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}

/// rustc-style diagnostics, grouped by file (they are sorted), then a summary line.
pub fn human(report: &Report, root: &Path) -> String {
    let mut out = diagnostics_text(report.diagnostics.iter(), root);
    let _ = writeln!(
        out,
        "checked {}: {}, {}",
        plural(report.files, "file"),
        plural(report.count(Severity::Error), "error"),
        plural(report.count(Severity::Warning), "warning")
    );
    out
}
