//! How every command reports: opening the project, an error or a [`Failure`] for people
//! (rustc-style, with a snippet of the file it points into) or as JSON on stdout, and the
//! exit code — the same with and without `--json`.

use std::fmt::Write as _;
use std::io::Write as _;
use std::path::Path;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};

use strata_app::{App, Diagnostic, Failure, Project, Report, EXIT_STRATA};
use strata_core::Error;
use strata_doc::{Document, Lines};

use crate::report::{arrow, format_error, format_errors, headline, line_snippet, note};

/// Exit code when strata itself fails before anything runs.
pub(crate) const STRATA_FAILED: u8 = EXIT_STRATA;

/// The project of a command: the current directory's project (the nearest ancestor with
/// `tools/`; `-C DIR` has changed into DIR before the command runs), or, for a `file`
/// outside it, the nearest ancestor with `tools/` of the file's folder (see `App::open`). A
/// failure is printed and returned as the exit code.
pub(crate) fn open_project(file: Option<&Path>) -> Result<App, ExitCode> {
    App::open(None, file).map(opened).map_err(|e| {
        print_error(&e, None);
        ExitCode::from(STRATA_FAILED)
    })
}

/// Whether `-v/--verbose` was given (set once, before the command runs).
static VERBOSE: AtomicBool = AtomicBool::new(false);

/// Remembers `-v/--verbose` for [`opened`].
pub(crate) fn set_verbose(on: bool) {
    VERBOSE.store(on, Ordering::Relaxed);
}

/// The project a command opened; with `-v`, a line on stderr saying which it is and where
/// its settings come from (`strata: project /path (strata.yaml)`, or `(no strata.yaml)`).
pub(crate) fn opened(app: App) -> App {
    if VERBOSE.load(Ordering::Relaxed) {
        let file = strata_app::settings::FILE;
        let from = match app.root.join(file).is_file() {
            true => file.to_string(),
            false => format!("no {file}"),
        };
        anstream::eprintln!("strata: project {} ({from})", app.root.display());
    }
    app
}

/// [`open_project`] for a command that takes `--json` (the failure is printed as JSON), or
/// the project of `dir` when a command names one (`strata check DIR`).
pub(crate) fn open_project_as(
    dir: Option<&Path>,
    file: Option<&Path>,
    json: bool,
) -> Result<App, ExitCode> {
    App::open(dir, file)
        .map(opened)
        .map_err(|e| report(Failure::Error(e), None, json))
}

/// Prints an error, with a snippet of the file it points into when there is one.
pub(crate) fn print_error(err: &Error, project: Option<&Project>) {
    // A snippet of `.env` would show a secret value: those errors get no snippet. Nor do
    // files outside the project (a link to one is refused before it is read, and its
    // contents are never shown).
    let doc = err
        .location()
        .filter(|loc| !loc.file.ends_with(".env"))
        .and_then(|loc| {
            let text = match project {
                Some(p) => p.read_text(&p.root.join(&loc.file)).ok()?,
                None => {
                    let path = Path::new(&loc.file);
                    let real = strata_doc::confine(path, Path::new("."), &loc.file, "").ok()?;
                    std::fs::read_to_string(real).ok()?
                }
            };
            Some(Document::unparsed(&loc.file, text))
        });
    anstream::eprint!("{}", format_error(err, doc.as_ref()));
}

/// Prints errors rustc-style, with a snippet of `doc` when they point into it.
pub(crate) fn print_errors(errors: &[Error], doc: Option<&Document>) {
    let text = format_errors(errors, doc);
    let _ = anstream::stderr().lock().write_all(text.as_bytes());
}

/// Prints a failure — as `{"ok": false, "error": …}` on stdout with `json`, for people on
/// stderr otherwise — and returns its exit code.
pub(crate) fn report(failure: Failure, project: Option<&Project>, json: bool) -> ExitCode {
    let code = ExitCode::from(failure.exit_code());
    if json {
        let text = serde_json::to_string_pretty(&failure.to_json()).unwrap_or_default() + "\n";
        crate::output::print(&text);
        return code;
    }
    match failure {
        Failure::Error(e) => print_error(&e, project),
        Failure::Document { errors, doc } => print_errors(&errors, Some(&doc)),
        Failure::Refused(r) => {
            let root = project.map_or(Path::new("."), |p| p.root.as_path());
            let mut shown = Report::from(r.diagnostics);
            shown.bound();
            let mut out = report_text(&shown, root);
            out.push_str(&headline("error", "check", r.error.message()));
            if let Some(hint) = r.error.hint() {
                out.push_str(&note("help", hint));
            }
            let _ = anstream::stderr().lock().write_all(out.as_bytes());
        }
    }
    code
}

/// The diagnostics of `report` rustc-style, by file, each file's followed by what it does
/// not show (`error[strata]: N more diagnostics of this file are not shown (…)`, at the first
/// of them); files are read from `root`.
pub(crate) fn report_text(report: &Report, root: &Path) -> String {
    let mut out = String::new();
    for file in report.by_file() {
        out.push_str(&diagnostics_text(file.diagnostics.iter(), root));
        if let Some(o) = file.omitted {
            let (line, column) = o.first();
            out.push_str(&headline(o.severity().name(), "strata", &o.message()));
            out.push_str(&arrow(&o.file, line, column));
            out.push_str(&note("help", &o.hint()));
            out.push('\n');
        }
    }
    out
}

/// Diagnostics rustc-style, each followed by a blank line; files are read from `root`.
pub(crate) fn diagnostics_text<'d>(
    diagnostics: impl Iterator<Item = &'d Diagnostic>,
    root: &Path,
) -> String {
    let mut out = String::new();
    let diagnostics: Vec<&Diagnostic> = diagnostics.collect();
    // The file of the diagnostics being printed (they are sorted by file), read and split
    // into lines once, as far as the last line they are on.
    let mut file_text: Option<(String, String, Lines)> = None;
    for (i, d) in diagnostics.iter().enumerate() {
        if file_text.as_ref().map(|(f, _, _)| f) != Some(&d.file) {
            // Only files inside the project are quoted (a link leading out is never read).
            let text = strata_doc::confine(&root.join(&d.file), root, &d.file, "")
                .ok()
                .and_then(|real| std::fs::read_to_string(real).ok())
                .unwrap_or_default();
            let last = diagnostics[i..]
                .iter()
                .take_while(|other| other.file == d.file)
                .map(|other| other.line)
                .max()
                .unwrap_or(0);
            let lines = Lines::first(&text, last);
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

/// `n word` or `n words`.
pub(crate) fn plural(n: usize, word: &str) -> String {
    let mut out = String::new();
    let _ = write!(out, "{n} {word}{}", if n == 1 { "" } else { "s" });
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use strata_core::FieldPath;

    /// Each diagnostic of a file shows its line, whatever their order; a file's lines are
    /// read as far as the last line one of its diagnostics is on.
    #[test]
    fn every_diagnostic_shows_its_line_whatever_their_order() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.yaml"), "a: 1\nb: 2\nc: 3\n").unwrap();
        std::fs::write(dir.path().join("b.yaml"), "x: 1\n").unwrap();
        let at = |file: &str, line| {
            Diagnostic::new(
                strata_app::Code::Syntax,
                file,
                (line, 1),
                FieldPath::root(),
                format!("on {line}"),
            )
        };
        let all = [
            at("a.yaml", 2),
            at("a.yaml", 3),
            at("a.yaml", 1),
            at("b.yaml", 1),
        ];
        let text =
            anstream::adapter::strip_str(&diagnostics_text(all.iter(), dir.path())).to_string();
        assert_eq!(
            text,
            "error[S001]: on 2\n  --> a.yaml:2:1\n  |\n2 | b: 2\n  | ^\n\n\
             error[S001]: on 3\n  --> a.yaml:3:1\n  |\n3 | c: 3\n  | ^\n\n\
             error[S001]: on 1\n  --> a.yaml:1:1\n  |\n1 | a: 1\n  | ^\n\n\
             error[S001]: on 1\n  --> b.yaml:1:1\n  |\n1 | x: 1\n  | ^\n\n"
        );
    }
}
