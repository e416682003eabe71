use strata_core::syntax::{
    env_name_len, env_operator_len, lit_at, take_word, CompileCx, Found, Part, Pos, Syntax,
};
use strata_core::{Error, ErrorKind, Layer, Span};

use crate::hole::{EnvHole, Op};

/// The compile pass of layer E.
#[derive(Debug, Clone, Copy, Default)]
pub struct EnvSyntax;

impl Syntax for EnvSyntax {
    fn layer(&self) -> Layer {
        Layer::ENV
    }

    fn openers(&self) -> (u8, u8) {
        (b'$', b'$')
    }

    fn keeps_type(&self) -> bool {
        false
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
        let start = lit.start + at.off;
        if let Some(escape) = Found::dollar_escape(bytes, at) {
            return Ok(Some(escape));
        }
        if !bytes.starts_with(b"${") {
            return Ok(None);
        }
        let n = env_name_len(&bytes[2..]);
        if n == 0 {
            return Ok(None);
        }
        let name: Box<str> = lit.text[at.off + 2..at.off + 2 + n].into();
        let after = &bytes[2 + n..];
        if after.is_empty() {
            return Err(unclosed(&name, start, lit.start + lit.text.len()));
        }
        if after[0] == b'}' {
            let hole = EnvHole::new(name, Op::Plain, None, Span::new(start, start + 3 + n));
            return Ok(Some(Found::hole(hole, at.ahead(3 + n))));
        }
        let Some(op_len) = env_operator_len(after) else {
            return Ok(None);
        };
        let op = Op::from_bytes(&after[..op_len]);
        let word_start = at.ahead(2 + n + op_len);
        let text_end = lit.start + lit.text.len();
        let Some(word) = take_word(parts, word_start, start, self, cx)? else {
            return Err(unclosed(&name, start, last_end(parts).max(text_end)));
        };
        let hole = EnvHole::new(name, op, Some(word.seq), word.span);
        Ok(Some(Found::hole(hole, word.end)))
    }
}

fn last_end(parts: &[Part]) -> usize {
    parts
        .iter()
        .rev()
        .find_map(|p| match p {
            Part::Lit(l) => Some(l.start + l.text.len()),
            _ => None,
        })
        .unwrap_or(0)
}

fn unclosed(name: &str, start: usize, end: usize) -> Error {
    Error::new(
        Layer::ENV,
        ErrorKind::Syntax,
        format!("unclosed `${{{name}`: no matching `}}`"),
    )
    .with_span(Span::new(start, end))
    .with_hint(format!(
        "close it as `${{{name}}}`, or write `$${{` for a literal `${{`"
    ))
}
