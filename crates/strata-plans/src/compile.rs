//! A step's arguments compiled once: a skeleton — the arguments with every string that holds
//! a reference set to null, escapes applied — and the holes to fill, each at a position of
//! the skeleton with a whole-value reference or a text of literals and references. Resolving
//! is a copy of the skeleton (maps copied whole, never rehashed) and a walk to each hole,
//! never a scan of text. Map keys are never resolved.

use serde_json::{Map, Value};
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

/// The walk that builds the skeleton.
struct Walk<'e> {
    field: FieldPath,
    at: Vec<usize>,
    holes: Vec<Hole>,
    refs: Vec<Site>,
    errors: &'e mut Vec<Error>,
}

impl Args {
    /// Compiles `value`; errors (with their field paths relative to the arguments and their
    /// spans) are pushed to `errors`, and the string in error is kept as a constant.
    pub fn compile(value: &Value, errors: &mut Vec<Error>) -> Args {
        let mut walk = Walk {
            field: FieldPath::root(),
            at: Vec::new(),
            holes: Vec::new(),
            refs: Vec::new(),
            errors,
        };
        let skeleton = walk.node(value);
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
        let mut out: Vec<&str> = Vec::new();
        for site in &self.refs {
            if let Target::Step { id, .. } = &site.r.target {
                if !out.contains(&id.as_str()) {
                    out.push(id);
                }
            }
        }
        out
    }

    /// The user values used, in order of first use.
    pub fn value_names(&self) -> Vec<&str> {
        let mut out: Vec<&str> = Vec::new();
        for site in &self.refs {
            if let Target::Value(name) = &site.r.target {
                if !out.contains(&name.as_str()) {
                    out.push(name);
                }
            }
        }
        out
    }
}

impl Walk<'_> {
    fn node(&mut self, value: &Value) -> Value {
        match value {
            Value::String(s) => self.string(s),
            Value::Array(items) => Value::Array(
                items
                    .iter()
                    .enumerate()
                    .map(|(i, v)| self.child(PathSeg::Index(i), i, v))
                    .collect(),
            ),
            Value::Object(map) => {
                let mut out = Map::with_capacity(map.len());
                for (i, (k, v)) in map.iter().enumerate() {
                    let v = self.child(PathSeg::Key(k.clone()), i, v);
                    out.insert(k.clone(), v);
                }
                Value::Object(out)
            }
            other => other.clone(),
        }
    }

    fn child(&mut self, seg: PathSeg, position: usize, value: &Value) -> Value {
        self.field.0.push(seg);
        self.at.push(position);
        let out = self.node(value);
        self.at.pop();
        self.field.0.pop();
        out
    }

    fn site(&mut self, s: &str, r: Ref) -> usize {
        let text = s[r.span.start..r.span.end].to_string();
        self.refs.push(Site {
            r,
            field: self.field.clone(),
            text,
        });
        self.refs.len() - 1
    }

    fn string(&mut self, s: &str) -> Value {
        let fill = match parse(s) {
            Ok(Parsed::Plain(text)) => return Value::String(text),
            Ok(Parsed::Whole(r)) => Fill::Ref(self.site(s, r)),
            Ok(Parsed::Parts(pieces)) => Fill::Text(
                pieces
                    .into_iter()
                    .map(|p| match p {
                        Piece::Lit(t) => Part::Lit(t),
                        Piece::Ref(r) => Part::Ref(self.site(s, r)),
                    })
                    .collect(),
            ),
            Err(e) => {
                self.errors.push(e.at_path(&self.field));
                return Value::String(s.to_string());
            }
        };
        self.holes.push(Hole {
            at: self.at.clone(),
            fill,
        });
        Value::Null
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
            &json!({"a": {"b": [1, "x"]}, "{{c.result}}": "$step1.n", "t": ["k", "n={$step2} {{PLACEHOLDER_v}}"]}),
            &mut errors,
        );
        assert!(errors.is_empty());
        assert_eq!(
            args.skeleton,
            json!({"a": {"b": [1, "x"]}, "{{c.result}}": null, "t": ["k", null]})
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
        assert_eq!(errors[0].path.to_string(), "x[1]");
        assert!(args.is_const());
    }
}
