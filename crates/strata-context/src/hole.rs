use strata_core::syntax::{Hole, RenderCx};
use strata_core::{Error, ErrorKind, Layer, Origin, Reference, Rendered, Span, Text};

use crate::eval::{eval, Fail};
use crate::{Expr, Path, Seg};

/// A compiled `${path}` placeholder.
#[derive(Debug, Clone)]
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

    /// A missing path is a warning (an error in strict mode); a type error is an error.
    fn fail(&self, cx: &mut RenderCx<'_, '_>, fail: Fail<'_>) -> Result<(), Error> {
        let (path, miss) = match fail {
            Fail::Missing(path, miss) => (path, miss),
            Fail::Type(message) => {
                return Err(Error::new(
                    Layer::CONTEXT,
                    ErrorKind::Type,
                    format!("`{}`: {message}", self.source),
                )
                .with_span(self.span)
                .with_hint("types are strict: convert with number(…) or string(…)"))
            }
        };
        let mut message = format!("context path `{}` not found", self.source);
        if let Some(s) = miss.suggestion {
            let mut fixed = path.clone();
            fixed.segs[miss.at] = Seg::Key(s);
            fixed.segs.truncate(miss.at + 1);
            message.push_str(&format!("; did you mean `{}`?", fixed.display()));
        } else if let Some(call) = length_call(path, miss.at) {
            message.push_str(&format!("; did you mean `{call}`?"));
        }
        cx.missing(Layer::CONTEXT, message, self.span)
    }
}

impl Hole for ContextHole {
    fn layer(&self) -> Layer {
        Layer::CONTEXT
    }

    fn span(&self) -> Span {
        self.span
    }

    fn references(&self) -> Vec<Reference> {
        let optional = !matches!(self.expr, Expr::Path(_));
        self.expr
            .paths()
            .into_iter()
            .map(|p| Reference {
                layer: Layer::CONTEXT,
                name: p.display(),
                path: p.clone(),
                span: self.span,
                optional,
            })
            .collect()
    }

    fn render_text(&self, cx: &mut RenderCx<'_, '_>, out: &mut Text) -> Result<(), Error> {
        match eval(&self.expr, cx.scope.context, cx.scope.inputs) {
            Ok(v) => out.push_value(&v, Origin::Data),
            Err(fail) => self.fail(cx, fail)?,
        }
        Ok(())
    }

    fn render_whole<'t>(&self, cx: &mut RenderCx<'t, '_>) -> Result<Rendered<'t>, Error> {
        match eval(&self.expr, cx.scope.context, cx.scope.inputs) {
            Ok(v) => Ok(Rendered::Value(v, Origin::Data)),
            Err(fail) => {
                self.fail(cx, fail)?;
                Ok(Rendered::Text(Text::default()))
            }
        }
    }
}

/// `items.length` (JavaScript), `items.len` or `items.size`, missing as the last step of a
/// path: the call layer C spells it with, `length(items)`.
fn length_call(path: &Path, at: usize) -> Option<String> {
    let last = path.segs.len().checked_sub(1)?;
    match &path.segs[last] {
        Seg::Key(k)
            if at == last
                && at > 0
                && matches!(k.as_str(), "length" | "len" | "size" | "count") =>
        {
            Some(format!(
                "length({})",
                Path::new(path.segs[..last].to_vec()).display()
            ))
        }
        _ => None,
    }
}
