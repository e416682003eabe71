//! A step's arguments compiled once: a skeleton — the arguments with every string that holds
//! a reference set to null, escapes applied — and the holes to fill, each at a position of
//! the skeleton with a whole-value reference or a text of literals and references. Resolving
//! is a copy of the skeleton (maps copied whole, never rehashed) and a walk to each hole,
//! never a scan of text. Map keys are never resolved.

use std::collections::HashSet;

use serde_json::Value;
use strata_core::{Error, FieldPath, PathSeg};

use crate::syntax::{parse, Parsed, Piece, Ref, Target};

/// What fills a hole.
#[derive(Debug, Clone, PartialEq)]
pub enum Fill {
    /// A whole-value reference, `refs[i]`: the value keeps its type.
    Ref(usize),
    /// Text with embedded references.
    Text(Vec<Part>),
}

/// A piece of compiled text.
#[derive(Debug, Clone, PartialEq)]
pub enum Part {
    /// Literal text.
    Lit(String),
    /// `refs[i]`, rendered as text.
    Ref(usize),
}

/// A place in the skeleton to fill.
#[derive(Debug, Clone, PartialEq)]
pub struct Hole {
    /// The position of each step down from the root: a list index, or the index of a map's
    /// entry (in document order). Empty for the root itself.
    pub at: Vec<usize>,
    /// What goes there.
    pub fill: Fill,
}

/// A reference and where it was written.
#[derive(Debug, Clone, PartialEq)]
pub struct Site {
    /// The reference.
    pub r: Ref,
    /// The field holding it, relative to the arguments (`input.to`).
    pub field: FieldPath,
    /// The reference as written.
    pub text: String,
}

/// A step's arguments, compiled.
#[derive(Debug, Clone, PartialEq)]
pub struct Args {
    /// The arguments with each hole null.
    pub skeleton: Value,
    /// The holes, in document order.
    pub holes: Vec<Hole>,
    /// Every reference, in document order.
    pub refs: Vec<Site>,
}

/// The walk that finds the holes: positions only, field paths made when a reference or an
/// error needs one.
struct Walk<'v, 'e> {
    root: &'v Value,
    at: Vec<usize>,
    holes: Vec<Hole>,
    /// Strings whose escapes changed their text: the text to put in the skeleton.
    unescaped: Vec<(Vec<usize>, String)>,
    refs: Vec<Site>,
    errors: &'e mut Vec<Error>,
}

/// The slot at position `at` of `value` (list indexes and map entry indexes).
pub(crate) fn slot<'v>(value: &'v mut Value, at: &[usize]) -> Option<&'v mut Value> {
    at.iter().try_fold(value, |cur, &i| match cur {
        Value::Array(items) => items.get_mut(i),
        Value::Object(map) => map.values_mut().nth(i),
        _ => None,
    })
}

/// The field path of position `at` of `value`.
fn field_at(value: &Value, at: &[usize]) -> FieldPath {
    let mut segs = Vec::with_capacity(at.len());
    let mut cur = value;
    for &i in at {
        match cur {
            Value::Array(items) => match items.get(i) {
                Some(v) => {
                    segs.push(PathSeg::Index(i));
                    cur = v;
                }
                None => break,
            },
            Value::Object(map) => match map.iter().nth(i) {
                Some((k, v)) => {
                    segs.push(PathSeg::Key(k.clone()));
                    cur = v;
                }
                None => break,
            },
            _ => break,
        }
    }
    FieldPath(segs)
}

impl Args {
    /// True when these arguments are a map, or one whole-value reference (which may yield a
    /// map, known only when the step resolves); literal arguments of any other shape are
    /// refused when the plan loads (SPEC §5.1).
    pub fn may_be_a_map(&self) -> bool {
        match self.holes.iter().find(|h| h.at.is_empty()) {
            Some(hole) => matches!(hole.fill, Fill::Ref(_)),
            None => self.skeleton.is_object(),
        }
    }

    /// Compiles `value`; errors (with their field paths relative to the arguments and their
    /// spans) are pushed to `errors`, and the string in error is kept as a constant.
    pub fn compile(value: &Value, errors: &mut Vec<Error>) -> Args {
        let mut walk = Walk {
            root: value,
            at: Vec::new(),
            holes: Vec::new(),
            unescaped: Vec::new(),
            refs: Vec::new(),
            errors,
        };
        walk.node(value);
        // A copy keeps the maps' hash tables; the holes are then emptied in place.
        let mut skeleton = value.clone();
        for (at, text) in walk.unescaped {
            if let Some(slot) = slot(&mut skeleton, &at) {
                *slot = Value::String(text);
            }
        }
        for hole in &walk.holes {
            if let Some(slot) = slot(&mut skeleton, &hole.at) {
                *slot = Value::Null;
            }
        }
        Args {
            skeleton,
            holes: walk.holes,
            refs: walk.refs,
        }
    }

    /// True when the arguments hold no reference.
    pub fn is_const(&self) -> bool {
        self.holes.is_empty()
    }

    /// The ids of the steps referenced, in order of first use.
    pub fn step_ids(&self) -> Vec<&str> {
        first_uses(self.refs.iter().filter_map(|site| match &site.r.target {
            Target::Step { id, .. } => Some(id.as_str()),
            Target::Value(_) => None,
        }))
    }

    /// The user values used, in order of first use.
    pub fn value_names(&self) -> Vec<&str> {
        first_uses(self.refs.iter().filter_map(|site| match &site.r.target {
            Target::Value(name) => Some(name.as_str()),
            Target::Step { .. } => None,
        }))
    }
}

/// Each name once, in order of first use (linear: a set remembers the names seen).
pub(crate) fn first_uses<'a>(names: impl IntoIterator<Item = &'a str>) -> Vec<&'a str> {
    let mut seen: HashSet<&str, foldhash::fast::RandomState> = HashSet::default();
    names.into_iter().filter(|n| seen.insert(n)).collect()
}

impl Walk<'_, '_> {
    fn node(&mut self, value: &Value) {
        match value {
            Value::String(s) => self.string(s),
            Value::Array(items) => {
                for (i, v) in items.iter().enumerate() {
                    self.at.push(i);
                    self.node(v);
                    self.at.pop();
                }
            }
            Value::Object(map) => {
                for (i, v) in map.values().enumerate() {
                    self.at.push(i);
                    self.node(v);
                    self.at.pop();
                }
            }
            _ => {}
        }
    }

    fn site(&mut self, s: &str, r: Ref, field: FieldPath) -> usize {
        let text = s[r.span.start..r.span.end].to_string();
        self.refs.push(Site { r, field, text });
        self.refs.len() - 1
    }

    fn string(&mut self, s: &str) {
        let parsed = match parse(s) {
            Ok(Parsed::Plain(text)) => {
                if text != s {
                    self.unescaped.push((self.at.clone(), text));
                }
                return;
            }
            Ok(parsed) => parsed,
            Err(e) => {
                let field = field_at(self.root, &self.at);
                self.errors.push(e.at_path(&field));
                return;
            }
        };
        let field = field_at(self.root, &self.at);
        let fill = match parsed {
            Parsed::Whole(r) => Fill::Ref(self.site(s, r, field)),
            Parsed::Parts(pieces) => Fill::Text(
                pieces
                    .into_iter()
                    .map(|p| match p {
                        Piece::Lit(t) => Part::Lit(t),
                        Piece::Ref(r) => Part::Ref(self.site(s, r, field.clone())),
                    })
                    .collect(),
            ),
            Parsed::Plain(_) => return,
        };
        self.holes.push(Hole {
            at: self.at.clone(),
            fill,
        });
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn the_skeleton_keeps_constants_and_holes_are_listed_in_order() {
        let mut errors = Vec::new();
        let args = Args::compile(
            &json!({"a": {"b": [1, "x$$step"]}, "{{c.result}}": "$step1.n", "t": ["k", "n={$step2} {{PLACEHOLDER_v}}"]}),
            &mut errors,
        );
        assert!(errors.is_empty());
        assert_eq!(
            args.skeleton,
            json!({"a": {"b": [1, "x$step"]}, "{{c.result}}": null, "t": ["k", null]})
        );
        assert_eq!(
            args.holes[0],
            Hole {
                at: vec![1],
                fill: Fill::Ref(0)
            }
        );
        assert_eq!(args.holes[1].at, [2, 1]);
        assert_eq!(args.step_ids(), ["step1", "step2"]);
        assert_eq!(args.value_names(), ["v"]);
        assert_eq!(args.refs[1].field.to_string(), "t[1]");
        assert_eq!(args.refs[1].text, "{$step2}");
        assert!(!args.is_const());
    }

    #[test]
    fn errors_carry_the_field_path() {
        let mut errors = Vec::new();
        let args = Args::compile(&json!({"x": ["ok", "$step1 and more"]}), &mut errors);
        assert_eq!(errors.len(), 1);
        assert_eq!(errors[0].path().to_string(), "x[1]");
        assert!(args.is_const());
    }
}
