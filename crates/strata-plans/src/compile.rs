//! A step's arguments compiled once into a tree of constants and references, so that
//! resolving them is a walk of the tree, never a scan of text. Map keys are never resolved.

use serde_json::{Map, Value};
use strata_core::{Error, FieldPath, PathSeg};

use crate::syntax::{parse, Parsed, Piece, Ref, Target};

/// A node of compiled arguments.
#[derive(Debug, Clone, PartialEq)]
pub enum Node {
    /// A subtree without references (escapes applied).
    Const(Value),
    /// A whole-value reference: `refs[i]`, keeping its value's type.
    Ref(usize),
    /// Text with embedded references.
    Text(Vec<Part>),
    /// A list with references somewhere inside.
    Array(Vec<Node>),
    /// A map with references somewhere inside; keys are literal.
    Object(Vec<(String, Node)>),
}

/// A piece of compiled text.
#[derive(Debug, Clone, PartialEq)]
pub enum Part {
    /// Literal text.
    Lit(String),
    /// `refs[i]`, rendered as text.
    Ref(usize),
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
    /// The tree.
    pub root: Node,
    /// Every reference, in document order.
    pub refs: Vec<Site>,
}

impl Args {
    /// Compiles `value`; errors (with their field paths relative to the arguments and their
    /// spans) are pushed to `errors`, and the string in error is kept as a constant.
    pub fn compile(value: &Value, errors: &mut Vec<Error>) -> Args {
        let mut refs = Vec::new();
        let root = node(value, &mut FieldPath::root(), &mut refs, errors);
        Args { root, refs }
    }

    /// True when the arguments hold no reference.
    pub fn is_const(&self) -> bool {
        self.refs.is_empty()
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

/// A field path being built during the walk: pushed and popped, cloned only for sites.
fn node(
    value: &Value,
    path: &mut FieldPath,
    refs: &mut Vec<Site>,
    errors: &mut Vec<Error>,
) -> Node {
    match value {
        Value::String(s) => string(s, path, refs, errors),
        Value::Array(items) => {
            let nodes: Vec<Node> = items
                .iter()
                .enumerate()
                .map(|(i, v)| {
                    path.0.push(PathSeg::Index(i));
                    let n = node(v, path, refs, errors);
                    path.0.pop();
                    n
                })
                .collect();
            if nodes.iter().all(|n| matches!(n, Node::Const(_))) {
                Node::Const(Value::Array(nodes.into_iter().map(into_const).collect()))
            } else {
                Node::Array(nodes)
            }
        }
        Value::Object(map) => {
            let nodes: Vec<(String, Node)> = map
                .iter()
                .map(|(k, v)| {
                    path.0.push(PathSeg::Key(k.clone()));
                    let n = node(v, path, refs, errors);
                    path.0.pop();
                    (k.clone(), n)
                })
                .collect();
            if nodes.iter().all(|(_, n)| matches!(n, Node::Const(_))) {
                let map: Map<String, Value> =
                    nodes.into_iter().map(|(k, n)| (k, into_const(n))).collect();
                Node::Const(Value::Object(map))
            } else {
                Node::Object(nodes)
            }
        }
        other => Node::Const(other.clone()),
    }
}

fn into_const(n: Node) -> Value {
    match n {
        Node::Const(v) => v,
        _ => Value::Null,
    }
}

fn string(s: &str, path: &FieldPath, refs: &mut Vec<Site>, errors: &mut Vec<Error>) -> Node {
    let mut site = |r: Ref| {
        let text = s[r.span.start..r.span.end].to_string();
        refs.push(Site {
            r,
            field: path.clone(),
            text,
        });
        refs.len() - 1
    };
    match parse(s) {
        Ok(Parsed::Plain(text)) => Node::Const(Value::String(text)),
        Ok(Parsed::Whole(r)) => Node::Ref(site(r)),
        Ok(Parsed::Parts(pieces)) => Node::Text(
            pieces
                .into_iter()
                .map(|p| match p {
                    Piece::Lit(t) => Part::Lit(t),
                    Piece::Ref(r) => Part::Ref(site(r)),
                })
                .collect(),
        ),
        Err(e) => {
            errors.push(e.at_path(path));
            Node::Const(Value::String(s.to_string()))
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn constants_fold_and_references_are_listed_in_order() {
        let mut errors = Vec::new();
        let args = Args::compile(
            &json!({"a": {"b": [1, "x"]}, "{{c.result}}": "$step1.n", "t": "n={$step2} {{PLACEHOLDER_v}}"}),
            &mut errors,
        );
        assert!(errors.is_empty());
        let Node::Object(nodes) = &args.root else {
            panic!("{:?}", args.root)
        };
        assert_eq!(nodes[0], ("a".into(), Node::Const(json!({"b": [1, "x"]}))));
        assert_eq!(nodes[1], ("{{c.result}}".into(), Node::Ref(0)));
        assert_eq!(args.step_ids(), ["step1", "step2"]);
        assert_eq!(args.value_names(), ["v"]);
        assert_eq!(args.refs[1].field.to_string(), "t");
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
