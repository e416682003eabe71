use strata_core::syntax::{lit_at, CompileCx, Found, Part, Pos, Syntax};
use strata_core::{Error, Layer, Span};

use crate::hole::ParamHole;
use crate::name_len;

/// The compile pass of layer P.
#[derive(Debug, Clone, Copy, Default)]
pub struct ParamSyntax;

impl Syntax for ParamSyntax {
    fn layer(&self) -> Layer {
        Layer::PARAMS
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
        _cx: &CompileCx<'_>,
    ) -> Result<Option<Found>, Error> {
        let Some((lit, bytes)) = lit_at(parts, at) else {
            return Ok(None);
        };
        let text = &lit.text[at.off..];
        if at.off > 0 && lit.text.as_bytes()[at.off - 1] == b'$' {
            return Ok(None);
        }
        if bytes.get(1) == Some(&b'{') {
            let n = name_len(&bytes[2..]);
            if n > 0 && bytes[2 + n..].starts_with(b"}}") {
                let literal = format!("{{{}}}", &text[2..2 + n]);
                return Ok(Some(Found::data(literal, at.ahead(n + 4))));
            }
            return Ok(None);
        }
        let n = name_len(&bytes[1..]);
        if n == 0 || bytes.get(1 + n) != Some(&b'}') {
            return Ok(None);
        }
        let start = lit.start + at.off;
        let hole = ParamHole::new(text[1..1 + n].into(), Span::new(start, start + n + 2));
        Ok(Some(Found::hole(hole, at.ahead(n + 2))))
    }
}
