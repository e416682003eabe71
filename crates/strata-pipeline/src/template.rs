use serde_json::Value;
use strata_core::{
    run_pass, CompileCx, Error, FieldPath, Layer, Limits, Node, PathSeg, Reference, RenderCx,
    Rendered, Scope, Seq, Warning,
};

use crate::chain::{syntax, Chain};

/// A document compiled for one chain: parse once, render many times.
#[derive(Debug)]
pub struct Template {
    root: Node,
    limits: Limits,
}

/// The result of one render.
#[derive(Debug, Clone, PartialEq)]
pub struct Output {
    /// The rendered document, with the origin of every string's bytes.
    pub value: Rendered,
    /// Missing variables, paths and inputs (empty in strict mode, where they are errors).
    pub warnings: Vec<Warning>,
}

impl Template {
    /// Compiles every string leaf of `value` through `chain`. Map keys are never templated.
    pub fn compile(value: &Value, chain: &Chain, limits: &Limits) -> Result<Template, Error> {
        let root = compile_node(value, chain, limits, &FieldPath::root())?;
        Ok(Template {
            root,
            limits: limits.clone(),
        })
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

    /// Renders the document against `scope`. In `strict` mode a missing value is an error.
    pub fn render(&self, scope: &Scope<'_>, strict: bool) -> Result<Output, Error> {
        let entries: &[(String, Node)] = match &self.root {
            Node::Object(entries) => entries,
            _ => &[],
        };
        let mut cx = RenderCx::new(scope, &self.limits, strict, entries);
        if entries.is_empty() {
            let value = self.root.render_at(&mut cx, &FieldPath::root())?;
            return Ok(Output {
                value,
                warnings: cx.into_warnings(),
            });
        }
        let (entries, warnings) = cx.render_config()?;
        Ok(Output {
            value: Rendered::Object(entries),
            warnings,
        })
    }
}

fn compile_node(
    value: &Value,
    chain: &Chain,
    limits: &Limits,
    path: &FieldPath,
) -> Result<Node, Error> {
    let node = match value {
        Value::String(s) => compile_string(s, chain, limits).map_err(|e| e.at_path(path))?,
        Value::Array(items) => Node::Array(
            items
                .iter()
                .enumerate()
                .map(|(i, v)| compile_node(v, chain, limits, &path.child(PathSeg::Index(i))))
                .collect::<Result<_, _>>()?,
        ),
        Value::Object(map) => Node::Object(
            map.iter()
                .map(|(k, v)| {
                    let node =
                        compile_node(v, chain, limits, &path.child(PathSeg::Key(k.clone())))?;
                    Ok((k.clone(), node))
                })
                .collect::<Result<_, Error>>()?,
        ),
        other => return Ok(Node::Const(other.clone())),
    };
    let all_const = match &node {
        Node::Array(items) => items.iter().all(Node::is_const),
        Node::Object(entries) => entries.iter().all(|(_, n)| n.is_const()),
        _ => false,
    };
    Ok(if all_const {
        Node::Const(value.clone())
    } else {
        node
    })
}

/// Compiles one authored string through `chain`.
fn compile_string(s: &str, chain: &Chain, limits: &Limits) -> Result<Node, Error> {
    if s.len() > limits.template_bytes {
        return Err(Error::new(
            Layer::Request,
            format!(
                "string of {} bytes exceeds the template limit of {} bytes",
                s.len(),
                limits.template_bytes
            ),
        )
        .with_hint("raise the template-bytes limit, or pass large text as data"));
    }
    if memchr::memchr2(b'$', b'{', s.as_bytes()).is_none() {
        return Ok(Node::Const(Value::String(s.to_string())));
    }
    let cx = CompileCx::new(limits);
    let mut seq = Seq::authored(s);
    for layer in &chain.0 {
        seq = run_pass(seq, syntax(*layer), &cx)?;
    }
    Ok(if seq.is_literal() {
        Node::Const(Value::String(s.to_string()))
    } else {
        Node::Leaf(seq)
    })
}
