use strata_core::syntax::{env_owns, lit_at, CompileCx, Found, Part, Pos, Syntax};
use strata_core::{Error, ErrorKind, Layer, Span};

use crate::expr::parse_expr;
use crate::hole::ContextHole;

/// The compile pass of layer C.
#[derive(Debug, Clone, Copy, Default)]
pub struct ContextSyntax;

/// Finds the `}` closing a context placeholder whose inside starts at `bytes[0]`, skipping
/// quoted strings and balanced braces of JSON literals.
fn find_close(bytes: &[u8]) -> Option<usize> {
    let (mut depth, mut quote, mut i) = (0usize, None::<u8>, 0);
    while i < bytes.len() {
        let b = bytes[i];
        match quote {
            Some(_) if b == b'\\' => i += 1,
            Some(q) if b == q => quote = None,
            Some(_) => {}
            None => match b {
                b'"' | b'\'' => quote = Some(b),
                b'{' => depth += 1,
                b'}' if depth == 0 => return Some(i),
                b'}' => depth -= 1,
                _ => {}
            },
        }
        i += 1;
    }
    None
}

/// True when the text after `${` is layer C's: after optional whitespace, a lower-case letter,
/// `_`, one of `( ! ' " - + [ {` (an expression), a closing brace or the end of the text.
/// Layer E's names are excluded — a name followed by `}` or a Compose operator, so
/// `${DEBUG?a:b}` is layer E's `?` operator, never a conditional; a digit or an upper-case
/// letter otherwise (`${9X}`, `${Foo}`, `${DEBUG ? a : b}`) is nobody's.
fn owns(after_open: &[u8]) -> bool {
    if env_owns(after_open) {
        return false;
    }
    let trimmed = after_open.iter().position(|b| !b.is_ascii_whitespace());
    match trimmed.map(|i| after_open[i]) {
        None => true,
        Some(b) => b.is_ascii_lowercase() || b"_}(!'\"-+[{".contains(&b),
    }
}

impl Syntax for ContextSyntax {
    fn layer(&self) -> Layer {
        Layer::CONTEXT
    }

    fn openers(&self) -> (u8, u8) {
        (b'$', b'$')
    }

    fn keeps_type(&self) -> bool {
        true
    }

    fn parse(
        &self,
        parts: &mut [Part],
        at: Pos,
        _cx: &CompileCx<'_>,
    ) -> Result<Option<Found>, Error> {
        let Some((lit, bytes)) = lit_at(parts, at) else {
            return Ok(None);
        };
        let start = lit.start + at.off;
        if let Some(escape) = Found::dollar_escape(bytes, at) {
            return Ok(Some(escape));
        }
        if !bytes.starts_with(b"${") || !owns(&bytes[2..]) {
            return Ok(None);
        }
        let Some(close) = find_close(&bytes[2..]) else {
            let interrupted = at.part + 1 < parts.len();
            let message = if interrupted {
                "context placeholder is interrupted by a substituted value"
            } else {
                "unclosed `${`: no matching `}`"
            };
            return Err(Error::new(Layer::CONTEXT, ErrorKind::Syntax, message)
                .with_span(Span::new(start, lit.start + lit.text.len()))
                .with_hint("close the placeholder with `}`, or write `$${` for a literal `${`"));
        };
        let inner = &lit.text[at.off + 2..at.off + 2 + close];
        let expr = parse_expr(inner, start + 2)?;
        let span = Span::new(start, start + close + 3);
        let hole = ContextHole::new(expr, inner.trim().into(), span);
        Ok(Some(Found::hole(hole, at.ahead(close + 3))))
    }
}
