//! `strata check`: every template mistake of a project, before anything runs.

use std::fmt::Write as _;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Args, ValueEnum};
use strata_check::{check_file, check_project, Code, Diagnostic, Report, Severity, Target};

use strata_doc::Lines;
use strata_exec::Project;

use crate::report::{arrow, headline, line_snippet, note};
use crate::run::{open_project, print_error, STRATA_FAILED};

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
    let project = match open_project(args.project.as_deref(), None) {
        Ok(p) => p,
        Err(code) => return code,
    };
    let report = match check_project(&project.root, &project.limits) {
        Ok(r) => r,
        Err(e) => {
            print_error(&e, None);
            return ExitCode::from(STRATA_FAILED);
        }
    };
    let text = match args.format {
        CheckFormat::Human => human(&report, &project.root),
        CheckFormat::Json => {
            let all: Vec<_> = report.diagnostics.iter().map(Diagnostic::to_json).collect();
            serde_json::to_string_pretty(&all).unwrap_or_default() + "\n"
        }
    };
    crate::style::print_all(&text);
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

/// Diagnostics rustc-style, each followed by a blank line; files are read from `root`.
fn diagnostics_text<'d>(diagnostics: impl Iterator<Item = &'d Diagnostic>, root: &Path) -> String {
    let mut out = String::new();
    // The file of the diagnostics being printed (they are sorted by file), read and split
    // into lines once.
    let mut file_text: Option<(String, String, Lines)> = None;
    for d in diagnostics {
        if file_text.as_ref().map(|(f, _, _)| f) != Some(&d.file) {
            // Only files inside the project are quoted (a link leading out is never read).
            let text = strata_doc::confine(&root.join(&d.file), root, &d.file, "")
                .ok()
                .and_then(|real| std::fs::read_to_string(real).ok())
                .unwrap_or_default();
            let lines = Lines::of(&text);
            file_text = Some((d.file.clone(), text, lines));
        }
        out.push_str(&headline(d.severity.name(), d.code.id(), &d.message));
        out.push_str(&arrow(&d.file, d.line, d.column));
        let width = d.span.map_or(1, |s| s.end - s.start);
        if let Some(line) = file_text
            .as_ref()
            .and_then(|(_, text, lines)| lines.line(text, d.line))
        {
            line_snippet(&mut out, line, d.line, d.column, width);
        }
        if !d.field.is_root() {
            out.push_str(&note("field", &d.field.to_string()));
        }
        if let Some(help) = &d.help {
            out.push_str(&note("help", help));
        }
        out.push('\n');
    }
    out
}

/// The errors a tool run reports itself before the tool runs, as it always has: files that
/// do not load, broken executor chains, unknown tools, parameter cycles and chains past the
/// limit. With one of them a tool run goes ahead and fails on it.
const RUN_REPORTS: [Code; 6] = [
    Code::Syntax,
    Code::Load,
    Code::Chain,
    Code::UnknownTool,
    Code::ParamCycle,
    Code::ParamChain,
];

/// Checks what `strata run` is about to run (`shown` names it; directives and graphs are
/// checked once they loaded) and the tools it calls. When the check finds errors that the
/// run would not report itself (an unknown input or parameter, a misspelt step or
/// namespace, parameters that cannot match the tool, a tool called later that is broken),
/// they are printed (warnings are left to `strata check`) and true is returned: nothing
/// runs.
pub fn refuse_run(project: &Project, target: Target<'_>, shown: &str) -> bool {
    let report = check_file(project, target);
    let errors = report.count(Severity::Error);
    let reported_by_run = matches!(target, Target::Tool(_))
        && report
            .diagnostics
            .iter()
            .any(|d| d.severity == Severity::Error && RUN_REPORTS.contains(&d.code));
    if errors == 0 || reported_by_run {
        return false;
    }
    let mut out = diagnostics_text(
        report
            .diagnostics
            .iter()
            .filter(|d| d.severity == Severity::Error),
        &project.root,
    );
    out.push_str(&headline(
        "error",
        "check",
        &format!("`{shown}` was not run: {} found", plural(errors, "error")),
    ));
    out.push_str(&note(
        "help",
        "`strata check` lists every error and warning of the project",
    ));
    let _ = anstream::stderr().lock().write_all(out.as_bytes());
    true
}
