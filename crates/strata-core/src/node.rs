use serde_json::{Map, Value};

use crate::render::Step;
use crate::{push_value_text, Error, FieldPath, Origin, PathSeg, RenderCx, Seq, Text};

/// A compiled document: the JSON/YAML tree with every templated string leaf compiled.
///
/// Map keys are never templated; leaves without placeholders are kept as constants.
#[derive(Debug)]
pub enum Node {
    /// A value rendered as it is (no placeholder anywhere inside).
    Const(Value),
    /// A compiled string leaf.
    Leaf(Seq),
    /// A list with at least one templated element.
    Array(Vec<Node>),
    /// A map with at least one templated value, keys in document order.
    Object(Vec<(String, Node)>),
}

impl Node {
    /// True when nothing inside is templated.
    pub fn is_const(&self) -> bool {
        matches!(self, Node::Const(_))
    }

    /// Appends what every placeholder in the tree refers to, with its field path.
    pub fn references(&self, path: &FieldPath, out: &mut Vec<(FieldPath, crate::Reference)>) {
        match self {
            Node::Const(_) => {}
            Node::Leaf(seq) => {
                let mut refs = Vec::new();
                seq.references(&mut refs);
                out.extend(refs.into_iter().map(|r| (path.clone(), r)));
            }
            Node::Array(items) => {
                for (i, n) in items.iter().enumerate() {
                    n.references(&path.child(PathSeg::Index(i)), out);
                }
            }
            Node::Object(entries) => {
                for (k, n) in entries {
                    n.references(&path.child(PathSeg::Key(k.clone())), out);
                }
            }
        }
    }

    /// Renders the tree at `path` (the path of this node in the document).
    pub fn render_at<'a>(
        &'a self,
        cx: &mut RenderCx<'a>,
        path: &FieldPath,
    ) -> Result<Rendered, Error> {
        cx.render_node_at(self, path)
    }

    /// Renders the tree at the render's current field path.
    pub(crate) fn render_here<'a>(&'a self, cx: &mut RenderCx<'a>) -> Result<Rendered, Error> {
        match self {
            Node::Const(v) => Ok(Rendered::Value(v.clone(), Origin::Authored)),
            Node::Leaf(seq) => cx.render_leaf_here(seq),
            Node::Array(items) => {
                let mut out = Vec::with_capacity(items.len());
                for (i, n) in items.iter().enumerate() {
                    out.push(cx.in_step(Step::Index(i), |cx| n.render_here(cx))?);
                }
                Ok(Rendered::Array(out))
            }
            Node::Object(entries) => {
                let mut out = Vec::with_capacity(entries.len());
                for (k, n) in entries {
                    let value = cx.in_step(Step::Key(k), |cx| n.render_here(cx))?;
                    out.push((k.clone(), value));
                }
                Ok(Rendered::Object(out))
            }
        }
    }
}

/// A rendered document: typed values, and text that remembers the origin of its bytes.
#[derive(Debug, Clone, PartialEq)]
pub enum Rendered {
    /// A typed value (a constant, or a whole-value placeholder's data).
    Value(Value, Origin),
    /// A rendered string.
    Text(Text),
    /// A list.
    Array(Vec<Rendered>),
    /// A map, keys in document order.
    Object(Vec<(String, Rendered)>),
}

impl Rendered {
    /// The plain JSON value.
    pub fn into_json(self) -> Value {
        match self {
            Rendered::Value(v, _) => v,
            Rendered::Text(t) => Value::String(t.text),
            Rendered::Array(items) => {
                Value::Array(items.into_iter().map(Rendered::into_json).collect())
            }
            Rendered::Object(entries) => Value::Object(
                entries
                    .into_iter()
                    .map(|(k, v)| (k, v.into_json()))
                    .collect::<Map<_, _>>(),
            ),
        }
    }

    /// The JSON value with every secret run shown as `***` (a whole secret value becomes `"***"`).
    pub fn to_redacted_json(&self) -> Value {
        match self {
            Rendered::Value(_, Origin::Secret) => Value::String("***".into()),
            Rendered::Value(v, _) => v.clone(),
            Rendered::Text(t) => Value::String(t.redacted()),
            Rendered::Array(items) => {
                Value::Array(items.iter().map(Rendered::to_redacted_json).collect())
            }
            Rendered::Object(entries) => Value::Object(
                entries
                    .iter()
                    .map(|(k, v)| (k.clone(), v.to_redacted_json()))
                    .collect::<Map<_, _>>(),
            ),
        }
    }

    /// The strongest origin anywhere inside (secret > data > authored).
    pub fn origin(&self) -> Origin {
        match self {
            Rendered::Value(_, o) => *o,
            Rendered::Text(t) => t.origin(),
            Rendered::Array(items) => items
                .iter()
                .fold(Origin::Authored, |a, r| a.join(r.origin())),
            Rendered::Object(entries) => entries
                .iter()
                .fold(Origin::Authored, |a, (_, r)| a.join(r.origin())),
        }
    }

    /// Appends the text form (see [`push_value_text`]) to running text, keeping origins.
    pub fn push_text(&self, out: &mut Text) {
        match self {
            Rendered::Text(t) => out.append(t),
            Rendered::Value(v, origin) => out.push_value(v, *origin),
            other => {
                let origin = other.origin();
                let start = out.text.len();
                push_value_text(&other.clone().into_json(), &mut out.text);
                out.mark(start, origin.join(Origin::Data));
            }
        }
    }
}
