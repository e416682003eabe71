//! `strata check`: every template mistake of a project, before anything runs.

use std::fmt::Write as _;
use std::io::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, ValueEnum};
use strata_check::{check_project, Diagnostic, Report, Severity};
use strata_core::Limits;

use strata_doc::Lines;

use crate::report::line_snippet;
use crate::run::{print_error, STRATA_FAILED};

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
    /// The project root (default: the current directory)
    #[arg(default_value = ".")]
    pub project: PathBuf,
    /// Output format
    #[arg(long, value_enum, default_value = "human")]
    pub format: CheckFormat,
    /// Exit 1 on warnings too
    #[arg(long)]
    pub deny_warnings: bool,
}

/// Runs `strata check`.
pub fn run(args: CheckArgs) -> ExitCode {
    let report = match check_project(&args.project, &Limits::default()) {
        Ok(r) => r,
        Err(e) => {
            print_error(&e, None);
            return ExitCode::from(STRATA_FAILED);
        }
    };
    let text = match args.format {
        CheckFormat::Human => human(&report, &args.project),
        CheckFormat::Json => {
            let all: Vec<_> = report.diagnostics.iter().map(Diagnostic::to_json).collect();
            serde_json::to_string_pretty(&all).unwrap_or_default() + "\n"
        }
    };
    let _ = anstream::stdout().lock().write_all(text.as_bytes());
    let errors = report.count(Severity::Error);
    let warnings = report.count(Severity::Warning);
    if errors > 0 || (args.deny_warnings && warnings > 0) {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}

fn plural(n: usize, word: &str) -> String {
    format!("{n} {word}{}", if n == 1 { "" } else { "s" })
}

/// rustc-style diagnostics, grouped by file (they are sorted), then a summary line.
pub fn human(report: &Report, root: &std::path::Path) -> String {
    let mut out = String::new();
    // The file of the diagnostics being printed (they are sorted by file), read and split
    // into lines once.
    let mut file_text: Option<(String, String, Lines)> = None;
    for d in &report.diagnostics {
        if file_text.as_ref().map(|(f, _, _)| f) != Some(&d.file) {
            // Only files inside the project are quoted (a link leading out is never read).
            let text = strata_doc::confine(&root.join(&d.file), root, &d.file, "")
                .ok()
                .and_then(|real| std::fs::read_to_string(real).ok())
                .unwrap_or_default();
            let lines = Lines::of(&text);
            file_text = Some((d.file.clone(), text, lines));
        }
        let _ = writeln!(out, "{}[{}]: {}", d.severity.name(), d.code.id(), d.message);
        let _ = writeln!(out, "  --> {}:{}:{}", d.file, d.line, d.column);
        let width = d.span.map_or(1, |s| s.end - s.start);
        if let Some(line) = file_text
            .as_ref()
            .and_then(|(_, text, lines)| lines.line(text, d.line))
        {
            line_snippet(&mut out, line, d.line, d.column, width);
        }
        if !d.field.is_root() {
            let _ = writeln!(out, "   = field: {}", d.field);
        }
        if let Some(help) = &d.help {
            let _ = writeln!(out, "   = help: {help}");
        }
        out.push('\n');
    }
    let _ = writeln!(
        out,
        "checked {}: {}, {}",
        plural(report.files, "file"),
        plural(report.count(Severity::Error), "error"),
        plural(report.count(Severity::Warning), "warning")
    );
    out
}
