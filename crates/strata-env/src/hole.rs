use strata_core::syntax::{Hole, RenderCx, Seq};
use strata_core::{Error, ErrorKind, Layer, Origin, Reference, Span, Text};

/// A Compose operator.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    /// `${NAME}`.
    Plain,
    /// `${NAME:-word}` (`empty: true`) or `${NAME-word}`.
    Default { empty: bool },
    /// `${NAME:?msg}` (`empty: true`) or `${NAME?msg}`.
    Required { empty: bool },
    /// `${NAME:+word}` (`empty: true`) or `${NAME+word}`.
    Alternative { empty: bool },
}

impl Op {
    /// The operator spelled by `bytes` (one of the six spellings).
    pub fn from_bytes(bytes: &[u8]) -> Op {
        let empty = bytes.len() == 2;
        match bytes[bytes.len() - 1] {
            b'-' => Op::Default { empty },
            b'?' => Op::Required { empty },
            _ => Op::Alternative { empty },
        }
    }
}

/// A compiled `${NAME…}` placeholder.
#[derive(Debug, Clone)]
pub struct EnvHole {
    name: Box<str>,
    op: Op,
    /// The operator's word, boxed: most placeholders have none, and a template keeps
    /// every placeholder as long as it lives.
    word: Option<Box<Seq>>,
    span: Span,
}

impl EnvHole {
    /// A placeholder for `name` with operator `op` and its word.
    pub fn new(name: Box<str>, op: Op, word: Option<Seq>, span: Span) -> EnvHole {
        EnvHole {
            name,
            op,
            word: word.map(Box::new),
            span,
        }
    }

    /// Why the variable has no value: unset, or set to bytes that are not UTF-8.
    fn unset_message(&self, cx: &RenderCx<'_, '_>) -> String {
        if cx.scope.env.not_utf8(&self.name) {
            format!(
                "environment variable `{}` is set but its value is not valid UTF-8",
                self.name
            )
        } else {
            format!("environment variable `{}` is not set", self.name)
        }
    }

    fn render_word(&self, cx: &mut RenderCx<'_, '_>, out: &mut Text) -> Result<(), Error> {
        match &self.word {
            Some(word) => word.render_text(cx, out),
            None => Ok(()),
        }
    }
}

impl Hole for EnvHole {
    fn layer(&self) -> Layer {
        Layer::ENV
    }

    fn span(&self) -> Span {
        self.span
    }

    fn words_mut(&mut self) -> &mut [Seq] {
        match &mut self.word {
            Some(word) => std::slice::from_mut(&mut **word),
            None => &mut [],
        }
    }

    fn words(&self) -> &[Seq] {
        self.word.as_deref().map_or(&[], std::slice::from_ref)
    }

    fn references(&self) -> Vec<Reference> {
        vec![Reference {
            layer: Layer::ENV,
            name: self.name.to_string(),
            path: strata_core::walk::Path::new(vec![strata_core::walk::Seg::Key(
                self.name.to_string(),
            )]),
            span: self.span,
            optional: self.op != Op::Plain,
        }]
    }

    fn render_text(&self, cx: &mut RenderCx<'_, '_>, out: &mut Text) -> Result<(), Error> {
        let var = cx.scope.env.get(&self.name);
        let unset_or = |empty: bool| match var {
            None => true,
            Some(v) => empty && v.value.is_empty(),
        };
        let push_value = |out: &mut Text| {
            if let Some(v) = var {
                out.push(&v.value, Origin::of_data(v.secret));
            }
        };
        match self.op {
            Op::Plain => match var {
                Some(_) => push_value(out),
                None => cx.missing(Layer::ENV, self.unset_message(cx), self.span)?,
            },
            Op::Default { empty } if unset_or(empty) => self.render_word(cx, out)?,
            Op::Default { .. } => push_value(out),
            Op::Required { empty } if unset_or(empty) => {
                let mut msg = Text::default();
                self.render_word(cx, &mut msg)?;
                let what = if cx.scope.env.not_utf8(&self.name) {
                    "set but its value is not valid UTF-8"
                } else if empty {
                    "unset or empty"
                } else {
                    "unset"
                };
                let mut message = format!("required variable `{}` is {what}", self.name);
                if !msg.text.is_empty() {
                    message.push_str(": ");
                    message.push_str(&msg.redacted());
                }
                return Err(Error::new(Layer::ENV, ErrorKind::Undefined, message)
                    .with_span(self.span)
                    .with_hint(format!("set `{}` in the environment", self.name)));
            }
            Op::Required { .. } => push_value(out),
            Op::Alternative { empty } if !unset_or(empty) => self.render_word(cx, out)?,
            Op::Alternative { .. } => {}
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A template keeps one per `${…}` as long as it lives: 100,000 of them (the default
    /// limit of a document) cost 4.8 MB at this size, 8 MB with the word inline.
    #[test]
    fn a_placeholder_without_a_word_stays_small() {
        assert_eq!(size_of::<EnvHole>(), 48);
        let word = Seq::authored("fallback");
        let hole = EnvHole::new("X".into(), Op::Plain, Some(word), Span::new(0, 14));
        assert_eq!(hole.words().len(), 1);
        let none = EnvHole::new("X".into(), Op::Plain, None, Span::new(0, 4));
        assert!(none.words().is_empty());
    }
}
