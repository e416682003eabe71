//! The trace of one lookup: the settings, every candidate in order with the one that won,
//! and where each variable came from (secret values shown as `***`).

use std::fmt::Write as _;

use serde::{Serialize, Serializer};
use serde_json::Value;

/// One candidate of the lookup.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Candidate {
    /// The template id tried (`main/BrowseLink`), or `<default template>`.
    pub id: String,
    /// Where it is defined, when it exists.
    pub file: Option<String>,
}

/// A key that names no template anywhere in `prompts/`: the lookup fell back to a default,
/// which is the design, but such a key is almost always a typo.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct UnknownKey {
    /// The template name the key gives (`BrowsLink`).
    pub name: String,
    /// The nearest template name that exists, when one is close.
    pub did_you_mean: Option<String>,
}

impl UnknownKey {
    /// `no template anywhere in prompts/ is named `BrowsLink` (did you mean `BrowseLink`?)`.
    pub fn describe(&self) -> String {
        let mut s = format!("no template anywhere in prompts/ is named `{}`", self.name);
        if let Some(best) = &self.did_you_mean {
            let _ = write!(s, " (did you mean `{best}`?)");
        }
        s
    }
}

/// One variable the render could read: `{name, source, value}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Variable {
    /// Its name.
    pub name: String,
    /// `feed`, `knowledge`, `feed+knowledge` (merged), `component` or `predefined`.
    pub source: &'static str,
    /// Its value as compact JSON (`***` when secret), or the component's template.
    #[serde(rename = "value")]
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
    /// The key, when it names no template anywhere (it fell back to a default).
    pub unknown_key: Option<UnknownKey>,
}

impl Explain {
    /// The trace for people, one line per candidate and variable.
    pub fn to_text(&self) -> String {
        let mut out = String::new();
        let key = self.key.as_deref().unwrap_or("(none: the default name)");
        let _ = writeln!(out, "key: {key}");
        if let Some(u) = &self.unknown_key {
            let _ = writeln!(out, "unknown key: {}", u.describe());
        }
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
        serde_json::to_value(self).unwrap_or(Value::Null)
    }
}

/// The JSON form of an [`Explain`]: a derived form rather than the struct itself, because
/// each candidate's `won` comes from the trace's `winner`.
#[derive(Serialize)]
struct ExplainForm<'a> {
    key: Option<&'a str>,
    settings: &'a str,
    candidates: Vec<CandidateForm<'a>>,
    variables: &'a [Variable],
    #[serde(skip_serializing_if = "Option::is_none")]
    unknown_key: Option<&'a UnknownKey>,
}

#[derive(Serialize)]
struct CandidateForm<'a> {
    id: &'a str,
    file: Option<&'a str>,
    won: bool,
}

impl Serialize for Explain {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        ExplainForm {
            key: self.key.as_deref(),
            settings: &self.settings,
            candidates: self
                .candidates
                .iter()
                .enumerate()
                .map(|(i, c)| CandidateForm {
                    id: &c.id,
                    file: c.file.as_deref(),
                    won: Some(i) == self.winner,
                })
                .collect(),
            variables: &self.variables,
            unknown_key: self.unknown_key.as_ref(),
        }
        .serialize(s)
    }
}
