//! Tokens of the expressions inside `${…}`.

use serde_json::Value;
use strata_core::{Error, ErrorKind, Layer, Span};

/// One token and where it stands (byte offsets in the field's string).
#[derive(Debug, Clone, PartialEq)]
pub struct Token {
    /// What it is.
    pub kind: Tok,
    /// Where it is.
    pub span: Span,
}

/// The kinds of token.
#[derive(Debug, Clone, PartialEq)]
pub enum Tok {
    /// A name: a path segment, a function, or `true`/`false`/`null`/`in`.
    Ident(String),
    /// A number literal (integers stay integers).
    Number(Value),
    /// A string literal in `"…"` (JSON escapes) or `'…'` (`\` escapes the next character).
    Str(String),
    /// Punctuation and operators: `. [ ] ( ) { } , : ?? ? == != <= >= < > && || ! + - * / %`,
    /// and `|`, which is no operator (the parser explains what to write instead).
    Punct(&'static str),
}

/// Longer spellings first: `??` before `?`, `||` before `|`.
const PUNCTS: [&str; 26] = [
    "??", "==", "!=", "<=", ">=", "&&", "||", ".", "[", "]", "(", ")", "{", "}", ",", ":", "<",
    ">", "!", "+", "-", "*", "/", "%", "?", "|",
];

fn error(at: usize, message: &str, hint: &str) -> Error {
    Error::new(Layer::CONTEXT, ErrorKind::Syntax, message)
        .with_span(Span::new(at, at + 1))
        .with_hint(hint)
}

/// Splits `src` (starting at byte `base` of its field) into tokens.
pub fn lex(src: &str, base: usize) -> Result<Vec<Token>, Error> {
    let bytes = src.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        let start = i;
        let kind = if b.is_ascii_whitespace() {
            i += 1;
            continue;
        } else if b.is_ascii_alphabetic() || b == b'_' {
            while i < bytes.len() && (bytes[i].is_ascii_alphanumeric() || bytes[i] == b'_') {
                i += 1;
            }
            Tok::Ident(src[start..i].to_string())
        } else if b.is_ascii_digit() {
            // After `.` (or `.-`) digits are a path's index: an integer, and a `.` after it
            // starts the next step (`a.0.1` is `a[0][1]`), as the path reader has it.
            i = match after_dot(&out) {
                true => digits_end(bytes, i),
                false => number_end(bytes, i),
            };
            let v: Value = serde_json::from_str(&src[start..i]).map_err(|_| {
                error(
                    base + start,
                    "malformed number",
                    "numbers look like 7, -2, 1.5 or 1e3",
                )
            })?;
            Tok::Number(v)
        } else if b == b'"' {
            let mut stream = serde_json::Deserializer::from_str(&src[i..]).into_iter::<Value>();
            match stream.next() {
                Some(Ok(Value::String(s))) => {
                    i += stream.byte_offset();
                    Tok::Str(s)
                }
                _ => {
                    return Err(error(
                        base + start,
                        "unterminated string",
                        "close the string with `\"`",
                    ))
                }
            }
        } else if b == b'\'' {
            let (s, end) = single_quoted(src, i).ok_or_else(|| {
                error(
                    base + start,
                    "unterminated string",
                    "close the string with `'`",
                )
            })?;
            i = end;
            Tok::Str(s)
        } else if let Some(p) = PUNCTS.iter().find(|p| src[i..].starts_with(**p)) {
            i += p.len();
            Tok::Punct(p)
        } else {
            let c = src[i..].chars().next().unwrap_or(' ');
            return Err(error(
                base + start,
                &format!("unexpected `{c}` in context placeholder"),
                "a placeholder holds a path such as `state.items[0].name` or an expression",
            ));
        };
        out.push(Token {
            kind,
            span: Span::new(base + start, base + i),
        });
    }
    Ok(out)
}

/// True when the tokens so far end with `.` or `.-`: a number there is a path's index.
fn after_dot(toks: &[Token]) -> bool {
    let dot = |t: Option<&Token>| {
        matches!(
            t,
            Some(Token {
                kind: Tok::Punct("."),
                ..
            })
        )
    };
    match toks {
        [.., before, Token {
            kind: Tok::Punct("-"),
            ..
        }] => dot(Some(before)),
        _ => dot(toks.last()),
    }
}

/// The end of the digits from `i`.
fn digits_end(bytes: &[u8], i: usize) -> usize {
    i + bytes[i..].iter().take_while(|b| b.is_ascii_digit()).count()
}

fn number_end(bytes: &[u8], i: usize) -> usize {
    let mut i = digits_end(bytes, i);
    if i + 1 < bytes.len() && bytes[i] == b'.' && bytes[i + 1].is_ascii_digit() {
        i = digits_end(bytes, i + 1);
    }
    if i < bytes.len() && matches!(bytes[i], b'e' | b'E') {
        let mut j = i + 1;
        if j < bytes.len() && matches!(bytes[j], b'+' | b'-') {
            j += 1;
        }
        if j < bytes.len() && bytes[j].is_ascii_digit() {
            i = digits_end(bytes, j);
        }
    }
    i
}

fn single_quoted(src: &str, start: usize) -> Option<(String, usize)> {
    let mut out = String::new();
    let mut chars = src[start + 1..].char_indices();
    while let Some((k, c)) = chars.next() {
        match c {
            '\'' => return Some((out, start + 1 + k + 1)),
            '\\' => out.push(chars.next()?.1),
            _ => out.push(c),
        }
    }
    None
}
