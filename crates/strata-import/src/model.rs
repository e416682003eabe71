//! What converting one RyeOS file yields, shared by every converter and the report.

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;

/// A warning about one construct of a RyeOS file: its code (`IMP-…`), a message for people
/// and the 1-based position of the construct in the RyeOS file (0 when the file as a whole).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Warning {
    /// The code, as MAPPING.md names it (`IMP-bin`, `IMP-D-limits-llm`, …).
    pub code: String,
    /// What was lost or changed, and what to do about it.
    pub message: String,
    /// 1-based line in the RyeOS file (0: the whole file).
    pub line: usize,
    /// 1-based column in the RyeOS file (0: the whole file).
    pub column: usize,
}

/// One file the import writes, relative to the new project's root (`tools/x.yaml`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Written {
    /// Path relative to the new project's root, `/`-separated.
    pub path: String,
    /// The file's full text.
    #[serde(skip)]
    pub contents: String,
}

/// Why a RyeOS file was not written.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Refusal {
    /// The code (`IMP-http`, `IMP-primitive`, …).
    pub code: String,
    /// The reason, for people.
    pub message: String,
}

/// Whether a RyeOS file was brought over.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Outcome {
    /// Written (possibly with warnings).
    Imported,
    /// Not written; [`FileImport::reason`] says why.
    Refused,
}

/// How many warnings of one code one file lists: the findings past them are counted, and
/// [`FileImport::finish`] adds one warning of that code saying how many were not listed.
pub const LISTED_PER_CODE: usize = 20;

/// How many rewrites one file lists: those past them are counted in one last rewrite.
pub const LISTED_REWRITES: usize = 50;

/// The findings of one code in one file: how many are listed, how many are not (and where
/// the first of those is).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
struct Tally {
    listed: usize,
    omitted: usize,
    first_omitted: (usize, usize),
}

/// What converting one RyeOS file yields.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct FileImport {
    /// The RyeOS file, relative to the RyeOS project root (`.ai/tools/rye/bash/bash.py`).
    pub source: String,
    /// Imported or refused.
    pub outcome: Outcome,
    /// The files written for it (a tool, a wrapper, generated stubs).
    pub written: Vec<Written>,
    /// Every warning, in file order.
    pub warnings: Vec<Warning>,
    /// Every lossless rewrite, one line each (`executor_id: "@subprocess" → executor: runtimes/subprocess`).
    pub rewrites: Vec<String>,
    /// The refusal, when refused.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<Refusal>,
    /// The warnings by code, for the bound of `LISTED_PER_CODE`.
    #[serde(skip)]
    tallies: BTreeMap<String, Tally>,
    /// Rewrites past `LISTED_REWRITES`, not listed.
    #[serde(skip)]
    rewrites_omitted: usize,
}

impl FileImport {
    /// A file imported with nothing written yet.
    pub fn imported(source: impl Into<String>) -> Self {
        FileImport {
            source: source.into(),
            outcome: Outcome::Imported,
            written: Vec::new(),
            warnings: Vec::new(),
            rewrites: Vec::new(),
            reason: None,
            tallies: BTreeMap::new(),
            rewrites_omitted: 0,
        }
    }

    /// Refuses the file: drops what was to be written, keeps the warnings gathered so far.
    pub fn refuse(mut self, code: &str, message: impl Into<String>) -> Self {
        self.outcome = Outcome::Refused;
        self.written.clear();
        self.reason = Some(Refusal {
            code: code.to_owned(),
            message: message.into(),
        });
        self
    }

    /// Adds a warning at `line:column` (see [`FileImport::warn_with`]).
    pub fn warn(&mut self, code: &str, message: impl Into<String>, line: usize, column: usize) {
        self.warn_with(code, message, || (line, column));
    }

    /// Adds a warning, its position given by `at` (1-based line and column, `(0, 0)` for
    /// the file as a whole), which is asked only when the warning is listed: the first
    /// `LISTED_PER_CODE` of a code are, the others only counted (the position of the
    /// first of them kept), so that a file repeating one construct a hundred thousand times
    /// costs the report, and the search for positions, what a few do.
    pub fn warn_with(
        &mut self,
        code: &str,
        message: impl Into<String>,
        at: impl FnOnce() -> (usize, usize),
    ) {
        if !self.tallies.contains_key(code) {
            self.tallies.insert(code.to_owned(), Tally::default());
        }
        let Some(tally) = self.tallies.get_mut(code) else {
            return;
        };
        if tally.listed == LISTED_PER_CODE {
            if tally.omitted == 0 {
                tally.first_omitted = at();
            }
            tally.omitted += 1;
            return;
        }
        tally.listed += 1;
        let (line, column) = at();
        self.warnings.push(Warning {
            code: code.to_owned(),
            message: message.into(),
            line,
            column,
        });
    }

    /// Records a lossless rewrite (the first `LISTED_REWRITES`; the others are counted).
    pub fn rewrite(&mut self, what: impl Into<String>) {
        if self.rewrites.len() < LISTED_REWRITES {
            self.rewrites.push(what.into());
        } else {
            self.rewrites_omitted += 1;
        }
    }

    /// Closes the lists: one warning for each code with findings not listed, saying how many
    /// (at the first of them), and one rewrite counting the rewrites not listed.
    pub fn finish(&mut self) {
        for (code, tally) in std::mem::take(&mut self.tallies) {
            if tally.omitted > 0 {
                let (line, column) = tally.first_omitted;
                self.warnings.push(Warning {
                    message: format!(
                        "{} more `{code}` warnings of this file are not listed (the first {LISTED_PER_CODE} are)",
                        tally.omitted
                    ),
                    code,
                    line,
                    column,
                });
            }
        }
        if self.rewrites_omitted > 0 {
            let more = std::mem::take(&mut self.rewrites_omitted);
            self.rewrites.push(format!(
                "{more} more rewrites of this file are not listed (the first {LISTED_REWRITES} are)"
            ));
        }
    }

    /// Adds a file to write.
    pub fn write(&mut self, path: impl Into<String>, contents: impl Into<String>) {
        self.written.push(Written {
            path: path.into(),
            contents: contents.into(),
        });
    }
}

/// What the converters may ask about the whole import: which RyeOS item ids exist in the
/// project or one of its spaces, so references resolve as RyeOS resolved them.
#[derive(Clone, Debug, Default)]
pub struct Catalog {
    /// Tool ids (path under `.ai/tools/` without extension) found in any space, runtimes,
    /// graphs and code tools included.
    pub tools: BTreeSet<String>,
    /// Directive ids (path under `.ai/directives/` without `.md`).
    pub directives: BTreeSet<String>,
    /// The tool ids that are graphs (`tool_type: graph` files), wherever they live.
    pub graphs: BTreeSet<String>,
    /// For a tool defined by a YAML file beside a code file of the same id (RyeOS's
    /// `verbs/list.yaml` running `verbs/list.py`): the id → the code file's path under
    /// `.ai/tools/`, which the YAML's `{tool_path}` names.
    pub code_beside: BTreeMap<String, String>,
}

impl Catalog {
    /// Whether a tool id exists in the project or a space.
    pub fn has_tool(&self, id: &str) -> bool {
        self.tools.contains(id)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn findings_past_the_bound_are_counted_in_one_warning_and_never_located() {
        let mut f = FileImport::imported("s");
        let mut located = 0;
        for k in 0..LISTED_PER_CODE + 5 {
            f.warn_with("X-one", format!("x{k}"), || {
                located += 1;
                (1, k + 1)
            });
        }
        f.warn("X-two", "y", 0, 0);
        for k in 0..LISTED_REWRITES + 2 {
            f.rewrite(format!("r{k}"));
        }
        f.finish();
        // The listed ones and the first of the others.
        assert_eq!(located, LISTED_PER_CODE + 1);
        let listed: Vec<(&str, &str, usize)> = f
            .warnings
            .iter()
            .map(|w| (w.code.as_str(), w.message.as_str(), w.column))
            .collect();
        assert_eq!(listed.len(), LISTED_PER_CODE + 2);
        assert_eq!(listed[LISTED_PER_CODE - 1], ("X-one", "x19", 20));
        assert_eq!(listed[LISTED_PER_CODE], ("X-two", "y", 0));
        assert_eq!(
            listed[LISTED_PER_CODE + 1],
            (
                "X-one",
                "5 more `X-one` warnings of this file are not listed (the first 20 are)",
                21
            )
        );
        assert_eq!(f.rewrites.len(), LISTED_REWRITES + 1);
        assert_eq!(
            f.rewrites[LISTED_REWRITES],
            "2 more rewrites of this file are not listed (the first 50 are)"
        );
    }
}
