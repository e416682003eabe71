//! The trace of one lookup: the settings, every candidate in order with the one that won,
//! and where each variable came from (secret values shown as `***`).

use std::fmt::Write as _;

use serde_json::{json, Value};

/// One candidate of the lookup.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Candidate {
    /// The template id tried (`main/BrowseLink`), or `<default template>`.
    pub id: String,
    /// Where it is defined, when it exists.
    pub file: Option<String>,
}

/// One variable the render could read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Variable {
    /// Its name.
    pub name: String,
    /// `feed`, `knowledge`, `feed+knowledge` (merged), `component` or `predefined`.
    pub source: &'static str,
    /// Its value as compact JSON (`***` when secret), or the component's template.
    pub shown: String,
}

/// The trace of a render.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Explain {
    /// The key as given (`None`: the default name).
    pub key: Option<String>,
    /// `type main, root space none, version none, default name default, merge feed_only`.
    pub settings: String,
    /// Every candidate, in lookup order.
    pub candidates: Vec<Candidate>,
    /// The index of the candidate that won.
    pub winner: Option<usize>,
    /// The variables, feed first.
    pub variables: Vec<Variable>,
}

impl Explain {
    /// The trace for people, one line per candidate and variable.
    pub fn to_text(&self) -> String {
        let mut out = String::new();
        let key = self.key.as_deref().unwrap_or("(none: the default name)");
        let _ = writeln!(out, "key: {key}");
        let _ = writeln!(out, "settings: {}", self.settings);
        out.push_str("candidates:\n");
        let width = self
            .candidates
            .iter()
            .map(|c| c.id.len())
            .max()
            .unwrap_or(0);
        for (i, c) in self.candidates.iter().enumerate() {
            let status = match (&c.file, self.winner) {
                (Some(f), Some(w)) if w == i => format!("won: {f}"),
                (_, Some(w)) if i > w => "not tried".to_string(),
                _ => "missing".to_string(),
            };
            let _ = writeln!(out, "  {:>2}. {:<width$}  {status}", i + 1, c.id);
        }
        out.push_str("variables:\n");
        if self.variables.is_empty() {
            out.push_str("  (none)\n");
        }
        for v in &self.variables {
            let _ = writeln!(out, "  {} ({}): {}", v.name, v.source, v.shown);
        }
        out
    }

    /// The trace as JSON: `{key, settings, candidates: [{id, file, won}], variables}`.
    pub fn to_json(&self) -> Value {
        json!({
            "key": self.key,
            "settings": self.settings,
            "candidates": self.candidates.iter().enumerate().map(|(i, c)| json!({
                "id": c.id, "file": c.file, "won": Some(i) == self.winner
            })).collect::<Vec<_>>(),
            "variables": self.variables.iter().map(|v| json!({
                "name": v.name, "source": v.source, "value": v.shown
            })).collect::<Vec<_>>(),
        })
    }
}
