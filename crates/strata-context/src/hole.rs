use strata_core::{Error, Hole, Layer, Origin, Reference, RenderCx, Rendered, Seq, Span, Text};

use crate::eval::{eval, Miss};
use crate::{Expr, Path, Seg};

/// A compiled `${path}` placeholder.
#[derive(Debug)]
pub struct ContextHole {
    expr: Expr,
    source: Box<str>,
    span: Span,
}

impl ContextHole {
    /// A placeholder evaluating `expr`, written as `source`.
    pub fn new(expr: Expr, source: Box<str>, span: Span) -> ContextHole {
        ContextHole { expr, source, span }
    }

    fn report(&self, cx: &mut RenderCx<'_>, path: Option<&Path>, miss: Miss) -> Result<(), Error> {
        let mut message = format!("context path `{}` not found", self.source);
        if let (Some(path), Some(s)) = (path, miss.suggestion) {
            let mut fixed = path.clone();
            fixed.segs[miss.at] = Seg::Key(s);
            fixed.segs.truncate(miss.at + 1);
            message.push_str(&format!("; did you mean `{}`?", fixed.display()));
        }
        cx.missing(Layer::Context, message, self.span)
    }
}

impl Hole for ContextHole {
    fn layer(&self) -> Layer {
        Layer::Context
    }

    fn span(&self) -> Span {
        self.span
    }

    fn words_mut(&mut self) -> &mut [Seq] {
        &mut []
    }

    fn words(&self) -> &[Seq] {
        &[]
    }

    fn references(&self) -> Vec<Reference> {
        let paths: Vec<&Path> = match &self.expr {
            Expr::Path(p) => vec![p],
            Expr::Literal(_) => vec![],
            Expr::Fallback(items) => items
                .iter()
                .filter_map(|e| match e {
                    Expr::Path(p) => Some(p),
                    _ => None,
                })
                .collect(),
        };
        let optional = matches!(self.expr, Expr::Fallback(_));
        paths
            .into_iter()
            .map(|p| Reference {
                layer: Layer::Context,
                name: p.display(),
                span: self.span,
                optional,
            })
            .collect()
    }

    fn render_text(&self, cx: &mut RenderCx<'_>, out: &mut Text) -> Result<(), Error> {
        match eval(&self.expr, cx.scope.context, cx.scope.inputs) {
            Ok(v) => out.push_value(&v, Origin::Data),
            Err((path, miss)) => self.report(cx, path, miss)?,
        }
        Ok(())
    }

    fn render_whole(&self, cx: &mut RenderCx<'_>) -> Result<Rendered, Error> {
        match eval(&self.expr, cx.scope.context, cx.scope.inputs) {
            Ok(v) => Ok(Rendered::Value(v.into_owned(), Origin::Data)),
            Err((path, miss)) => {
                self.report(cx, path, miss)?;
                Ok(Rendered::Text(Text::default()))
            }
        }
    }
}
