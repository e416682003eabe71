use std::borrow::Cow;

use serde_json::Value;
use strata_core::syntax::Seq;
use strata_core::{
    Error, ErrorKind, FieldPath, Layer, Limits, Node, PathSeg, Reference, RenderOptions, Rendered,
    Scope, Warning,
};
use strata_params::Fixpoint;

use crate::chain::Chain;

/// A document compiled for one chain: parse once, render many times.
#[derive(Debug)]
pub struct Template {
    root: Node,
    /// Layer P's fixpoint over the document's top-level keys.
    fixpoint: Fixpoint,
    limits: Limits,
}

/// The result of one render; it borrows the template's constants and keys (`'t`).
#[derive(Debug, Clone, PartialEq)]
pub struct Output<'t> {
    /// The rendered document, with the origin of every string's bytes.
    pub value: Rendered<'t>,
    /// Missing variables, paths and inputs (empty in strict mode, where they are errors).
    pub warnings: Vec<Warning>,
}

impl Template {
    /// Compiles every string leaf of `value` through `chain`. Map keys are never templated.
    ///
    /// The template keeps its own copy of the document's text; [`Template::compile_owned`]
    /// takes the document instead and keeps its constant strings without copying them.
    pub fn compile(value: &Value, chain: &Chain, limits: &Limits) -> Result<Template, Error> {
        let mut cx = Compile::new(chain, limits);
        let root = cx.node(Cow::Borrowed(value), &FieldPath::root())?;
        Ok(Template::from_root(root, limits))
    }

    /// Compiles a document the caller no longer needs: its placeholder-free strings become the
    /// template's constants without being copied.
    pub fn compile_owned(value: Value, chain: &Chain, limits: &Limits) -> Result<Template, Error> {
        let mut cx = Compile::new(chain, limits);
        let root = cx.node(Cow::Owned(value), &FieldPath::root())?;
        Ok(Template::from_root(root, limits))
    }

    /// The template of a compiled tree.
    fn from_root(root: Node, limits: &Limits) -> Template {
        Template {
            fixpoint: Fixpoint::of(&root),
            root,
            limits: limits.clone(),
        }
    }

    /// True when the document holds no placeholder: rendering returns it unchanged.
    pub fn is_const(&self) -> bool {
        self.root.is_const()
    }

    /// What every placeholder refers to, with the field path of its string.
    pub fn references(&self) -> Vec<(FieldPath, Reference)> {
        let mut out = Vec::new();
        self.root.references(&FieldPath::root(), &mut out);
        out
    }

    /// Renders the document against `scope`; `options` say what a missing value does.
    ///
    /// The result borrows the template's constants and keys, and the scope's data where a
    /// whole-value placeholder takes a value as it is: it lives as long as both.
    pub fn render<'t>(
        &'t self,
        scope: &Scope<'t>,
        options: &RenderOptions,
    ) -> Result<Output<'t>, Error> {
        let (value, warnings) = self
            .fixpoint
            .render(&self.root, scope, &self.limits, *options)?;
        Ok(Output { value, warnings })
    }
}

/// One document's compile: the chain, the limits, and what the document has used of its
/// budget so far (bytes of strings, placeholders).
struct Compile<'c> {
    chain: &'c Chain,
    limits: &'c Limits,
    bytes: usize,
    holes: usize,
}

impl<'c> Compile<'c> {
    fn new(chain: &'c Chain, limits: &'c Limits) -> Compile<'c> {
        Compile {
            chain,
            limits,
            bytes: 0,
            holes: 0,
        }
    }

    /// Compiles a document node, borrowed or owned: an owned one gives its strings to the
    /// template, a borrowed one has them copied (each string once).
    fn node(&mut self, value: Cow<'_, Value>, path: &FieldPath) -> Result<Node, Error> {
        match value {
            Cow::Borrowed(Value::String(s)) => self.string(Cow::Borrowed(s), path),
            Cow::Owned(Value::String(s)) => self.string(Cow::Owned(s), path),
            Cow::Borrowed(Value::Array(items)) => self.array(items.iter().map(Cow::Borrowed), path),
            Cow::Owned(Value::Array(items)) => self.array(items.into_iter().map(Cow::Owned), path),
            Cow::Borrowed(Value::Object(map)) => self.object(
                map.iter()
                    .map(|(k, v)| (Cow::Borrowed(k.as_str()), Cow::Borrowed(v))),
                path,
            ),
            Cow::Owned(Value::Object(map)) => self.object(
                map.into_iter().map(|(k, v)| (Cow::Owned(k), Cow::Owned(v))),
                path,
            ),
            other => Ok(Node::Const(other.into_owned())),
        }
    }

    /// Compiles the items of a list; a list of constants is one constant.
    fn array<'v>(
        &mut self,
        items: impl Iterator<Item = Cow<'v, Value>>,
        path: &FieldPath,
    ) -> Result<Node, Error> {
        let nodes = items
            .enumerate()
            .map(|(i, v)| self.node(v, &path.child(PathSeg::Index(i))))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(if nodes.iter().all(Node::is_const) {
            Node::Const(Value::Array(nodes.into_iter().map(into_const).collect()))
        } else {
            Node::Array(nodes)
        })
    }

    /// Compiles the values of a map (never its keys); a map of constants is one constant.
    fn object<'v>(
        &mut self,
        entries: impl Iterator<Item = (Cow<'v, str>, Cow<'v, Value>)>,
        path: &FieldPath,
    ) -> Result<Node, Error> {
        let entries = entries
            .map(|(k, v)| {
                let k = k.into_owned();
                let node = self.node(v, &path.child(PathSeg::Key(k.clone())))?;
                Ok((k, node))
            })
            .collect::<Result<Vec<_>, Error>>()?;
        Ok(if entries.iter().all(|(_, n)| n.is_const()) {
            Node::Const(Value::Object(
                entries
                    .into_iter()
                    .map(|(k, n)| (k, into_const(n)))
                    .collect(),
            ))
        } else {
            Node::Object(entries)
        })
    }

    /// Compiles one authored string at `path`, counting it against the document's budget.
    fn string(&mut self, s: Cow<'_, str>, path: &FieldPath) -> Result<Node, Error> {
        let len = s.len();
        let node = compile_string(s, self.chain, self.limits).map_err(|e| e.at_path(path))?;
        self.bytes = self.bytes.saturating_add(len);
        if self.bytes > self.limits.template_bytes_per_document {
            return Err(Error::new(
                Layer::REQUEST,
                ErrorKind::Limit,
                format!(
                    "the document's strings exceed the limit of {} bytes",
                    self.limits.template_bytes_per_document
                ),
            )
            .with_hint("split the document, or pass large text as data")
            .at_path(path));
        }
        if let Node::Leaf(seq) = &node {
            self.holes += seq.hole_count();
            if self.holes > self.limits.placeholders_per_document {
                return Err(Error::new(
                    Layer::REQUEST,
                    ErrorKind::Limit,
                    format!(
                        "more than {} placeholders in one document",
                        self.limits.placeholders_per_document
                    ),
                )
                .with_limit(
                    "placeholders_per_document",
                    self.limits.placeholders_per_document,
                    "split the document, or",
                )
                .at_path(path));
            }
        }
        Ok(node)
    }
}

/// The value of a constant node.
fn into_const(node: Node) -> Value {
    match node {
        Node::Const(v) => v,
        _ => unreachable!("only called on constant nodes"),
    }
}

/// Compiles one authored string through `chain`.
fn compile_string(s: Cow<'_, str>, chain: &Chain, limits: &Limits) -> Result<Node, Error> {
    if s.len() > limits.template_bytes {
        return Err(Error::new(
            Layer::REQUEST,
            ErrorKind::Limit,
            format!(
                "string of {} bytes exceeds the template limit of {} bytes",
                s.len(),
                limits.template_bytes
            ),
        )
        .with_limit(
            "template_bytes",
            limits.template_bytes,
            "pass large text as data, or",
        ));
    }
    if memchr::memchr2(b'$', b'{', s.as_bytes()).is_none() {
        return Ok(Node::Const(Value::String(s.into_owned())));
    }
    let seq = Seq::compile(&s, chain.stages(), limits)?;
    Ok(if seq.is_literal() {
        Node::Const(Value::String(s.into_owned()))
    } else {
        Node::Leaf(seq)
    })
}
