//! The report of a check: its diagnostics, each once, sorted by file and position — and
//! where a file has more than a person reads, its first ones and a count of the rest.
//!
//! A bounded report ([`Report::bounded`], what a check of the whole project makes) keeps,
//! while the project is checked, the first [`SHOWN_PER_FILE`] diagnostics of each code of a
//! file (by position) and counts the rest, so that a file of 100,000 mistakes costs what its
//! first ones do. [`Report::bound`] then cuts each file to its first [`SHOWN_PER_FILE`],
//! errors first, once the caller has left out what it does not want
//! ([`Report::leave_out`]): the first diagnostics of a file among the codes left are among
//! the first of their own code, so the cut is the same as if every diagnostic had been kept.

use std::collections::hash_map::DefaultHasher;
use std::collections::{BinaryHeap, HashMap, HashSet};
use std::hash::{Hash, Hasher};

use serde_json::{json, Value};
use strata_core::ErrorKind;

use crate::diagnostic::{Code, Diagnostic, Severity};

/// How many diagnostics of one file a check shows, errors first; the rest are counted
/// ([`Omitted`]). The loaders show as many errors of one file.
pub const SHOWN_PER_FILE: usize = 20;

/// The outcome of checking a project.
#[derive(Debug, Clone, Default)]
pub struct Report {
    /// The diagnostics shown, sorted by file, line and column.
    pub diagnostics: Vec<Diagnostic>,
    /// What each file has beyond the diagnostics shown, sorted by file.
    pub omitted: Vec<Omitted>,
    /// How many files were read.
    pub files: usize,
    /// A hash of each diagnostic pushed so far, to drop repeats in constant time without
    /// keeping them.
    seen: HashSet<u64>,
    /// How many diagnostics of one code a file keeps while it is checked; `None`: all.
    per_code: Option<usize>,
    /// While checking a bounded report: each file's diagnostics, by code and severity.
    groups: HashMap<String, Vec<Group>>,
    /// How many diagnostics were pushed: the order of those at one position.
    pushed: u64,
}

/// The diagnostics of one code and severity a file keeps while it is checked, and a count
/// of the rest.
#[derive(Debug, Clone)]
struct Group {
    code: Code,
    severity: Severity,
    /// The first ones by position; the last of them on top.
    kept: BinaryHeap<Ranked>,
    /// How many more there were, and where the first of them is.
    more: usize,
    first: (usize, usize),
}

/// A diagnostic with the order it takes in its group: position, then the order pushed.
#[derive(Debug, Clone)]
struct Ranked {
    rank: (usize, usize, u64),
    diagnostic: Diagnostic,
}

impl PartialEq for Ranked {
    fn eq(&self, other: &Self) -> bool {
        self.rank == other.rank
    }
}

impl Eq for Ranked {}

impl PartialOrd for Ranked {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Ranked {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.rank.cmp(&other.rank)
    }
}

/// The diagnostics of one file that are counted, not shown.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Omitted {
    /// The file, relative to the project.
    pub file: String,
    /// How many of each code and severity, in the order of their codes.
    pub counts: Vec<OmittedCode>,
}

/// How many diagnostics of one code and severity a file does not show, and where the first
/// of them is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OmittedCode {
    /// The code.
    pub code: Code,
    /// The severity.
    pub severity: Severity,
    /// How many.
    pub count: usize,
    /// The line and column of the first of them.
    pub first: (usize, usize),
}

impl Omitted {
    /// How many of `severity`.
    pub fn count(&self, severity: Severity) -> usize {
        self.counts
            .iter()
            .filter(|c| c.severity == severity)
            .map(|c| c.count)
            .sum()
    }

    /// The worst severity among them.
    pub fn severity(&self) -> Severity {
        self.counts
            .iter()
            .map(|c| c.severity)
            .min()
            .unwrap_or(Severity::Note)
    }

    /// The line and column of the first of them.
    pub fn first(&self) -> (usize, usize) {
        self.counts.iter().map(|c| c.first).min().unwrap_or((1, 1))
    }

    /// `N more diagnostics of this file are not shown (N errors, N warnings)`.
    pub fn message(&self) -> String {
        let total: usize = self.counts.iter().map(|c| c.count).sum();
        let each: Vec<String> = [Severity::Error, Severity::Warning, Severity::Note]
            .into_iter()
            .map(|s| (s, self.count(s)))
            .filter(|(_, n)| *n > 0)
            .map(|(s, n)| plural(n, s.name()))
            .collect();
        format!(
            "{} of this file {} not shown ({})",
            plural(total, "more diagnostic"),
            if total == 1 { "is" } else { "are" },
            each.join(", ")
        )
    }

    /// What to do about them.
    pub fn hint(&self) -> String {
        format!(
            "a file shows its first {SHOWN_PER_FILE} diagnostics, errors first: fix them, then check again"
        )
    }

    /// The JSON form: a diagnostic's shape (code `strata`, the worst severity, at the first
    /// of them) with `omitted`, how many of each code and severity.
    pub fn to_json(&self) -> Value {
        let (line, column) = self.first();
        let counts: Vec<Value> = self
            .counts
            .iter()
            .map(|c| json!({"code": c.code.id(), "severity": c.severity.name(), "count": c.count}))
            .collect();
        json!({
            "kind": ErrorKind::Limit.name(),
            "message": self.message(),
            "hint": self.hint(),
            "file": self.file,
            "line": line,
            "column": column,
            "severity": self.severity().name(),
            "code": "strata",
            "omitted": counts,
        })
    }

    /// Counts `n` more of `code` and `severity`, the first at `at`.
    fn add(&mut self, code: Code, severity: Severity, n: usize, at: (usize, usize)) {
        let key = (code.id(), severity);
        match self
            .counts
            .binary_search_by(|c| (c.code.id(), c.severity).cmp(&key))
        {
            Ok(i) => {
                let c = &mut self.counts[i];
                c.count += n;
                c.first = c.first.min(at);
            }
            Err(i) => self.counts.insert(
                i,
                OmittedCode {
                    code,
                    severity,
                    count: n,
                    first: at,
                },
            ),
        }
    }
}

/// `n word` or `n words`.
fn plural(n: usize, word: &str) -> String {
    format!("{n} {word}{}", if n == 1 { "" } else { "s" })
}

/// The diagnostics of one file, and what it does not show.
#[derive(Debug, Clone, Copy)]
pub struct FileReport<'r> {
    /// The diagnostics shown, by position.
    pub diagnostics: &'r [Diagnostic],
    /// What is counted, not shown.
    pub omitted: Option<&'r Omitted>,
}

impl Report {
    /// A report that keeps, while checking, the first [`SHOWN_PER_FILE`] diagnostics of each
    /// code of a file and counts the rest.
    pub fn bounded() -> Report {
        Report {
            per_code: Some(SHOWN_PER_FILE),
            ..Report::default()
        }
    }

    /// Number of diagnostics of `severity`, shown or counted.
    pub fn count(&self, severity: Severity) -> usize {
        let shown = self
            .diagnostics
            .iter()
            .filter(|d| d.severity == severity)
            .count();
        shown
            + self
                .omitted
                .iter()
                .map(|o| o.count(severity))
                .sum::<usize>()
    }

    /// Number of diagnostics, shown or counted.
    pub fn total(&self) -> usize {
        [Severity::Error, Severity::Warning, Severity::Note]
            .into_iter()
            .map(|s| self.count(s))
            .sum()
    }

    /// Each file's diagnostics and what it does not show, by file.
    pub fn by_file(&self) -> Vec<FileReport<'_>> {
        let mut out = Vec::new();
        let (mut shown, mut omitted) = (&self.diagnostics[..], &self.omitted[..]);
        loop {
            let file = match (shown.first(), omitted.first()) {
                (Some(d), Some(o)) => d.file.as_str().min(o.file.as_str()),
                (Some(d), None) => d.file.as_str(),
                (None, Some(o)) => o.file.as_str(),
                (None, None) => return out,
            };
            let n = shown.iter().take_while(|d| d.file == file).count();
            let (diagnostics, rest) = shown.split_at(n);
            shown = rest;
            let this = omitted.first().filter(|o| o.file == file);
            if this.is_some() {
                omitted = &omitted[1..];
            }
            out.push(FileReport {
                diagnostics,
                omitted: this,
            });
        }
    }

    /// Leaves out, shown or counted, every diagnostic `out` says of its code and severity.
    pub fn leave_out(&mut self, out: impl Fn(Code, Severity) -> bool) {
        self.diagnostics.retain(|d| !out(d.code, d.severity));
        for o in &mut self.omitted {
            o.counts.retain(|c| !out(c.code, c.severity));
        }
        self.omitted.retain(|o| !o.counts.is_empty());
    }

    /// Shows the first [`SHOWN_PER_FILE`] diagnostics of each file — errors, then
    /// warnings, then notes, each by position — and counts the rest.
    pub fn bound(&mut self) {
        let mut all = std::mem::take(&mut self.diagnostics);
        all.sort_by(|a, b| {
            (a.file.as_str(), a.severity, a.line, a.column, a.code.id()).cmp(&(
                b.file.as_str(),
                b.severity,
                b.line,
                b.column,
                b.code.id(),
            ))
        });
        let (mut file, mut in_file) = (String::new(), 0);
        for d in all {
            if d.file != file {
                file.clone_from(&d.file);
                in_file = 0;
            }
            in_file += 1;
            if in_file <= SHOWN_PER_FILE {
                self.diagnostics.push(d);
            } else {
                self.omit(&d.file, d.code, d.severity, 1, (d.line, d.column));
            }
        }
        sort_diagnostics(&mut self.diagnostics);
    }

    /// Counts `n` more of `code` and `severity` in `file`, the first at `at`.
    fn omit(&mut self, file: &str, code: Code, severity: Severity, n: usize, at: (usize, usize)) {
        let i = match self.omitted.binary_search_by(|o| o.file.as_str().cmp(file)) {
            Ok(i) => i,
            Err(i) => {
                self.omitted.insert(
                    i,
                    Omitted {
                        file: file.to_string(),
                        counts: Vec::new(),
                    },
                );
                i
            }
        };
        self.omitted[i].add(code, severity, n, at);
    }

    /// Adds `d` unless it was added before.
    pub(crate) fn push(&mut self, d: Diagnostic) {
        let mut hash = DefaultHasher::new();
        d.hash(&mut hash);
        if !self.seen.insert(hash.finish()) {
            return;
        }
        let Some(per_code) = self.per_code else {
            self.diagnostics.push(d);
            return;
        };
        self.pushed += 1;
        if !self.groups.contains_key(d.file.as_str()) {
            self.groups.insert(d.file.clone(), Vec::new());
        }
        let Some(groups) = self.groups.get_mut(d.file.as_str()) else {
            return;
        };
        let i = match groups
            .iter()
            .position(|g| g.code == d.code && g.severity == d.severity)
        {
            Some(i) => i,
            None => {
                groups.push(Group {
                    code: d.code,
                    severity: d.severity,
                    kept: BinaryHeap::new(),
                    more: 0,
                    first: (usize::MAX, usize::MAX),
                });
                groups.len() - 1
            }
        };
        let group = &mut groups[i];
        let ranked = Ranked {
            rank: (d.line, d.column, self.pushed),
            diagnostic: d,
        };
        group.kept.push(ranked);
        if group.kept.len() > per_code {
            if let Some(last) = group.kept.pop() {
                group.more += 1;
                group.first = group.first.min((last.rank.0, last.rank.1));
            }
        }
    }

    /// Sorts the diagnostics by file and position (those at one place in the order they
    /// came); a bounded report's groups become its diagnostics and counts.
    pub(crate) fn finish(&mut self) {
        let mut kept = Vec::new();
        for (file, groups) in std::mem::take(&mut self.groups) {
            for g in groups {
                if g.more > 0 {
                    self.omit(&file, g.code, g.severity, g.more, g.first);
                }
                kept.extend(g.kept);
            }
        }
        kept.sort_by(|a, b| {
            let (a_at, b_at) = (&a.diagnostic, &b.diagnostic);
            (
                a_at.file.as_str(),
                a.rank.0,
                a.rank.1,
                a_at.code.id(),
                a.rank.2,
            )
                .cmp(&(
                    b_at.file.as_str(),
                    b.rank.0,
                    b.rank.1,
                    b_at.code.id(),
                    b.rank.2,
                ))
        });
        self.diagnostics
            .extend(kept.into_iter().map(|r| r.diagnostic));
        sort_diagnostics(&mut self.diagnostics);
    }
}

impl From<Vec<Diagnostic>> for Report {
    /// A report of `diagnostics` (a refusal's), sorted, every one kept: [`Report::bound`]
    /// cuts it as a check's.
    fn from(mut diagnostics: Vec<Diagnostic>) -> Report {
        sort_diagnostics(&mut diagnostics);
        Report {
            diagnostics,
            ..Report::default()
        }
    }
}

/// Sorts diagnostics as every report lists them: by file, line, column and code (stable:
/// those at one place stay in the order they came).
pub fn sort_diagnostics(diagnostics: &mut [Diagnostic]) {
    diagnostics.sort_by(|a, b| {
        (a.file.as_str(), a.line, a.column, a.code.id()).cmp(&(
            b.file.as_str(),
            b.line,
            b.column,
            b.code.id(),
        ))
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use strata_core::FieldPath;

    /// A diagnostic of `code` in `file` at line `line`, column 1.
    fn at(code: Code, file: &str, line: usize) -> Diagnostic {
        Diagnostic::new(code, file, (line, 1), FieldPath::root(), format!("{line}"))
    }

    /// `diagnostics` pushed into `report`, finished, left out and bound as `strata check`
    /// does.
    fn shown(mut report: Report, diagnostics: &[Diagnostic], allow: Code) -> Report {
        for d in diagnostics {
            report.push(d.clone());
        }
        report.finish();
        report.leave_out(|code, severity| severity != Severity::Error && code == allow);
        report.bound();
        report
    }

    /// Whatever is left out, a report bounded while it is checked shows and counts what one
    /// that kept everything does.
    #[test]
    fn bounded_while_checking_is_the_same_as_bounded_at_the_end() {
        let codes = [
            Code::UnknownParam,
            Code::BareDollar,
            Code::UnusedParam,
            Code::OldRecord,
        ];
        let mut state = 7u64;
        let mut all = Vec::new();
        for _ in 0..2_000 {
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1);
            let pick = (state >> 33) as usize;
            let file = ["a.yaml", "b.yaml", "c.yaml"][pick % 3];
            all.push(at(codes[pick / 3 % 4], file, pick / 12 % 200 + 1));
        }
        for allow in codes {
            let kept = shown(Report::default(), &all, allow);
            let bounded = shown(Report::bounded(), &all, allow);
            assert_eq!(bounded.diagnostics, kept.diagnostics, "{allow:?}");
            assert_eq!(bounded.omitted, kept.omitted, "{allow:?}");
            assert_eq!(bounded.total(), kept.total());
        }
    }

    #[test]
    fn a_file_shows_its_first_errors_first_and_counts_the_rest() {
        let mut all: Vec<Diagnostic> = (1..=25).map(|l| at(Code::BareDollar, "a", l)).collect();
        all.push(at(Code::UnknownParam, "a", 30));
        all.push(at(Code::UnknownParam, "a", 30)); // a repeat
        all.push(at(Code::UnknownParam, "b", 1));
        let report = shown(Report::bounded(), &all, Code::Syntax);
        let lines: Vec<(&str, usize)> = report
            .diagnostics
            .iter()
            .map(|d| (d.file.as_str(), d.line))
            .collect();
        let mut want: Vec<(&str, usize)> = (1..=19).map(|l| ("a", l)).collect();
        want.extend([("a", 30), ("b", 1)]);
        assert_eq!(lines, want);
        assert_eq!(
            report.omitted,
            [Omitted {
                file: "a".into(),
                counts: vec![OmittedCode {
                    code: Code::BareDollar,
                    severity: Severity::Warning,
                    count: 6,
                    first: (20, 1),
                }],
            }]
        );
        let o = &report.omitted[0];
        assert_eq!(
            o.message(),
            "6 more diagnostics of this file are not shown (6 warnings)"
        );
        assert_eq!((report.count(Severity::Error), report.total()), (2, 27));
        let files: Vec<(usize, bool)> = report
            .by_file()
            .iter()
            .map(|f| (f.diagnostics.len(), f.omitted.is_some()))
            .collect();
        assert_eq!(files, [(20, true), (1, false)]);
    }
}
