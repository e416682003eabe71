use std::borrow::Cow;
use std::sync::Arc;

use serde_json::Value;
use strata_core::syntax::Seq;
use strata_core::{
    Const, Error, ErrorKind, FieldPath, Layer, Limits, Node, Reference, RenderOptions, Rendered,
    Scope, Warning,
};
use strata_doc::{replay, Build, Document, Format};
use strata_params::{Compiled, EachEntry, Fixpoint};

use crate::chain::Chain;
use crate::entries::Entries;

/// A document compiled for one chain: parse once, render many times.
#[derive(Debug)]
pub struct Template {
    root: Node,
    /// The text a template read from a file was read from: its constant strings point
    /// into it ([`Const::Source`]).
    source: Option<Arc<String>>,
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
        let root = replay(&mut Compile::new(chain, limits), Cow::Borrowed(value))?;
        Ok(Template::from_root(root, limits, None))
    }

    /// Compiles a document the caller no longer needs: its placeholder-free strings become the
    /// template's constants without being copied.
    pub fn compile_owned(value: Value, chain: &Chain, limits: &Limits) -> Result<Template, Error> {
        let root = replay(&mut Compile::new(chain, limits), Cow::Owned(value))?;
        Ok(Template::from_root(root, limits, None))
    }

    /// Reads `bytes` named `name` as `format` (see [`Document::parse`]) straight into a
    /// template: YAML string leaves are compiled as the reader meets them, so the document
    /// is never held as a JSON value as well, and a limit of the compile (placeholders,
    /// bytes of strings) stops the read at the string that breaks it, located there.
    ///
    /// The document returned keeps the text, to locate and show the compile's error or the
    /// render's warnings and errors; the template shares it, and its constant strings that
    /// stand as they are in the text point into it instead of holding copies. The outer
    /// error says the text is not a document.
    pub fn read(
        name: &str,
        bytes: Vec<u8>,
        format: Format,
        chain: &Chain,
        limits: &Limits,
    ) -> Result<(Document, Result<Template, Error>), Error> {
        let mut cx = Compile::new(chain, limits);
        let (doc, root) = Document::parse_into(name, bytes, format, limits, &mut cx)?;
        let source = cx.source.take();
        Ok((
            doc,
            root.map(|root| Template::from_root(root, limits, source)),
        ))
    }

    /// The template of a compiled tree.
    fn from_root(root: Node, limits: &Limits, source: Option<Arc<String>>) -> Template {
        Template {
            fixpoint: Fixpoint::of(&root),
            root,
            source,
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
        let (value, warnings) = self.fixpoint.render(self.compiled(), scope, *options)?;
        Ok(Output { value, warnings })
    }

    /// The compiled document as its fixpoint renders it.
    fn compiled(&self) -> Compiled<'_> {
        Compiled {
            root: &self.root,
            source: text_of(&self.source),
            limits: &self.limits,
        }
    }

    /// True when the document is a map with a placeholder somewhere inside:
    /// [`Template::render_each`] then hands it over a top-level entry at a time.
    pub fn is_map(&self) -> bool {
        matches!(self.root, Node::Object(_))
    }

    /// Renders the document as [`Template::render`] does, without gathering the result:
    /// `each` gets every top-level entry (key and value) as it is rendered — or, when the
    /// document is not a map with a placeholder inside (see [`Template::is_map`]), the whole
    /// document without a key. Returns the warnings; an error of `each` stops the render.
    pub fn render_each<'t>(
        &'t self,
        scope: &Scope<'t>,
        options: &RenderOptions,
        each: &mut EachEntry<'_, 't>,
    ) -> Result<Vec<Warning>, Error> {
        self.fixpoint
            .render_each(self.compiled(), scope, *options, each)
    }
}

/// The text a template's constants point into (empty when it was compiled from a value).
fn text_of(source: &Option<Arc<String>>) -> &str {
    source.as_deref().map_or("", String::as_str)
}

/// One document's compile: the chain, the limits, and what the document has used of its
/// budget so far (bytes of strings, placeholders).
struct Compile<'c> {
    chain: &'c Chain,
    limits: &'c Limits,
    bytes: usize,
    holes: usize,
    /// The text being read, when it is read from text.
    source: Option<Arc<String>>,
}

impl<'c> Compile<'c> {
    fn new(chain: &'c Chain, limits: &'c Limits) -> Compile<'c> {
        Compile {
            chain,
            limits,
            bytes: 0,
            holes: 0,
            source: None,
        }
    }

    /// The value of a constant node (only called on constant nodes).
    fn const_value(&self, node: Node) -> Value {
        match node {
            Node::Const(c) => c.into_value(text_of(&self.source)),
            _ => unreachable!("only called on constant nodes"),
        }
    }

    /// Compiles one authored string, counting it against the document's budget.
    fn string(&mut self, s: String) -> Result<Node, Error> {
        let len = s.len();
        let node = compile_string(s, self.chain, self.limits)?;
        let holes = match &node {
            Node::Leaf(seq) => seq.hole_count(),
            _ => 0,
        };
        self.count(len, holes)?;
        Ok(node)
    }

    /// Counts `bytes` bytes of strings and `holes` placeholders against the document's
    /// budget.
    fn count(&mut self, bytes: usize, holes: usize) -> Result<(), Error> {
        self.bytes = self.bytes.saturating_add(bytes);
        if self.bytes > self.limits.template_bytes_per_document {
            return Err(Error::new(
                Layer::REQUEST,
                ErrorKind::Limit,
                format!(
                    "the document's strings exceed the limit of {} bytes",
                    self.limits.template_bytes_per_document
                ),
            )
            .with_limit(
                "template_bytes_per_document",
                self.limits.template_bytes_per_document,
                "split the document, pass large text as data, or",
            ));
        }
        self.holes = self.holes.saturating_add(holes);
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
            ));
        }
        Ok(())
    }
}

/// The compile as the document reader's builder: string leaves compiled as they are read,
/// lists and maps of constants folded into one constant.
impl Build for Compile<'_> {
    type Node = Node;
    type Map = Entries;
    /// Bytes of strings and placeholders counted so far.
    type Tally = (usize, usize);

    fn tally(&self) -> (usize, usize) {
        (self.bytes, self.holes)
    }

    /// Constant strings that stand as they are in the text point into it.
    const VERBATIM: bool = true;

    fn scalar(&mut self, value: Value) -> Result<Node, Error> {
        match value {
            Value::String(s) => self.string(s),
            other => Ok(Node::Const(Const::of(other))),
        }
    }

    fn source(&mut self, text: &Arc<String>) {
        self.source = Some(Arc::clone(text));
    }

    fn verbatim(&mut self, value: String, at: usize) -> Result<Node, Error> {
        Ok(match self.string(value)? {
            Node::Const(Const::Str(s)) => {
                Node::Const(Const::source(at, s.len()).unwrap_or(Const::Str(s)))
            }
            node => node,
        })
    }

    fn insert(&mut self, map: &mut Entries, key: String, node: Node) -> Result<(), String> {
        map.insert(key, node)
    }

    fn contains(&self, map: &Entries, key: &str) -> bool {
        map.contains(key)
    }

    fn list(&mut self, items: Vec<Node>) -> Node {
        if items.iter().all(Node::is_const) {
            Node::Const(Const::of(Value::Array(
                items.into_iter().map(|n| self.const_value(n)).collect(),
            )))
        } else {
            Node::Array(items)
        }
    }

    fn map(&mut self, map: Entries) -> Node {
        let entries = map.into_entries();
        if entries.iter().all(|(_, n)| n.is_const()) {
            Node::Const(Const::of(Value::Object(
                entries
                    .into_iter()
                    .map(|(k, n)| (k, self.const_value(n)))
                    .collect(),
            )))
        } else {
            Node::Object(Box::new(entries))
        }
    }

    fn repeat(
        &mut self,
        node: &Node,
        (bytes_before, holes_before): (usize, usize),
        (bytes_after, holes_after): (usize, usize),
    ) -> Result<Node, Error> {
        self.count(bytes_after - bytes_before, holes_after - holes_before)?;
        Ok(node.clone())
    }
}

/// Compiles one authored string through `chain`.
fn compile_string(s: String, chain: &Chain, limits: &Limits) -> Result<Node, Error> {
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
        return Ok(Node::Const(Const::Str(s)));
    }
    let seq = Seq::compile(&s, chain.stages(), limits)?;
    Ok(if seq.is_literal() {
        Node::Const(Const::Str(s))
    } else {
        Node::Leaf(seq)
    })
}
