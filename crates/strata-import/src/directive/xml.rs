//! A minimal XML reader for the ```` ```xml <directive> ```` block: elements, attributes,
//! text, CDATA, comments and the five named and numeric entities, each element with its
//! offset in the file; nesting is bounded.

use strata_core::shown;

use crate::util::joined;

/// An element: its name, attributes in order, children and its offset in the file.
#[derive(Debug)]
pub struct Element {
    pub name: String,
    pub attrs: Vec<(String, String)>,
    pub children: Vec<Node>,
    pub offset: usize,
}

/// A child: an element or text.
#[derive(Debug)]
pub enum Node {
    Element(Element),
    Text(String),
}

impl Element {
    pub fn attr(&self, name: &str) -> Option<&str> {
        self.attrs
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }

    pub fn elements(&self) -> impl Iterator<Item = &Element> {
        self.children.iter().filter_map(|c| match c {
            Node::Element(e) => Some(e),
            Node::Text(_) => None,
        })
    }

    /// The text of the element and its descendants, each line trimmed, joined by spaces.
    pub fn text(&self) -> String {
        let mut raw = String::new();
        self.collect(&mut raw);
        raw.split_whitespace().collect::<Vec<_>>().join(" ")
    }

    fn collect(&self, into: &mut String) {
        for c in &self.children {
            match c {
                Node::Text(t) => {
                    into.push_str(t);
                    into.push(' ');
                }
                Node::Element(e) => e.collect(into),
            }
        }
    }

    /// A one-line summary of the contents, for messages: `execute: tool rye.*; fetch: *`.
    /// Each name, attribute and text is quoted as messages quote a file's text, and each
    /// list names ten items and counts the others.
    pub fn summary(&self) -> String {
        let parts = joined(self.elements().map(Element::part), "; ");
        if parts.is_empty() {
            shown(&self.text())
        } else {
            parts
        }
    }

    /// One part of [`Element::summary`]: `name k=v: child text, child text`.
    fn part(&self) -> String {
        let mut s = shown(&self.name);
        if !self.attrs.is_empty() {
            let attrs = self
                .attrs
                .iter()
                .map(|(k, v)| format!("{}={}", shown(k), shown(v)));
            s.push(' ');
            s.push_str(&joined(attrs, " "));
        }
        let inner = joined(
            self.elements().map(|g| {
                let t = g.text();
                if t.is_empty() {
                    shown(&g.name)
                } else {
                    format!("{} {}", shown(&g.name), shown(&t))
                }
            }),
            ", ",
        );
        let text = if inner.is_empty() {
            shown(&self.text())
        } else {
            inner
        };
        if !text.is_empty() {
            s.push_str(": ");
            s.push_str(&text);
        }
        s
    }
}

/// How deeply elements may nest: far more than a directive needs, and few enough that
/// reading them (recursively) never nears the end of the stack.
const MAX_DEPTH: usize = 100;

struct Parser<'a> {
    text: &'a str,
    pos: usize,
    base: usize,
}

type Failed = (String, usize);

/// Parses the single root element of `text` (at `base` in its file).
pub fn parse(text: &str, base: usize) -> Result<Element, Failed> {
    let mut p = Parser { text, pos: 0, base };
    p.skip_misc();
    if !p.rest().starts_with('<') {
        return Err(("expected an element".into(), p.at()));
    }
    let root = p.element(1)?;
    p.skip_misc();
    if p.pos < text.len() {
        return Err(("text after the root element".into(), p.at()));
    }
    Ok(root)
}

impl Parser<'_> {
    fn rest(&self) -> &str {
        &self.text[self.pos..]
    }

    fn at(&self) -> usize {
        self.base + self.pos
    }

    fn skip_ws(&mut self) {
        let n = self.rest().len() - self.rest().trim_start().len();
        self.pos += n;
    }

    /// Skips whitespace, comments and processing instructions.
    fn skip_misc(&mut self) {
        loop {
            self.skip_ws();
            if self.rest().starts_with("<!--") {
                match self.rest().find("-->") {
                    Some(e) => self.pos += e + 3,
                    None => self.pos = self.text.len(),
                }
            } else if self.rest().starts_with("<?") {
                match self.rest().find("?>") {
                    Some(e) => self.pos += e + 2,
                    None => self.pos = self.text.len(),
                }
            } else {
                return;
            }
        }
    }

    fn name(&mut self) -> Result<String, Failed> {
        let n = self
            .rest()
            .bytes()
            .take_while(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b':' | b'.'))
            .count();
        if n == 0 {
            return Err(("expected a name".into(), self.at()));
        }
        let name = self.rest()[..n].to_owned();
        self.pos += n;
        Ok(name)
    }

    /// The element starting here, `depth` deep (the root is 1).
    fn element(&mut self, depth: usize) -> Result<Element, Failed> {
        let offset = self.at();
        if depth > MAX_DEPTH {
            return Err((format!("elements nest more than {MAX_DEPTH} deep"), offset));
        }
        self.pos += 1; // <
        let name = self.name()?;
        let mut attrs = Vec::new();
        loop {
            self.skip_ws();
            if self.rest().starts_with("/>") {
                self.pos += 2;
                return Ok(Element {
                    name,
                    attrs,
                    children: Vec::new(),
                    offset,
                });
            }
            if self.rest().starts_with('>') {
                self.pos += 1;
                break;
            }
            let key = self.name()?;
            self.skip_ws();
            if !self.rest().starts_with('=') {
                return Err((
                    format!("attribute `{}` has no value", shown(&key)),
                    self.at(),
                ));
            }
            self.pos += 1;
            self.skip_ws();
            let quote = self.rest().chars().next();
            let Some(q @ ('"' | '\'')) = quote else {
                return Err((
                    format!("attribute `{}`: expected a quoted value", shown(&key)),
                    self.at(),
                ));
            };
            self.pos += 1;
            let Some(end) = self.rest().find(q) else {
                return Err((
                    format!("attribute `{}`: unclosed value", shown(&key)),
                    self.at(),
                ));
            };
            let value = unescape(&self.rest()[..end]);
            self.pos += end + 1;
            attrs.push((key, value));
        }
        let mut children = Vec::new();
        loop {
            if self.pos >= self.text.len() {
                return Err((format!("<{}> is not closed", shown(&name)), offset));
            }
            let rest = self.rest();
            if rest.starts_with("</") {
                let close_at = self.at();
                self.pos += 2;
                let close = self.name()?;
                if close != name {
                    return Err((
                        format!("</{}> closes <{}>", shown(&close), shown(&name)),
                        close_at,
                    ));
                }
                self.skip_ws();
                if !self.rest().starts_with('>') {
                    return Err(("expected `>`".into(), self.at()));
                }
                self.pos += 1;
                return Ok(Element {
                    name,
                    attrs,
                    children,
                    offset,
                });
            }
            if rest.starts_with("<!--") || rest.starts_with("<?") {
                self.skip_misc();
                continue;
            }
            if let Some(cdata) = rest.strip_prefix("<![CDATA[") {
                let end = cdata.find("]]>").unwrap_or(cdata.len());
                children.push(Node::Text(cdata[..end].to_owned()));
                self.pos += 9 + end + 3;
                continue;
            }
            if rest.starts_with('<')
                && rest[1..]
                    .bytes()
                    .next()
                    .is_some_and(|b| b.is_ascii_alphabetic() || b == b'_')
            {
                children.push(Node::Element(self.element(depth + 1)?));
                continue;
            }
            let end = rest[1..].find('<').map_or(rest.len(), |e| e + 1);
            children.push(Node::Text(unescape(&rest[..end])));
            self.pos += end;
        }
    }
}

/// Decodes the five named entities and numeric references.
fn unescape(t: &str) -> String {
    if !t.contains('&') {
        return t.to_owned();
    }
    let mut out = String::with_capacity(t.len());
    let mut rest = t;
    while let Some(i) = rest.find('&') {
        out.push_str(&rest[..i]);
        let tail = &rest[i..];
        let Some(semi) = tail.find(';').filter(|s| *s <= 10) else {
            out.push('&');
            rest = &tail[1..];
            continue;
        };
        let entity = &tail[1..semi];
        let decoded = match entity {
            "lt" => Some('<'),
            "gt" => Some('>'),
            "amp" => Some('&'),
            "quot" => Some('"'),
            "apos" => Some('\''),
            e if e.starts_with("#x") => u32::from_str_radix(&e[2..], 16)
                .ok()
                .and_then(char::from_u32),
            e if e.starts_with('#') => e[1..].parse().ok().and_then(char::from_u32),
            _ => None,
        };
        match decoded {
            Some(ch) => {
                out.push(ch);
                rest = &tail[semi + 1..];
            }
            None => {
                out.push('&');
                rest = &tail[1..];
            }
        }
    }
    out.push_str(rest);
    out
}
