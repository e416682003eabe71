//! One render: the call's options, the variants of versioned components, undefined variables
//! (a warning by default, an error when strict), pinning by content hash, and secrets kept
//! out of every error, warning and trace.

use std::sync::Arc;

use serde::{Serialize, Serializer};
use serde_json::{Map, Value};
use strata_core::{did_you_mean, Error, ErrorKind, FieldPath, Undefined, Warning};

use crate::context::{Ctx, Fault, Vars};
use crate::explain::Explain;
use crate::feed::Merge;
use crate::lookup::Overrides;
use crate::store::{Store, Tmpl};
use crate::LAYER;

/// One render's input: the key, the variables, and how to render.
#[derive(Debug, Clone, Default)]
pub struct Call<'a> {
    /// The key (`BrowseLink`, `reflection/default`); `None` means the default name.
    pub key: Option<&'a str>,
    /// The feed's variables.
    pub feed: Option<&'a Map<String, Value>>,
    /// Knowledge merged into the feed by `merge`.
    pub knowledge: Option<&'a Map<String, Value>>,
    /// How knowledge merges into the feed.
    pub merge: Merge,
    /// Settings for this call only.
    pub overrides: Overrides,
    /// Component versions chosen by the caller: `(component, version)`.
    pub pins: Vec<(String, String)>,
    /// The content hash (SHA-256 in hex, or a prefix of at least 8 digits) the template
    /// that wins must have.
    pub hash: Option<String>,
    /// What an undefined variable does.
    pub undefined: Undefined,
    /// Names of variables (feed, knowledge or predefined) whose values are secret: they are
    /// `***` in errors, warnings and the trace.
    pub secrets: Vec<String>,
    /// Build the trace of the lookup ([`Rendered::explain`]).
    pub explain: bool,
}

impl<'a> Call<'a> {
    /// A call for `key` with nothing else set.
    pub fn key(key: &'a str) -> Call<'a> {
        Call {
            key: Some(key),
            ..Call::default()
        }
    }

    /// Sets the feed.
    pub fn feed(mut self, feed: &'a Map<String, Value>) -> Call<'a> {
        self.feed = Some(feed);
        self
    }
}

/// One rendered text, labelled with the versions of its versioned components.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Variant {
    /// `(component, version)` for each versioned component, in declaration order; empty
    /// when the template uses none.
    #[serde(serialize_with = "versions_map")]
    pub versions: Vec<(String, String)>,
    /// The text.
    pub text: String,
}

impl Variant {
    /// The variant as JSON: `{"versions": {component: version, …}, "text": …}` (`versions`
    /// empty when the template uses no versioned component). The one JSON form of a variant:
    /// [`Rendered::to_json`]'s `variants`, [`Rendered::variants_json`], the CLI and the
    /// bindings all use it.
    pub fn to_json(&self) -> Value {
        serde_json::to_value(self).unwrap_or(Value::Null)
    }

    /// `tone=formal, length=short`.
    pub fn label(&self) -> String {
        self.versions
            .iter()
            .map(|(c, v)| format!("{c}={v}"))
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// What a render produced.
#[derive(Debug, Clone, PartialEq)]
pub struct Rendered {
    /// The id of the template that won (`main/BrowseLink`).
    pub template: String,
    /// Where it is defined (`prompts/main/BrowseLink.j2`).
    pub file: String,
    /// Its content hash (SHA-256, hex).
    pub hash: String,
    /// Every variant, in the order of the Cartesian product (one when no versioned component
    /// is used, or every one is pinned).
    pub variants: Vec<Variant>,
    /// Undefined variables (with `Undefined::Warn`).
    pub warnings: Vec<Warning>,
    /// Notices that are not part of the result's JSON form: a key no template anywhere is
    /// named after, which fell back to a default (almost always a typo). The CLI prints them
    /// on standard error (`--quiet` silences them), Python issues them as warnings, and the
    /// trace lists the key.
    pub notices: Vec<Warning>,
    /// The trace, when the call asked for it.
    pub explain: Option<Explain>,
}

impl Rendered {
    /// The text, when there is exactly one variant.
    pub fn text(&self) -> Option<&str> {
        match self.variants.as_slice() {
            [one] => Some(&one.text),
            _ => None,
        }
    }

    /// The text, or — when the template has several variants — an error listing them, with
    /// `hint` saying how to get them all or pin one.
    pub fn only_text(&self, hint: &str) -> Result<&str, Error> {
        if let Some(text) = self.text() {
            return Ok(text);
        }
        let labels: Vec<String> = self.variants.iter().map(Variant::label).collect();
        Err(Error::new(
            LAYER,
            ErrorKind::Request,
            format!(
                "template `{}` has {} variants ({})",
                self.template,
                self.variants.len(),
                labels.join("; ")
            ),
        )
        .with_hint(hint))
    }

    /// Every variant as JSON, in product order: a list of [`Variant::to_json`]'s
    /// `{versions, text}` (one, with empty `versions`, when no versioned component is used).
    pub fn variants_json(&self) -> Value {
        self.variants.iter().map(Variant::to_json).collect()
    }

    /// `{template, file, hash, text}` for one variant, `{…, variants: [{versions, text}]}` for
    /// several; `warnings` (and `explain`) when there are any.
    pub fn to_json(&self) -> Value {
        serde_json::to_value(self).unwrap_or(Value::Null)
    }
}

/// `(component, version)` pairs as one object, in order.
fn versions_map<S: Serializer>(versions: &[(String, String)], s: S) -> Result<S::Ok, S::Error> {
    s.collect_map(versions.iter().map(|(c, v)| (c, v)))
}

/// The JSON form of a [`Rendered`]: a derived form rather than the struct itself, because
/// its shape depends on it — `text` for one variant, `variants` for several, `warnings` and
/// `explain` only when there are any.
#[derive(Serialize)]
struct RenderedForm<'a> {
    template: &'a str,
    file: &'a str,
    hash: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    text: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    variants: Option<&'a [Variant]>,
    #[serde(skip_serializing_if = "<[_]>::is_empty", serialize_with = "warnings")]
    warnings: &'a [Warning],
    #[serde(skip_serializing_if = "Option::is_none")]
    explain: Option<&'a Explain>,
}

/// Warnings as a list of [`Warning::to_json`]'s form (`strata_core` has no `Serialize`).
fn warnings<S: Serializer>(warnings: &[Warning], s: S) -> Result<S::Ok, S::Error> {
    s.collect_seq(warnings.iter().map(Warning::to_json))
}

impl Serialize for Rendered {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let text = self.text();
        RenderedForm {
            template: &self.template,
            file: &self.file,
            hash: &self.hash,
            text,
            variants: text.is_none().then_some(self.variants.as_slice()),
            warnings: &self.warnings,
            explain: self.explain.as_ref(),
        }
        .serialize(s)
    }
}

/// Replaces every secret value in `text` by `***`.
pub(crate) fn redact(text: &str, secrets: &[String]) -> String {
    let mut out = text.to_string();
    for s in secrets {
        if !s.is_empty() && out.contains(s.as_str()) {
            out = out.replace(s.as_str(), "***");
        }
    }
    out
}

/// An error with every secret value redacted.
pub(crate) fn redact_error(e: Error, secrets: &[String]) -> Error {
    if secrets.is_empty() {
        return e;
    }
    e.map_message(|m| redact(&m, secrets))
        .map_hint(|h| redact(&h, secrets))
}

/// What a render needs besides the call.
pub(crate) struct Job<'s> {
    pub store: &'s Arc<Store>,
    pub template: usize,
    /// The id of the [`crate::context::lend_feed`] lending the feed.
    pub feed: u64,
    pub predefined: Arc<Vars>,
}

impl Job<'_> {
    fn tmpl(&self) -> &Tmpl {
        &self.store.templates[self.template]
    }

    /// Checks the pinned hash.
    pub fn check_hash(&self, pin: &str) -> Result<(), Error> {
        let pin = pin.to_ascii_lowercase();
        if pin.len() < 8 || pin.len() > 64 || !pin.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err(Error::new(
                LAYER,
                ErrorKind::Request,
                format!("`{pin}` is not a content hash"),
            )
            .with_hint("a hash is the template's SHA-256 in hex, or its first 8 digits or more"));
        }
        let t = self.tmpl();
        if t.hash.starts_with(&pin) {
            return Ok(());
        }
        Err(Error::new(
            LAYER,
            ErrorKind::HashMismatch,
            format!(
                "template `{}` ({}) does not match the pinned hash `{pin}`: its content hash is `{}`",
                t.id, t.place, t.hash
            ),
        )
        .with_hint("the template changed since it was pinned: review the change, then pin the new hash")
        .at_location(t.place.start()))
    }

    /// The `(component, version index)` choices of every variant, in product order.
    pub fn variants(&self, pins: &[(String, String)]) -> Result<Vec<Vec<(usize, usize)>>, Error> {
        let store = self.store;
        let t = self.tmpl();
        let visible = &store.spaces[t.space].visible;
        let mut pinned: Vec<(usize, usize)> = Vec::new();
        for (name, version) in pins {
            let Some(&c) = visible.get(name) else {
                let hint = match did_you_mean(name, visible.keys().map(String::as_str)) {
                    Some(best) => format!("did you mean `{best}`?"),
                    None if visible.is_empty() => format!("template `{}` sees no components", t.id),
                    None => format!(
                        "its components are {}",
                        visible
                            .keys()
                            .map(String::as_str)
                            .collect::<Vec<_>>()
                            .join(", ")
                    ),
                };
                return Err(Error::new(
                    LAYER,
                    ErrorKind::UnknownName,
                    format!("template `{}` has no component `{name}`", t.id),
                )
                .with_hint(hint));
            };
            let comp = &store.comps[c];
            let versions: Vec<&str> = comp
                .versions
                .iter()
                .filter_map(|v| v.0.as_deref())
                .collect();
            if versions.is_empty() {
                return Err(Error::new(
                    LAYER,
                    ErrorKind::Invalid,
                    format!("component `{name}` has no versions to pin"),
                ));
            }
            let Some(i) = versions.iter().position(|v| v == version) else {
                let hint = match did_you_mean(version, versions.iter().copied()) {
                    Some(best) => format!("did you mean `{best}`?"),
                    None => format!("its versions are {}", versions.join(", ")),
                };
                return Err(Error::new(
                    LAYER,
                    ErrorKind::UnknownName,
                    format!("component `{name}` has no version `{version}`"),
                )
                .with_hint(hint));
            };
            pinned.retain(|(p, _)| *p != c);
            pinned.push((c, i));
        }
        let axes: Vec<(usize, Vec<usize>)> = store.product[self.template]
            .iter()
            .map(|&c| match pinned.iter().find(|(p, _)| *p == c) {
                Some(&(_, i)) => (c, vec![i]),
                None => (c, (0..store.comps[c].versions.len()).collect()),
            })
            .collect();
        let count = axes
            .iter()
            .try_fold(1usize, |n, (_, options)| n.checked_mul(options.len()));
        let limit = store.limits.variants;
        if count.map_or(true, |n| n > limit) {
            let sizes: Vec<String> = axes
                .iter()
                .map(|(c, o)| format!("{} ({})", store.comps[*c].name, o.len()))
                .collect();
            let shown = count.map_or_else(|| "more than 2^64".to_string(), |n| n.to_string());
            return Err(Error::new(
                LAYER,
                ErrorKind::Limit,
                format!(
                    "template `{}` has {shown} variants ({}), more than the limit of {limit}",
                    t.id,
                    sizes.join(" × ")
                ),
            )
            .with_hint(
                "pin some components to one version (`--pin COMPONENT=VERSION`, `pin:` in a graph)",
            ));
        }
        let mut out: Vec<Vec<(usize, usize)>> = vec![pinned.clone()];
        for (c, options) in &axes {
            out = out
                .into_iter()
                .flat_map(|picks| {
                    options.iter().map(move |&i| {
                        let mut p: Vec<(usize, usize)> = picks.clone();
                        p.retain(|(x, _)| x != c);
                        p.push((*c, i));
                        p
                    })
                })
                .collect();
        }
        Ok(out)
    }

    /// The labels of a variant: the versions of the product's components.
    pub fn labels(&self, picks: &[(usize, usize)]) -> Vec<(String, String)> {
        self.store.product[self.template]
            .iter()
            .filter_map(|&c| {
                let i = picks.iter().find(|(p, _)| *p == c)?.1;
                let comp = &self.store.comps[c];
                Some((comp.name.clone(), comp.versions[i].0.clone()?))
            })
            .collect()
    }

    fn ctx(&self, picks: &Arc<Vec<(usize, usize)>>, strict: bool, blanks: Vec<String>) -> Arc<Ctx> {
        Arc::new(Ctx::new(
            self.store.clone(),
            self.feed,
            self.predefined.clone(),
            self.store.spaces[self.tmpl().space].visible.clone(),
            picks.clone(),
            strict,
            blanks,
        ))
    }

    /// Renders one variant.
    pub fn render(
        &self,
        picks: Vec<(usize, usize)>,
        undefined: Undefined,
        warnings: &mut Vec<Warning>,
    ) -> Result<String, Error> {
        let picks = Arc::new(picks);
        if undefined == Undefined::Lenient {
            return self
                .ctx(&picks, false, Vec::new())
                .render(self.template)
                .map_err(|f| f.error);
        }
        let first = match self.ctx(&picks, true, Vec::new()).render(self.template) {
            Ok(text) => return Ok(text),
            Err(Fault {
                undefined: Some(_),
                error,
            }) if undefined == Undefined::Strict => return Err(error.with_hint(
                "strict mode: give the variable a value, or guard it with `{% if x is defined %}`",
            )),
            Err(Fault {
                undefined: Some(name),
                error,
            }) => (name, error),
            Err(f) => return Err(f.error),
        };
        let mut found = vec![first];
        while found.len() < 64 {
            let blanks: Vec<String> = found.iter().map(|(n, _)| n.clone()).collect();
            match self.ctx(&picks, true, blanks.clone()).render(self.template) {
                Err(Fault {
                    undefined: Some(name),
                    error,
                }) if !name.is_empty() && !blanks.contains(&name) => found.push((name, error)),
                _ => break,
            }
        }
        for (_, e) in found {
            let at = e
                .location()
                .map(|l| format!(" ({}:{}:{})", l.file, l.line, l.column))
                .unwrap_or_default();
            let w = Warning {
                layer: LAYER,
                message: format!("{}{at}", e.message()),
                path: FieldPath::root(),
                span: None,
            };
            if !warnings.contains(&w) {
                warnings.push(w);
            }
        }
        self.ctx(&picks, false, Vec::new())
            .render(self.template)
            .map_err(|f| f.error)
    }
}
