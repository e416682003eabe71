use std::borrow::Cow;

use serde_json::{Map, Value};

use crate::render::Step;
use crate::{
    push_value_text, Chunked, Const, Error, FieldPath, Origin, PathSeg, RenderCx, Seq, Text,
};

/// A compiled document: the JSON/YAML tree with every templated string leaf compiled.
///
/// Map keys are never templated; leaves without placeholders are kept as constants. A render
/// borrows constants and keys from the tree instead of copying them.
#[derive(Debug, Clone)]
pub enum Node {
    /// A value rendered as it is (no placeholder anywhere inside).
    Const(Const),
    /// A compiled string leaf.
    Leaf(Seq),
    /// A list with at least one templated element.
    Array(Vec<Node>),
    /// A map with at least one templated value, keys in document order (a large map's
    /// entries are never copied while it is read: see [`Chunked`]; boxed, as maps are few
    /// and every node is as large as the largest kind).
    Object(Box<Chunked<(String, Node)>>),
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
                for (k, n) in entries.iter() {
                    n.references(&path.child(PathSeg::Key(k.clone())), out);
                }
            }
        }
    }

    /// Appends the parameters that `{name}` placeholders anywhere in the tree name.
    pub fn param_names<'n>(&'n self, out: &mut Vec<&'n str>) {
        match self {
            Node::Const(_) => {}
            Node::Leaf(seq) => seq.param_names(out),
            Node::Array(items) => items.iter().for_each(|n| n.param_names(out)),
            Node::Object(entries) => entries.iter().for_each(|(_, n)| n.param_names(out)),
        }
    }

    /// Renders the tree at `path` (the path of this node in the document).
    pub fn render_at<'t>(
        &'t self,
        cx: &mut RenderCx<'t, '_>,
        path: &FieldPath,
    ) -> Result<Rendered<'t>, Error> {
        cx.render_node_at(self, path)
    }

    /// Renders the tree at the render's current field path.
    pub(crate) fn render_here<'t>(
        &'t self,
        cx: &mut RenderCx<'t, '_>,
    ) -> Result<Rendered<'t>, Error> {
        match self {
            Node::Const(c) => Ok(c.rendered(cx.source)),
            Node::Leaf(seq) => cx.render_leaf_here(seq),
            Node::Array(items) => {
                let mut out = Vec::with_capacity(items.len());
                for (i, n) in items.iter().enumerate() {
                    out.push(n.render_child(cx, Step::Index(i))?);
                }
                Ok(Rendered::Array(out))
            }
            Node::Object(entries) => {
                let mut out = Vec::with_capacity(entries.len());
                for (k, n) in entries.iter() {
                    let value = n.render_child(cx, Step::Key(k))?;
                    out.push((Cow::Borrowed(k.as_str()), value));
                }
                Ok(Rendered::Object(out))
            }
        }
    }

    /// Renders the tree as the child `step` of the current field path (a constant needs no
    /// path: nothing in it can warn or fail).
    pub(crate) fn render_child<'t>(
        &'t self,
        cx: &mut RenderCx<'t, '_>,
        step: Step<'t>,
    ) -> Result<Rendered<'t>, Error> {
        match self {
            Node::Const(c) => Ok(c.rendered(cx.source)),
            _ => cx.in_step(step, |cx| self.render_here(cx)),
        }
    }
}

/// A rendered document: typed values, and text that remembers the origin of its bytes.
///
/// Authored constants and map keys are borrowed from the compiled template (`'t`), so a
/// placeholder-free subtree costs nothing to render whatever its size;
/// [`Rendered::into_owned`] detaches a result from its template.
#[derive(Debug, Clone, PartialEq)]
pub enum Rendered<'t> {
    /// A typed value (an authored constant, or a whole-value placeholder's data).
    Value(Cow<'t, Value>, Origin),
    /// An authored constant string, borrowed from the template.
    Str(&'t str),
    /// A rendered string.
    Text(Text),
    /// A list.
    Array(Vec<Rendered<'t>>),
    /// A map, keys in document order.
    Object(Vec<(Cow<'t, str>, Rendered<'t>)>),
}

/// Written as the JSON value [`Rendered::into_json`] would give, without building it.
impl serde::Serialize for Rendered<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Rendered::Value(v, _) => v.serialize(s),
            Rendered::Str(text) => s.serialize_str(text),
            Rendered::Text(t) => s.serialize_str(&t.text),
            Rendered::Array(items) => s.collect_seq(items),
            Rendered::Object(entries) => {
                s.collect_map(entries.iter().map(|(k, v)| (k.as_ref(), v)))
            }
        }
    }
}

impl<'t> Rendered<'t> {
    /// Typed data (owned), shown with `origin`.
    pub fn data(value: Value, origin: Origin) -> Rendered<'t> {
        Rendered::Value(Cow::Owned(value), origin)
    }

    /// The same result, owning everything it borrowed from its template.
    pub fn into_owned(self) -> Rendered<'static> {
        match self {
            Rendered::Value(v, o) => Rendered::Value(Cow::Owned(v.into_owned()), o),
            Rendered::Str(text) => Rendered::Value(
                Cow::Owned(Value::String(text.to_string())),
                Origin::Authored,
            ),
            Rendered::Text(t) => Rendered::Text(t),
            Rendered::Array(items) => {
                Rendered::Array(items.into_iter().map(Rendered::into_owned).collect())
            }
            Rendered::Object(entries) => Rendered::Object(
                entries
                    .into_iter()
                    .map(|(k, v)| (Cow::Owned(k.into_owned()), v.into_owned()))
                    .collect(),
            ),
        }
    }

    /// The plain JSON value (borrowed constants are copied).
    pub fn into_json(self) -> Value {
        match self {
            Rendered::Value(v, _) => v.into_owned(),
            Rendered::Str(text) => Value::String(text.to_string()),
            Rendered::Text(t) => Value::String(t.text),
            Rendered::Array(items) => {
                Value::Array(items.into_iter().map(Rendered::into_json).collect())
            }
            Rendered::Object(entries) => Value::Object(
                entries
                    .into_iter()
                    .map(|(k, v)| (k.into_owned(), v.into_json()))
                    .collect::<Map<_, _>>(),
            ),
        }
    }

    /// The JSON value with every secret run shown as `***` (a whole secret value becomes `"***"`).
    pub fn to_redacted_json(&self) -> Value {
        match self {
            Rendered::Value(_, Origin::Secret) => Value::String("***".into()),
            Rendered::Value(v, _) => Value::clone(v),
            Rendered::Str(text) => Value::String(text.to_string()),
            Rendered::Text(t) => Value::String(t.redacted()),
            Rendered::Array(items) => {
                Value::Array(items.iter().map(Rendered::to_redacted_json).collect())
            }
            Rendered::Object(entries) => Value::Object(
                entries
                    .iter()
                    .map(|(k, v)| (k.to_string(), v.to_redacted_json()))
                    .collect::<Map<_, _>>(),
            ),
        }
    }

    /// The size of the output in bytes — text, and the text form of typed values (see
    /// [`crate::value_text_len`]), map keys included — when it is at most `budget`; `None`
    /// otherwise. Counting stops at the budget.
    pub fn size_within(&self, budget: usize) -> Option<usize> {
        match self {
            Rendered::Text(t) => (t.text.len() <= budget).then_some(t.text.len()),
            Rendered::Str(text) => (text.len() <= budget).then_some(text.len()),
            Rendered::Value(v, _) => crate::value_text_len(v.as_ref(), budget),
            Rendered::Array(items) => items
                .iter()
                .try_fold(0, |n: usize, r| Some(n + r.size_within(budget - n)?)),
            Rendered::Object(entries) => entries.iter().try_fold(0, |n: usize, (k, r)| {
                let n = n.checked_add(k.len()).filter(|n| *n <= budget)?;
                Some(n + r.size_within(budget - n)?)
            }),
        }
    }

    /// The strongest origin anywhere inside (secret > data > authored).
    pub fn origin(&self) -> Origin {
        match self {
            Rendered::Value(_, o) => *o,
            Rendered::Str(_) => Origin::Authored,
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
            Rendered::Str(text) => out.push(text, Origin::Authored),
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Origin, Text};
    use serde_json::json;

    #[test]
    fn a_rendered_document_serialises_as_its_json_value() {
        let constant = json!({"n": 1.5, "list": [true, null, "x"]});
        let rendered = Rendered::Object(vec![
            (
                Cow::Borrowed("a"),
                Rendered::Value(Cow::Borrowed(&constant), Origin::Authored),
            ),
            (
                Cow::Owned("b".into()),
                Rendered::Array(vec![
                    Rendered::Text({
                        let mut t = Text::with_capacity(16, 1);
                        t.push("hi \"there\"", Origin::Data);
                        t
                    }),
                    Rendered::data(json!(7), Origin::Data),
                ]),
            ),
        ]);
        let written = serde_json::to_string_pretty(&rendered).unwrap();
        assert_eq!(
            written,
            serde_json::to_string_pretty(&rendered.into_json()).unwrap()
        );
    }
}
