use serde_json::Value;
use strata_core::{Error, Layer, Span};

/// One step of a context path.
#[derive(Debug, Clone, PartialEq)]
pub enum Seg {
    /// A map key (`.name` or `["name"]`).
    Key(String),
    /// A list index (`[2]`, `.2`, `[-1]`); negative counts from the end.
    Index(i64),
}

/// A context path: a namespace followed by steps.
#[derive(Debug, Clone, PartialEq)]
pub struct Path {
    /// The steps, the namespace first.
    pub segs: Vec<Seg>,
}

impl Path {
    /// The path written in canonical form (`state.items[0]`).
    pub fn display(&self) -> String {
        let mut out = String::new();
        for (i, seg) in self.segs.iter().enumerate() {
            match seg {
                Seg::Key(k) if is_ident(k) => {
                    if i > 0 {
                        out.push('.');
                    }
                    out.push_str(k);
                }
                Seg::Key(k) => out.push_str(&format!("[{}]", Value::from(k.as_str()))),
                Seg::Index(n) => out.push_str(&format!("[{n}]")),
            }
        }
        out
    }
}

fn is_ident(s: &str) -> bool {
    let b = s.as_bytes();
    !b.is_empty()
        && (b[0].is_ascii_alphabetic() || b[0] == b'_')
        && b.iter().all(|c| c.is_ascii_alphanumeric() || *c == b'_')
}

/// A context expression: a path, a JSON literal, or a `??` chain of them.
#[derive(Debug, Clone, PartialEq)]
pub enum Expr {
    /// A path into the context.
    Path(Path),
    /// A JSON literal (only useful as a fallback).
    Literal(Value),
    /// `a ?? b ?? …`: the first operand that is present and not null.
    Fallback(Vec<Expr>),
}

struct Parser<'a> {
    src: &'a str,
    pos: usize,
    base: usize,
}

/// Parses the text between `${` and `}`; `base` is its offset in the field, for spans.
pub fn parse_expr(src: &str, base: usize) -> Result<Expr, Error> {
    let mut p = Parser { src, pos: 0, base };
    p.skip_ws();
    if p.pos == src.len() {
        return Err(p.error(
            "empty placeholder `${}`",
            "write a context path such as `${state.name}`",
        ));
    }
    let mut operands = vec![p.operand()?];
    loop {
        p.skip_ws();
        if p.rest().starts_with("??") {
            p.pos += 2;
            p.skip_ws();
            operands.push(p.operand()?);
        } else {
            break;
        }
    }
    if p.pos < src.len() {
        let c = p.rest().chars().next().unwrap_or(' ');
        return Err(p.error(
            &format!("unexpected `{c}` in context placeholder"),
            "a placeholder holds a path such as `state.items[0].name`, optionally `?? fallback`",
        ));
    }
    Ok(if operands.len() == 1 {
        operands.remove(0)
    } else {
        Expr::Fallback(operands)
    })
}

impl Parser<'_> {
    fn rest(&self) -> &str {
        &self.src[self.pos..]
    }

    fn peek(&self) -> Option<u8> {
        self.src.as_bytes().get(self.pos).copied()
    }

    fn skip_ws(&mut self) {
        while matches!(self.peek(), Some(b) if b.is_ascii_whitespace()) {
            self.pos += 1;
        }
    }

    fn error(&self, message: &str, hint: &str) -> Error {
        let at = self.base + self.pos;
        Error::new(Layer::Context, message)
            .with_span(Span::new(at, at + 1))
            .with_hint(hint)
    }

    fn ident(&mut self) -> Option<String> {
        let bytes = &self.src.as_bytes()[self.pos..];
        match bytes.first() {
            Some(b) if b.is_ascii_alphabetic() || *b == b'_' => {}
            _ => return None,
        }
        let n = bytes
            .iter()
            .take_while(|b| b.is_ascii_alphanumeric() || **b == b'_')
            .count();
        let s = self.src[self.pos..self.pos + n].to_string();
        self.pos += n;
        Some(s)
    }

    fn operand(&mut self) -> Result<Expr, Error> {
        let word_end = self.src[self.pos..]
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .map_or(self.src.len(), |n| self.pos + n);
        match &self.src[self.pos..word_end] {
            "true" | "false" | "null" => return self.literal(),
            _ => {}
        }
        match self.peek() {
            Some(b) if b.is_ascii_lowercase() || b == b'_' => self.path().map(Expr::Path),
            Some(b'"' | b'\'' | b'[' | b'{' | b'-' | b'0'..=b'9') => self.literal(),
            _ => Err(self.error(
                "expected a context path or a JSON literal",
                "paths start with a lower-case letter or `_` (`state.x`)",
            )),
        }
    }

    fn literal(&mut self) -> Result<Expr, Error> {
        if self.peek() == Some(b'\'') {
            return self
                .single_quoted()
                .map(|s| Expr::Literal(Value::String(s)));
        }
        let mut stream = serde_json::Deserializer::from_str(self.rest()).into_iter::<Value>();
        match stream.next() {
            Some(Ok(v)) => {
                self.pos += stream.byte_offset();
                Ok(Expr::Literal(v))
            }
            _ => Err(self.error(
                "malformed JSON literal",
                "fallback literals are JSON: \"text\", 1, true, null, [..], {..}",
            )),
        }
    }

    fn single_quoted(&mut self) -> Result<String, Error> {
        let start = self.pos;
        self.pos += 1;
        let mut out = String::new();
        let mut chars = self.src[self.pos..].char_indices();
        while let Some((i, c)) = chars.next() {
            match c {
                '\'' => {
                    self.pos += i + 1;
                    return Ok(out);
                }
                '\\' => match chars.next() {
                    Some((_, e)) => out.push(e),
                    None => break,
                },
                _ => out.push(c),
            }
        }
        self.pos = start;
        Err(self.error("unterminated string", "close the string with `'`"))
    }

    fn quoted_key(&mut self) -> Result<String, Error> {
        if self.peek() == Some(b'\'') {
            return self.single_quoted();
        }
        match self.literal()? {
            Expr::Literal(Value::String(s)) => Ok(s),
            _ => Err(self.error("expected a quoted key", "write `[\"key\"]`")),
        }
    }

    fn index(&mut self) -> Option<i64> {
        let bytes = &self.src.as_bytes()[self.pos..];
        let neg = bytes.first() == Some(&b'-');
        let digits = bytes[neg as usize..]
            .iter()
            .take_while(|b| b.is_ascii_digit())
            .count();
        if digits == 0 {
            return None;
        }
        let end = self.pos + neg as usize + digits;
        let n = self.src[self.pos..end].parse().ok()?;
        self.pos = end;
        Some(n)
    }

    fn path(&mut self) -> Result<Path, Error> {
        let mut segs = vec![Seg::Key(self.ident().unwrap_or_default())];
        loop {
            let save = self.pos;
            self.skip_ws();
            match self.peek() {
                Some(b'.') => {
                    self.pos += 1;
                    self.skip_ws();
                    if let Some(k) = self.ident() {
                        segs.push(Seg::Key(k));
                    } else if let Some(n) = self.index() {
                        segs.push(Seg::Index(n));
                    } else {
                        return Err(self.error(
                            "expected a key or an index after `.`",
                            "write `a.b`, `a.0` or `a[\"b c\"]`",
                        ));
                    }
                }
                Some(b'[') => {
                    self.pos += 1;
                    self.skip_ws();
                    let seg = match self.index() {
                        Some(n) => Seg::Index(n),
                        None => Seg::Key(self.quoted_key()?),
                    };
                    self.skip_ws();
                    if self.peek() != Some(b']') {
                        return Err(self.error("expected `]`", "close the index with `]`"));
                    }
                    self.pos += 1;
                    segs.push(seg);
                }
                _ => {
                    self.pos = save;
                    return Ok(Path { segs });
                }
            }
        }
    }
}
