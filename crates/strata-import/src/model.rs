//! What converting one RyeOS file yields, shared by every converter and the report.

use std::collections::BTreeSet;

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

    /// Adds a warning.
    pub fn warn(&mut self, code: &str, message: impl Into<String>, line: usize, column: usize) {
        self.warnings.push(Warning {
            code: code.to_owned(),
            message: message.into(),
            line,
            column,
        });
    }

    /// Records a lossless rewrite.
    pub fn rewrite(&mut self, what: impl Into<String>) {
        self.rewrites.push(what.into());
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
}

impl Catalog {
    /// Whether a tool id exists in the project or a space.
    pub fn has_tool(&self, id: &str) -> bool {
        self.tools.contains(id)
    }
}
