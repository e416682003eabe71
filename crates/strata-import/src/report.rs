//! The import report: `IMPORT-REPORT.json` (what `--json` prints), `IMPORT-REPORT.md`, the
//! messages for people on stderr, and the exit code. Every path in it is relative and its
//! order is the walk's (sorted), so two imports of one tree give the same bytes.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use serde_json::{json, Value};
use strata_core::Error;

use crate::driver::{Era, ItemKind};
use crate::model::{FileImport, Outcome};

/// A project-level notice (given once, not per file).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Notice {
    /// `IMP-signature` or `IMP-llm`.
    pub code: String,
    /// The notice, for people.
    pub message: String,
}

/// One RyeOS file in the report.
#[derive(Clone, Debug)]
pub struct Entry {
    /// 0 for the project, `n` for the n-th `--space`.
    pub space: usize,
    /// The era detected for the file.
    pub era: Era,
    /// What the file is.
    pub kind: ItemKind,
    /// What converting it gave.
    pub import: FileImport,
    /// Errors `strata check` found in the files written for it.
    pub check_errors: usize,
}

/// What `strata check` said about the new project.
#[derive(Clone, Debug, Default)]
pub struct CheckSummary {
    /// Number of errors.
    pub errors: usize,
    /// Number of warnings.
    pub warnings: usize,
    /// Number of files read.
    pub files: usize,
    /// The diagnostics as `strata check --format json` prints them.
    pub diagnostics: Vec<Value>,
    /// When the check itself could not run, why.
    pub failure: Option<String>,
}

impl CheckSummary {
    /// From a check report.
    pub fn of(report: &strata_app::Report) -> CheckSummary {
        CheckSummary {
            errors: report.count(strata_app::Severity::Error),
            warnings: report.count(strata_app::Severity::Warning),
            files: report.files,
            diagnostics: report.diagnostics.iter().map(|d| d.to_json()).collect(),
            failure: None,
        }
    }

    /// A check that could not run (counted as one error).
    pub fn failed(e: &Error) -> CheckSummary {
        CheckSummary {
            errors: 1,
            failure: Some(e.to_string()),
            ..CheckSummary::default()
        }
    }

    /// The number of errors reported in each file (by its path in the new project).
    pub fn errors_by_file(&self) -> BTreeMap<&str, usize> {
        let mut errors = BTreeMap::new();
        for d in self.diagnostics.iter().filter(|d| d["severity"] == "error") {
            if let Some(file) = d["file"].as_str() {
                *errors.entry(file).or_default() += 1;
            }
        }
        errors
    }
}

/// The outcome of a whole import.
#[derive(Clone, Debug)]
pub struct ImportReport {
    /// How many `--space` directories were given.
    pub spaces: usize,
    /// Every RyeOS file converted (project files, then space items used), in walk order.
    pub entries: Vec<Entry>,
    /// Project files only kept under `.ai/` (code modules, configs, knowledge, …).
    pub kept: Vec<String>,
    /// The project-level notices.
    pub notices: Vec<Notice>,
    /// The check of the new project.
    pub check: CheckSummary,
}

impl ImportReport {
    /// Files imported (written, possibly with warnings).
    pub fn imported(&self) -> usize {
        self.entries
            .iter()
            .filter(|e| e.import.outcome == Outcome::Imported)
            .count()
    }

    /// Files refused.
    pub fn refused(&self) -> usize {
        self.entries.len() - self.imported()
    }

    /// Files imported whose written files `strata check` accepts (no error).
    pub fn accepted(&self) -> usize {
        self.entries
            .iter()
            .filter(|e| e.import.outcome == Outcome::Imported && e.check_errors == 0)
            .count()
    }

    /// Warnings over all files.
    pub fn warnings(&self) -> usize {
        self.entries.iter().map(|e| e.import.warnings.len()).sum()
    }

    /// 0: every file imported and the check clean; 3: some file refused or check errors.
    pub fn exit_code(&self) -> u8 {
        if self.refused() == 0 && self.check.errors == 0 {
            0
        } else {
            3
        }
    }

    /// The report as JSON (`IMPORT-REPORT.json`, `--json`).
    pub fn to_json(&self) -> Value {
        let files: Vec<Value> = self.entries.iter().map(entry_json).collect();
        let notices: Vec<Value> = self
            .notices
            .iter()
            .map(|n| json!({"code": n.code, "message": n.message}))
            .collect();
        let mut check = json!({
            "errors": self.check.errors,
            "warnings": self.check.warnings,
            "files": self.check.files,
            "diagnostics": self.check.diagnostics,
        });
        if let Some(f) = &self.check.failure {
            check["failure"] = json!(f);
        }
        json!({
            "importer": "strata import ryeos",
            "summary": {
                "files": self.entries.len(),
                "imported": self.imported(),
                "refused": self.refused(),
                "accepted_by_check": self.accepted(),
                "warnings": self.warnings(),
                "kept": self.kept.len(),
                "spaces": self.spaces,
            },
            "files": files,
            "kept": self.kept,
            "notices": notices,
            "check": check,
            "exit_code": self.exit_code(),
        })
    }

    /// The messages for people: one line per warning and refusal, the notices, a summary.
    pub fn messages(&self) -> String {
        let mut out = String::new();
        for e in &self.entries {
            let imp = &e.import;
            for w in &imp.warnings {
                let _ = writeln!(
                    out,
                    "warning[{}]: {}: {}",
                    w.code,
                    at(&imp.source, w.line, w.column),
                    w.message
                );
            }
            if let Some(r) = &imp.reason {
                let _ = writeln!(out, "refused[{}]: {}: {}", r.code, imp.source, r.message);
            }
        }
        for n in &self.notices {
            let _ = writeln!(out, "note[{}]: {}", n.code, n.message);
        }
        let _ = writeln!(
            out,
            "imported {} of {} RyeOS files ({} refused, {} warnings); strata check: {} errors, {} warnings (IMPORT-REPORT.md has the details)",
            self.imported(),
            self.entries.len(),
            self.refused(),
            self.warnings(),
            self.check.errors,
            self.check.warnings
        );
        out
    }

    /// `IMPORT-REPORT.md`.
    pub fn to_markdown(&self) -> String {
        let mut out = String::new();
        let _ = writeln!(out, "# RyeOS import report\n");
        let _ = writeln!(out, "Written by `strata import ryeos`. Each RyeOS file is listed with what it became; the RyeOS files themselves are kept, byte for byte, under `.ai/`.\n");
        let _ = writeln!(out, "| files | imported | refused | warnings | kept under .ai/ only | check errors | check warnings |");
        let _ = writeln!(out, "|---|---|---|---|---|---|---|");
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {} | {} | {} |\n",
            self.entries.len(),
            self.imported(),
            self.refused(),
            self.warnings(),
            self.kept.len(),
            self.check.errors,
            self.check.warnings
        );
        if !self.notices.is_empty() {
            let _ = writeln!(out, "## Notices\n");
            for n in &self.notices {
                let _ = writeln!(out, "* **{}** — {}", n.code, n.message);
            }
            out.push('\n');
        }
        let _ = writeln!(out, "## Files\n");
        let _ = writeln!(
            out,
            "| source | era | kind | outcome | written | warnings |"
        );
        let _ = writeln!(out, "|---|---|---|---|---|---|");
        for e in &self.entries {
            let imp = &e.import;
            let written: Vec<String> = imp
                .written
                .iter()
                .map(|w| format!("`{}`", w.path))
                .collect();
            let outcome = match &imp.reason {
                Some(r) => format!("refused ({})", r.code),
                None => "imported".into(),
            };
            let _ = writeln!(
                out,
                "| `{}`{} | {} | {} | {} | {} | {} |",
                imp.source,
                space_label(e.space),
                e.era.name(),
                e.kind.name(),
                outcome,
                written.join("<br>"),
                imp.warnings.len()
            );
        }
        out.push('\n');
        for e in &self.entries {
            let imp = &e.import;
            if imp.warnings.is_empty() && imp.reason.is_none() && imp.rewrites.is_empty() {
                continue;
            }
            let _ = writeln!(out, "### `{}`{}\n", imp.source, space_label(e.space));
            if let Some(r) = &imp.reason {
                let _ = writeln!(out, "Refused — **{}**: {}\n", r.code, md(&r.message));
            }
            for w in &imp.warnings {
                let _ = writeln!(
                    out,
                    "* warning **{}** ({}): {}",
                    w.code,
                    at("line", w.line, w.column),
                    md(&w.message)
                );
            }
            for r in &imp.rewrites {
                let _ = writeln!(out, "* rewrite: {}", md(r));
            }
            out.push('\n');
        }
        if !self.kept.is_empty() {
            let _ = writeln!(out, "## Kept under `.ai/` only\n");
            for k in &self.kept {
                let _ = writeln!(out, "* `{k}`");
            }
            out.push('\n');
        }
        let _ = writeln!(out, "## `strata check` of the new project\n");
        if let Some(f) = &self.check.failure {
            let _ = writeln!(out, "The check could not run: {}\n", md(f));
        }
        let _ = writeln!(
            out,
            "{} files checked: {} errors, {} warnings.\n",
            self.check.files, self.check.errors, self.check.warnings
        );
        for d in &self.check.diagnostics {
            let _ = writeln!(
                out,
                "* {} **{}** `{}:{}:{}`: {}",
                d["severity"].as_str().unwrap_or(""),
                d["code"].as_str().unwrap_or(""),
                d["file"].as_str().unwrap_or(""),
                d["line"],
                d["column"],
                md(d["message"].as_str().unwrap_or(""))
            );
        }
        out
    }
}

fn entry_json(e: &Entry) -> Value {
    let imp = &e.import;
    let warnings: Vec<Value> = imp
        .warnings
        .iter()
        .map(|w| json!({"code": w.code, "message": w.message, "line": w.line, "column": w.column}))
        .collect();
    let written: Vec<&str> = imp.written.iter().map(|w| w.path.as_str()).collect();
    let mut v = json!({
        "source": imp.source,
        "era": e.era.name(),
        "kind": e.kind.name(),
        "outcome": match imp.outcome { Outcome::Imported => "imported", Outcome::Refused => "refused" },
        "written": written,
        "warnings": warnings,
        "rewrites": imp.rewrites,
    });
    if e.space > 0 {
        v["space"] = json!(e.space);
    }
    if let Some(r) = &imp.reason {
        v["reason"] = json!({"code": r.code, "message": r.message});
    }
    if e.check_errors > 0 {
        v["check_errors"] = json!(e.check_errors);
    }
    v
}

/// `file:line:col`, or `file` alone for a whole-file message.
fn at(file: &str, line: usize, column: usize) -> String {
    if line == 0 {
        file.to_owned()
    } else {
        format!("{file}:{line}:{column}")
    }
}

fn space_label(space: usize) -> String {
    if space == 0 {
        String::new()
    } else {
        format!(" (space {space})")
    }
}

/// Text safe in a Markdown table cell or list item.
fn md(s: &str) -> String {
    s.replace('|', "\\|").replace('\n', " ")
}
