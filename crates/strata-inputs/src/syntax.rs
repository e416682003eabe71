use strata_core::syntax::{lit_at, take_word, CompileCx, Found, Part, Pos, Syntax};
use strata_core::{Error, ErrorKind, Layer, Span};

use crate::hole::{InputHole, Mode};

const PREFIX: &[u8] = b"{input:";

/// The compile pass of layer I.
#[derive(Debug, Clone, Copy, Default)]
pub struct InputSyntax;

fn key_len(bytes: &[u8]) -> usize {
    bytes
        .iter()
        .take_while(|b| b.is_ascii_alphanumeric() || **b == b'_')
        .count()
}

fn malformed(message: &str, span: Span) -> Error {
    Error::new(Layer::INPUTS, ErrorKind::Syntax, message.to_string())
        .with_span(span)
        .with_hint("write `{input:key}`, `{input:key?}`, `{input:key:default}` or `{input:key|default}`; keys are letters, digits and `_`")
}

impl Syntax for InputSyntax {
    fn layer(&self) -> Layer {
        Layer::INPUTS
    }

    fn openers(&self) -> (u8, u8) {
        (b'{', b'{')
    }

    fn keeps_type(&self) -> bool {
        true
    }

    fn parse(
        &self,
        parts: &mut [Part],
        at: Pos,
        cx: &CompileCx<'_>,
    ) -> Result<Option<Found>, Error> {
        let Some((lit, bytes)) = lit_at(parts, at) else {
            return Ok(None);
        };
        let text = &lit.text[at.off..];
        let start = lit.start + at.off;
        let text_end = lit.start + lit.text.len();
        if bytes.get(1) == Some(&b'{') && bytes[1..].starts_with(PREFIX) {
            let n = key_len(&bytes[1 + PREFIX.len()..]);
            let after = 1 + PREFIX.len() + n;
            let q = usize::from(bytes.get(after) == Some(&b'?'));
            if n > 0 && bytes[after + q..].starts_with(b"}}") {
                let literal = &text[1..after + q + 1];
                return Ok(Some(Found::data(literal, at.ahead(after + q + 2))));
            }
            return Ok(None);
        }
        if !bytes.starts_with(PREFIX) {
            return Ok(None);
        }
        let n = key_len(&bytes[PREFIX.len()..]);
        let key_end = PREFIX.len() + n;
        let key: Box<str> = text[PREFIX.len()..key_end].into();
        let unclosed = || {
            malformed(
                "unclosed `{input:`: no matching `}`",
                Span::new(start, text_end),
            )
        };
        let Some(&next) = bytes.get(key_end) else {
            return Err(unclosed());
        };
        if n == 0 {
            return Err(malformed(
                "`{input:` needs a key",
                Span::new(start, start + key_end + 1),
            ));
        }
        let simple = |mode: Mode, len: usize| {
            let span = Span::new(start, start + len);
            let hole = InputHole::new(key.clone(), mode, span);
            Ok(Some(Found::hole(hole, at.ahead(len))))
        };
        match next {
            b'}' => simple(Mode::Required, key_end + 1),
            b'?' if bytes.get(key_end + 1) == Some(&b'}') => simple(Mode::Optional, key_end + 2),
            b':' | b'|' => {
                let word_start = at.ahead(key_end + 1);
                let Some(word) = take_word(parts, word_start, start, self, cx)? else {
                    return Err(unclosed());
                };
                let hole = InputHole::new(key, Mode::Default(word.seq), word.span);
                Ok(Some(Found::hole(hole, word.end)))
            }
            _ if !text[key_end..].contains('}') => Err(unclosed()),
            _ => Err(malformed(
                "malformed input reference",
                Span::new(start, start + key_end + 1),
            )),
        }
    }
}
