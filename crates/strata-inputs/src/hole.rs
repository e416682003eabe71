use std::borrow::Cow;

use strata_core::syntax::{Hole, RenderCx, Seq};
use strata_core::{Error, Layer, Origin, Reference, Rendered, Span, Text};

/// What a reference does when its input is missing.
#[derive(Debug, Clone)]
pub enum Mode {
    /// `{input:key}`: kept literally, with a warning.
    Required,
    /// `{input:key?}`: empty.
    Optional,
    /// `{input:key:default}` / `{input:key|default}`: the authored default.
    Default(Seq),
}

/// A compiled `{input:…}` reference.
#[derive(Debug, Clone)]
pub struct InputHole {
    key: Box<str>,
    mode: Mode,
    span: Span,
}

impl InputHole {
    /// A reference to input `key`.
    pub fn new(key: Box<str>, mode: Mode, span: Span) -> InputHole {
        InputHole { key, mode, span }
    }

    fn render_missing(&self, cx: &mut RenderCx<'_, '_>, out: &mut Text) -> Result<(), Error> {
        match &self.mode {
            Mode::Required => {
                cx.missing(
                    Layer::INPUTS,
                    format!(
                        "input `{}` is not set; the reference is kept as written",
                        self.key
                    ),
                    self.span,
                )?;
                out.push(&format!("{{input:{}}}", self.key), Origin::Authored);
                Ok(())
            }
            Mode::Optional => Ok(()),
            Mode::Default(word) => word.render_text(cx, out),
        }
    }
}

impl Hole for InputHole {
    fn layer(&self) -> Layer {
        Layer::INPUTS
    }

    fn span(&self) -> Span {
        self.span
    }

    fn words_mut(&mut self) -> &mut [Seq] {
        match &mut self.mode {
            Mode::Default(word) => std::slice::from_mut(word),
            _ => &mut [],
        }
    }

    fn words(&self) -> &[Seq] {
        match &self.mode {
            Mode::Default(word) => std::slice::from_ref(word),
            _ => &[],
        }
    }

    fn references(&self) -> Vec<Reference> {
        vec![Reference {
            layer: Layer::INPUTS,
            name: self.key.to_string(),
            path: strata_core::walk::Path::new(vec![strata_core::walk::Seg::Key(
                self.key.to_string(),
            )]),
            span: self.span,
            optional: !matches!(self.mode, Mode::Required),
        }]
    }

    fn render_text(&self, cx: &mut RenderCx<'_, '_>, out: &mut Text) -> Result<(), Error> {
        match cx.scope.inputs.namespace(&self.key) {
            Some(v) => {
                out.push_value(v, Origin::Data);
                Ok(())
            }
            None => self.render_missing(cx, out),
        }
    }

    fn render_whole<'t>(&self, cx: &mut RenderCx<'t, '_>) -> Result<Rendered<'t>, Error> {
        if let Some(v) = cx.scope.inputs.namespace(&self.key) {
            return Ok(Rendered::Value(Cow::Borrowed(v), Origin::Data));
        }
        let mut out = Text::default();
        self.render_missing(cx, &mut out)?;
        Ok(Rendered::Text(out))
    }
}
