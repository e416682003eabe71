//! Reading RyeOS code tools without running them: module-level assignments of literal values
//! (Python dicts, lists, tuples, strings, numbers, `True`/`False`/`None`; TypeScript object
//! literals with bare keys and trailing commas), and a sanity check of a Python file's
//! layout. Anything that is not a literal — a name, a call, an f-string with a field, a
//! spread — makes the value "computed": the importer never executes user code.

use serde_json::{Map, Number, Value};
use strata_core::shown;

/// How deeply a literal may nest.
const MAX_DEPTH: usize = 128;

/// The language of a code file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Lang {
    /// Python (`#` comments, `True`, tuples, string prefixes, implicit concatenation).
    Python,
    /// TypeScript / JavaScript (`//` and `/* */` comments, bare keys, template literals).
    Script,
}

/// Where a module-level assignment of `name` starts its value (byte offset), if any:
/// Python `NAME = …` / `NAME: T = …` at column 0; TypeScript `export const NAME = …`,
/// `const NAME: T = …` (also `let`/`var`) at column 0.
pub(crate) fn assignment(text: &str, name: &str, lang: Lang) -> Option<usize> {
    let mut offset = 0;
    for line in text.split_inclusive('\n') {
        let start = offset;
        offset += line.len();
        let rest = match lang {
            Lang::Python => line.strip_prefix(name),
            Lang::Script => {
                let l = line.strip_prefix("export ").unwrap_or(line);
                ["const ", "let ", "var "]
                    .iter()
                    .find_map(|kw| l.strip_prefix(kw))
                    .and_then(|l| l.strip_prefix(name))
            }
        };
        let Some(rest) = rest else { continue };
        let trimmed = rest.trim_start();
        // `NAME: Type = value` (annotation) or `NAME = value`, never `NAME == …`.
        let after_annot = if let Some(t) = trimmed.strip_prefix(':') {
            match t.find('=') {
                Some(eq) => &t[eq..],
                None => continue,
            }
        } else {
            trimmed
        };
        if let Some(v) = after_annot.strip_prefix('=') {
            if v.starts_with('=') {
                continue;
            }
            let value_at = line.len() - v.len();
            return Some(start + value_at);
        }
    }
    None
}

/// The literal value starting at `at`, which must end its statement (a newline, `;` or a
/// comment follows); `Err` says why it is not a literal.
pub(crate) fn literal_at(text: &str, at: usize, lang: Lang) -> Result<Value, String> {
    parse_at(text, at, lang, false).map(|(v, _)| v)
}

/// A map's entry whose value is computed: its key path (`properties.operation.enum`) and why.
pub(crate) type Computed = (Vec<String>, String);

/// [`literal_at`], where an entry of a map whose value is computed (a name, a call, a spread)
/// is left out of the map and listed instead of making the whole value computed.
pub(crate) fn literal_at_partly(
    text: &str,
    at: usize,
    lang: Lang,
) -> Result<(Value, Vec<Computed>), String> {
    parse_at(text, at, lang, true)
}

fn parse_at(
    text: &str,
    at: usize,
    lang: Lang,
    partly: bool,
) -> Result<(Value, Vec<Computed>), String> {
    let mut p = Parser {
        s: text.as_bytes(),
        text,
        i: at,
        lang,
        depth: 1,
        partly,
        keys: Vec::new(),
        computed: Vec::new(),
    };
    p.ws();
    p.depth = 0;
    let v = p.value()?;
    p.skip_inline();
    match p.peek() {
        None | Some(b'\n') | Some(b';') | Some(b'\r') => Ok((v, p.computed)),
        Some(c) => Err(format!(
            "`{}` follows the value",
            (c as char).escape_debug()
        )),
    }
}

struct Parser<'a> {
    s: &'a [u8],
    text: &'a str,
    i: usize,
    lang: Lang,
    /// Bracket depth: newlines are whitespace inside brackets only.
    depth: usize,
    /// Whether a map entry with a computed value is skipped and listed (else it fails all).
    partly: bool,
    /// The keys leading to the value being read.
    keys: Vec<String>,
    /// The entries skipped.
    computed: Vec<Computed>,
}

impl Parser<'_> {
    fn peek(&self) -> Option<u8> {
        self.s.get(self.i).copied()
    }

    /// Skips spaces and comments on the current line.
    fn skip_inline(&mut self) {
        while let Some(c) = self.peek() {
            match c {
                b' ' | b'\t' => self.i += 1,
                b'\\' if self.s.get(self.i + 1) == Some(&b'\n') => self.i += 2,
                b'#' if self.lang == Lang::Python => self.skip_line_comment(),
                b'/' if self.lang == Lang::Script && self.s.get(self.i + 1) == Some(&b'/') => {
                    self.skip_line_comment()
                }
                b'/' if self.lang == Lang::Script && self.s.get(self.i + 1) == Some(&b'*') => {
                    match self.text[self.i + 2..].find("*/") {
                        Some(end) => self.i += end + 4,
                        None => self.i = self.s.len(),
                    }
                }
                _ => break,
            }
        }
    }

    fn skip_line_comment(&mut self) {
        while let Some(c) = self.peek() {
            if c == b'\n' {
                break;
            }
            self.i += 1;
        }
    }

    /// Skips whitespace, comments and (inside brackets) newlines.
    fn ws(&mut self) {
        loop {
            self.skip_inline();
            match self.peek() {
                Some(b'\n') | Some(b'\r') if self.depth > 0 => self.i += 1,
                _ => break,
            }
        }
    }

    fn expect(&mut self, c: u8) -> Result<(), String> {
        self.ws();
        if self.peek() == Some(c) {
            self.i += 1;
            Ok(())
        } else {
            Err(format!("expected `{}`", c as char))
        }
    }

    fn value(&mut self) -> Result<Value, String> {
        // A literal nested deeper than any schema is treated as computed (and the stack is
        // never at risk).
        if self.depth > MAX_DEPTH {
            return Err("the value is nested too deeply".into());
        }
        self.ws();
        match self.peek() {
            None => Err("the value is missing".into()),
            Some(b'{') => self.object(),
            Some(b'[') => self.list(b'[', b']'),
            Some(b'(') if self.lang == Lang::Python => self.paren(),
            Some(b'"') | Some(b'\'') | Some(b'`') => self.strings(),
            Some(b'.') if self.text[self.i..].starts_with("...") => {
                Err("a spread (`...`) is computed".into())
            }
            Some(c) if c == b'-' || c == b'+' || c == b'.' || c.is_ascii_digit() => self.number(),
            Some(c) if c.is_ascii_alphabetic() || c == b'_' => {
                let start = self.i;
                while self
                    .peek()
                    .is_some_and(|c| c.is_ascii_alphanumeric() || c == b'_')
                {
                    self.i += 1;
                }
                let word = &self.text[start..self.i];
                // A string prefix (`r"…"`, `u'…'`); `f`/`b` strings are not plain text.
                if matches!(self.peek(), Some(b'"') | Some(b'\''))
                    && self.lang == Lang::Python
                    && word.len() <= 2
                {
                    let w = word.to_ascii_lowercase();
                    if w == "r" || w == "u" {
                        self.i = start;
                        return self.strings();
                    }
                    if w.contains('f') {
                        self.i = start;
                        return self.strings();
                    }
                    return Err(format!("`{}` strings are not text", shown(word)));
                }
                match (self.lang, word) {
                    (Lang::Python, "True") | (Lang::Script, "true") => Ok(Value::Bool(true)),
                    (Lang::Python, "False") | (Lang::Script, "false") => Ok(Value::Bool(false)),
                    (Lang::Python, "None") | (Lang::Script, "null") => Ok(Value::Null),
                    _ => Err(format!(
                        "`{}` is computed (a name, not a literal)",
                        shown(word)
                    )),
                }
            }
            Some(c) => Err(format!(
                "`{}` starts no literal",
                (c as char).escape_debug()
            )),
        }
    }

    fn object(&mut self) -> Result<Value, String> {
        self.i += 1;
        self.depth += 1;
        let mut map = Map::new();
        loop {
            self.ws();
            if self.peek() == Some(b'}') {
                self.i += 1;
                break;
            }
            let k = match self.peek() {
                Some(b'"') | Some(b'\'') | Some(b'`') => match self.strings()? {
                    Value::String(s) => s,
                    _ => return Err("a key is not a string".into()),
                },
                Some(c)
                    if self.lang == Lang::Script
                        && (c.is_ascii_alphabetic() || c == b'_' || c == b'$') =>
                {
                    let start = self.i;
                    while self
                        .peek()
                        .is_some_and(|c| c.is_ascii_alphanumeric() || c == b'_' || c == b'$')
                    {
                        self.i += 1;
                    }
                    self.text[start..self.i].to_owned()
                }
                _ => return Err("a key is not a string literal".into()),
            };
            self.expect(b':')?;
            self.ws();
            let start = self.i;
            self.keys.push(k.clone());
            let read = self.value();
            self.keys.pop();
            match read {
                Ok(v) => {
                    map.insert(k, v);
                }
                Err(why) if self.partly => {
                    self.i = start;
                    self.skip_value()?;
                    let mut path = self.keys.clone();
                    path.push(k);
                    self.computed.push((path, why));
                }
                Err(why) => return Err(why),
            }
            self.ws();
            match self.peek() {
                Some(b',') => self.i += 1,
                Some(b'}') => {
                    self.i += 1;
                    break;
                }
                _ => return Err("expected `,` or `}`".into()),
            }
        }
        self.depth -= 1;
        Ok(Value::Object(map))
    }

    /// Skips a value that is not a literal, up to the `,` or closing bracket that ends it
    /// (brackets and quoted strings balanced).
    fn skip_value(&mut self) -> Result<(), String> {
        let mut nesting = 0usize;
        while let Some(c) = self.peek() {
            match c {
                b'(' | b'[' | b'{' => nesting += 1,
                b')' | b']' | b'}' if nesting == 0 => return Ok(()),
                b')' | b']' | b'}' => nesting -= 1,
                b',' if nesting == 0 => return Ok(()),
                b'"' | b'\'' | b'`' => {
                    self.i += 1;
                    while let Some(q) = self.peek() {
                        self.i += if q == b'\\' { 2 } else { 1 };
                        if q == c {
                            break;
                        }
                    }
                    continue;
                }
                _ => {}
            }
            self.i += 1;
        }
        Err("the value is not closed".into())
    }

    fn list(&mut self, open: u8, close: u8) -> Result<Value, String> {
        debug_assert_eq!(self.peek(), Some(open));
        self.i += 1;
        self.depth += 1;
        let mut items = Vec::new();
        loop {
            self.ws();
            if self.peek() == Some(close) {
                self.i += 1;
                break;
            }
            items.push(self.value()?);
            self.ws();
            match self.peek() {
                Some(b',') => self.i += 1,
                Some(c) if c == close => {
                    self.i += 1;
                    break;
                }
                _ => return Err(format!("expected `,` or `{}`", close as char)),
            }
        }
        self.depth -= 1;
        Ok(Value::Array(items))
    }

    /// `( value )` is the value; `( a, b )` and `()` are tuples (lists).
    fn paren(&mut self) -> Result<Value, String> {
        let start = self.i;
        self.i += 1;
        self.depth += 1;
        self.ws();
        if self.peek() == Some(b')') {
            self.i += 1;
            self.depth -= 1;
            return Ok(Value::Array(Vec::new()));
        }
        let first = self.value()?;
        self.ws();
        if self.peek() == Some(b')') {
            self.i += 1;
            self.depth -= 1;
            return Ok(first);
        }
        self.depth -= 1;
        self.i = start;
        self.list(b'(', b')')
    }

    /// One string or several adjacent ones (Python's implicit concatenation).
    fn strings(&mut self) -> Result<Value, String> {
        let mut text = self.string()?;
        if self.lang == Lang::Python {
            loop {
                let save = self.i;
                self.ws();
                let prefixed = matches!(
                    self.peek(),
                    Some(b'r') | Some(b'R') | Some(b'u') | Some(b'U') | Some(b'f') | Some(b'F')
                ) && matches!(self.s.get(self.i + 1), Some(b'"') | Some(b'\''));
                if matches!(self.peek(), Some(b'"') | Some(b'\'')) || prefixed {
                    text.push_str(&self.string()?);
                } else {
                    self.i = save;
                    break;
                }
            }
        } else {
            // `"a" + "b"` concatenation in scripts.
            loop {
                let save = self.i;
                self.ws();
                if self.peek() == Some(b'+') {
                    self.i += 1;
                    self.ws();
                    if matches!(self.peek(), Some(b'"') | Some(b'\'') | Some(b'`')) {
                        text.push_str(&self.string()?);
                        continue;
                    }
                }
                self.i = save;
                break;
            }
        }
        Ok(Value::String(text))
    }

    fn string(&mut self) -> Result<String, String> {
        let mut raw = false;
        let mut fmt = false;
        while let Some(c) = self.peek() {
            match c {
                b'r' | b'R' => raw = true,
                b'u' | b'U' => {}
                b'f' | b'F' => fmt = true,
                _ => break,
            }
            self.i += 1;
        }
        let q = self.peek().ok_or("unterminated string")?;
        let triple = self.lang == Lang::Python
            && self.s.get(self.i + 1) == Some(&q)
            && self.s.get(self.i + 2) == Some(&q);
        self.i += if triple { 3 } else { 1 };
        let mut out = String::new();
        loop {
            let Some(c) = self.peek() else {
                return Err("unterminated string".into());
            };
            if c == q {
                if !triple {
                    self.i += 1;
                    break;
                }
                if self.s.get(self.i + 1) == Some(&q) && self.s.get(self.i + 2) == Some(&q) {
                    self.i += 3;
                    break;
                }
            }
            if c == b'\n' && !triple && q != b'`' {
                return Err("unterminated string".into());
            }
            if q == b'`' && c == b'$' && self.s.get(self.i + 1) == Some(&b'{') {
                return Err("a template literal with `${…}` is computed".into());
            }
            if fmt && (c == b'{' || c == b'}') {
                if self.s.get(self.i + 1) == Some(&c) {
                    out.push(c as char);
                    self.i += 2;
                    continue;
                }
                return Err("an f-string with fields is computed".into());
            }
            if c == b'\\' && !raw {
                self.i += 1;
                let e = self.peek().ok_or("unterminated string")?;
                self.i += 1;
                match e {
                    b'n' => out.push('\n'),
                    b't' => out.push('\t'),
                    b'r' => out.push('\r'),
                    b'0' => out.push('\0'),
                    b'\n' => {}
                    b'x' | b'u' => {
                        let len = if e == b'x' { 2 } else { 4 };
                        let hex = self.text.get(self.i..self.i + len).ok_or("bad escape")?;
                        let code = u32::from_str_radix(hex, 16).map_err(|_| "bad escape")?;
                        out.push(char::from_u32(code).ok_or("bad escape")?);
                        self.i += len;
                    }
                    other => {
                        // `\\`, `\'`, `\"` and any other escaped character stand for themselves.
                        let ch = self.text[self.i - 1..]
                            .chars()
                            .next()
                            .unwrap_or(other as char);
                        self.i += ch.len_utf8() - 1;
                        out.push(ch);
                    }
                }
                continue;
            }
            let ch = self.text[self.i..].chars().next().ok_or("bad text")?;
            out.push(ch);
            self.i += ch.len_utf8();
        }
        Ok(out)
    }

    fn number(&mut self) -> Result<Value, String> {
        let start = self.i;
        if matches!(self.peek(), Some(b'-') | Some(b'+')) {
            self.i += 1;
        }
        while self.peek().is_some_and(|c| {
            c.is_ascii_alphanumeric() || c == b'.' || c == b'_' || c == b'+' || c == b'-'
        }) {
            // A sign continues a number only after an exponent.
            if matches!(self.peek(), Some(b'+') | Some(b'-'))
                && !matches!(self.s.get(self.i - 1), Some(b'e') | Some(b'E'))
            {
                break;
            }
            self.i += 1;
        }
        let word: String = self.text[start..self.i]
            .chars()
            .filter(|c| *c != '_')
            .collect();
        if let Ok(n) = word.parse::<i64>() {
            return Ok(Value::Number(n.into()));
        }
        // A whole number past 64 bits keeps its digits (numbers keep their text).
        let digits = word.strip_prefix('-').unwrap_or(&word);
        if !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()) {
            if let Ok(n) = word.parse::<Number>() {
                return Ok(Value::Number(n));
            }
        }
        match word.parse::<f64>().ok().and_then(Number::from_f64) {
            Some(n) => Ok(Value::Number(n)),
            None => Err(format!("`{}` is not a number literal", shown(&word))),
        }
    }
}

/// A sanity check of a Python file's layout, as the tokenizer sees it — not a parser. It
/// checks that brackets balance and match outside strings and comments, that strings end,
/// and that indentation is consistent: a logical line may be indented deeper than the
/// previous one only after a line ending in `:` ("unexpected indent"), and a dedent must
/// return to an enclosing level ("unindent does not match"). `Err((line, message))` is the
/// first problem, like Python's `IndentationError` / `SyntaxError`.
pub(crate) fn python_layout(text: &str) -> Result<(), (usize, String)> {
    let s = text.as_bytes();
    let mut i = 0;
    let mut line = 1;
    let mut stack: Vec<(u8, usize)> = Vec::new();
    let mut indents: Vec<usize> = vec![0];
    let mut at_line_start = true;
    let mut continued = false;
    let mut last_sig: u8 = b'\n';
    while i < s.len() {
        if at_line_start {
            at_line_start = false;
            let mut col = 0;
            while i < s.len() && (s[i] == b' ' || s[i] == b'\t') {
                col += if s[i] == b'\t' { 8 - col % 8 } else { 1 };
                i += 1;
            }
            let blank = i >= s.len() || matches!(s[i], b'\n' | b'\r' | b'#');
            if !blank && stack.is_empty() && !continued {
                let top = *indents.last().unwrap_or(&0);
                if col > top {
                    if last_sig != b':' {
                        return Err((line, "unexpected indent".into()));
                    }
                    indents.push(col);
                } else if col < top {
                    while indents.last().is_some_and(|t| *t > col) {
                        indents.pop();
                    }
                    if indents.last() != Some(&col) {
                        return Err((
                            line,
                            "unindent does not match any outer indentation level".into(),
                        ));
                    }
                }
            }
            continued = false;
            continue;
        }
        let c = s[i];
        match c {
            b'\n' => {
                line += 1;
                i += 1;
                at_line_start = true;
            }
            b'#' => {
                while i < s.len() && s[i] != b'\n' {
                    i += 1;
                }
            }
            b'\\' if s.get(i + 1) == Some(&b'\n') => {
                continued = true;
                line += 1;
                i += 2;
                at_line_start = true;
            }
            b'"' | b'\'' => {
                let start_line = line;
                let triple = s.get(i + 1) == Some(&c) && s.get(i + 2) == Some(&c);
                i += if triple { 3 } else { 1 };
                loop {
                    if i >= s.len() {
                        return Err((start_line, "unterminated string literal".into()));
                    }
                    let d = s[i];
                    if d == b'\\' {
                        if s.get(i + 1) == Some(&b'\n') {
                            line += 1;
                        }
                        i += 2;
                        continue;
                    }
                    if d == b'\n' {
                        if !triple {
                            return Err((start_line, "unterminated string literal".into()));
                        }
                        line += 1;
                    }
                    if d == c {
                        if !triple {
                            i += 1;
                            break;
                        }
                        if s.get(i + 1) == Some(&c) && s.get(i + 2) == Some(&c) {
                            i += 3;
                            break;
                        }
                    }
                    i += 1;
                }
                last_sig = b'"';
            }
            b'(' | b'[' | b'{' => {
                stack.push((c, line));
                last_sig = c;
                i += 1;
            }
            b')' | b']' | b'}' => {
                let open = match c {
                    b')' => b'(',
                    b']' => b'[',
                    _ => b'{',
                };
                match stack.pop() {
                    Some((o, _)) if o == open => {}
                    Some((o, l)) => {
                        return Err((
                            line,
                            format!(
                                "closing `{}` does not match `{}` of line {l}",
                                c as char, o as char
                            ),
                        ))
                    }
                    None => return Err((line, format!("unmatched `{}`", c as char))),
                }
                last_sig = c;
                i += 1;
            }
            b' ' | b'\t' | b'\r' => i += 1,
            _ => {
                last_sig = c;
                i += 1;
            }
        }
    }
    if let Some((o, l)) = stack.pop() {
        return Err((l, format!("`{}` was never closed", o as char)));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn py(text: &str, name: &str) -> Result<Value, String> {
        let at = assignment(text, name, Lang::Python).ok_or("absent")?;
        literal_at(text, at, Lang::Python)
    }

    #[test]
    fn python_literals() {
        let text = "X = 1\nCONFIG_SCHEMA = {\n  \"type\": \"object\",  # c\n  'properties': {'a': {'default': None, 'x': [True, 1.5, -2, ()]}},\n}\n";
        assert_eq!(
            py(text, "CONFIG_SCHEMA").unwrap(),
            json!({"type": "object", "properties": {"a": {"default": null, "x": [true, 1.5, -2, []]}}})
        );
        let text = "__tool_description__ = (\n    \"Read \"\n    'file'\n)\n";
        assert_eq!(
            py(text, "__tool_description__").unwrap(),
            json!("Read file")
        );
        assert_eq!(py("__v__: str = \"1.0\"\n", "__v__").unwrap(), json!("1.0"));
        assert!(py("S = build()\n", "S").is_err());
        assert!(py("S = {**BASE}\n", "S").is_err());
        assert!(py("S = {'a': 1} | B\n", "S").is_err());
        assert!(py("S = f\"{x}\"\n", "S").is_err());
        assert_eq!(
            py("S = \"a\\n\\\"b\\u00e9\"\n", "S").unwrap(),
            json!("a\n\"bé")
        );
        let deep = format!("S = {}{}\n", "[".repeat(100_000), "]".repeat(100_000));
        assert!(py(&deep, "S").is_err());
        // An integer past 64 bits keeps its digits (not `1e+20`).
        let big = py("N = 100000000000000000000\n", "N").unwrap();
        assert_eq!(big.to_string(), "100000000000000000000");
        assert_eq!(
            py("N = -1_000_000_000_000_000_000_000\n", "N")
                .unwrap()
                .to_string(),
            "-1000000000000000000000"
        );
    }

    #[test]
    fn a_computed_entry_is_left_out_and_listed() {
        let text = "export const S = {\n  type: \"object\",\n  properties: {\n    op: { type: \"string\", enum: [...OPS], description: \"x, y\" },\n    n: { type: \"integer\", default: f(1, [2]) },\n  },\n};\n";
        let at = assignment(text, "S", Lang::Script).unwrap();
        assert!(literal_at(text, at, Lang::Script).is_err());
        let (v, computed) = literal_at_partly(text, at, Lang::Script).unwrap();
        assert_eq!(
            v,
            serde_json::json!({"type": "object", "properties": {"op": {"type": "string", "description": "x, y"}, "n": {"type": "integer"}}})
        );
        let paths: Vec<String> = computed.iter().map(|(p, _)| p.join(".")).collect();
        assert_eq!(paths, ["properties.op.enum", "properties.n.default"]);
    }

    #[test]
    fn script_literals() {
        let text = "export const CONFIG_SCHEMA = {\n  type: \"object\", // c\n  properties: { a: { type: 'string', default: [] } },\n};\n";
        let at = assignment(text, "CONFIG_SCHEMA", Lang::Script).unwrap();
        assert_eq!(
            literal_at(text, at, Lang::Script).unwrap(),
            json!({"type": "object", "properties": {"a": {"type": "string", "default": []}}})
        );
        let text = "export const __d__ =\n  \"a \" + `b`;\n";
        let at = assignment(text, "__d__", Lang::Script).unwrap();
        assert_eq!(literal_at(text, at, Lang::Script).unwrap(), json!("a b"));
    }

    #[test]
    fn layout() {
        assert!(
            python_layout("def f(x):\n    if x:\n        return (1,\n  2)\n    return 0\n").is_ok()
        );
        assert_eq!(
            python_layout("def f():\n    a = 1\n        b = 2\n")
                .unwrap_err()
                .0,
            3
        );
        assert_eq!(python_layout("x = (1\n").unwrap_err().0, 1);
        assert!(python_layout("s = '''\n  x\n'''\n# (\n").is_ok());
        assert!(python_layout("if a:\n        x\n  y\n").is_err());
    }
}
