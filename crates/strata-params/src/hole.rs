use std::borrow::Cow;

use strata_core::syntax::{Hole, Param, RenderCx};
use strata_core::{Error, Layer, Origin, Reference, Rendered, Span, Text};

/// A compiled `{name}` placeholder.
#[derive(Debug, Clone)]
pub struct ParamHole {
    name: Box<str>,
    span: Span,
}

impl ParamHole {
    /// A placeholder for parameter `name`.
    pub fn new(name: Box<str>, span: Span) -> ParamHole {
        ParamHole { name, span }
    }

    fn source(&self) -> String {
        format!("{{{}}}", self.name)
    }
}

impl Hole for ParamHole {
    fn layer(&self) -> Layer {
        Layer::PARAMS
    }

    fn span(&self) -> Span {
        self.span
    }

    fn references(&self) -> Vec<Reference> {
        vec![Reference {
            layer: Layer::PARAMS,
            name: self.name.to_string(),
            path: strata_core::walk::Path::new(vec![strata_core::walk::Seg::Key(
                self.name.to_string(),
            )]),
            span: self.span,
            optional: false,
        }]
    }

    fn param_name(&self) -> Option<&str> {
        Some(&self.name)
    }

    fn render_text(&self, cx: &mut RenderCx<'_, '_>, out: &mut Text) -> Result<(), Error> {
        match cx.param(&self.name, self.span)? {
            Some(Param::Data(v)) => out.push_value(v, Origin::Data),
            Some(Param::Config(r)) => r.push_text(out),
            None => out.push(&self.source(), Origin::Authored),
        }
        Ok(())
    }

    fn render_whole<'t>(&self, cx: &mut RenderCx<'t, '_>) -> Result<Rendered<'t>, Error> {
        Ok(match cx.param(&self.name, self.span)? {
            Some(Param::Data(v)) => Rendered::Value(Cow::Borrowed(v), Origin::Data),
            Some(Param::Config(r)) => r.clone(),
            None => {
                let mut out = Text::default();
                out.push(&self.source(), Origin::Authored);
                Rendered::Text(out)
            }
        })
    }
}
