//! Paths into JSON data and the one walk every front-end shares: layer C's `${state.x}`, a
//! plan's `$step1.items[0]` and `{{a.result.data[-1]["b c"]}}`, a response's tool fields.
//!
//! A [`Path`] is a namespace followed by steps: `.key`, `[n]` and `.n` indexes (negative from
//! the end), and quoted keys (`["a b"]`, `['a b']`). [`resolve`] walks data only — never host
//! objects — and reports where it stopped with a likely intended key ([`Miss`]).

use std::fmt;

use serde_json::{Map, Value};

use crate::{did_you_mean, map_get, ContextSource};

/// One step of a [`Path`].
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Seg {
    /// A map key (`.name` or `["name"]`).
    Key(String),
    /// A list index (`[2]`, `.2`, `[-1]`); negative counts from the end.
    Index(i64),
}

/// A path into JSON data: the steps in order, the namespace (or step id) first.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct Path {
    /// The steps, the namespace first.
    pub segs: Vec<Seg>,
}

/// Why a path's text is not a path: the byte offset of the problem and what is wrong.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PathSyntaxError {
    /// Byte offset inside the parsed text.
    pub at: usize,
    /// What is wrong, in a few words.
    pub message: &'static str,
}

/// True for `[A-Za-z_][A-Za-z0-9_]*`.
pub fn is_ident(s: &str) -> bool {
    let b = s.as_bytes();
    !b.is_empty()
        && (b[0].is_ascii_alphabetic() || b[0] == b'_')
        && b.iter().all(|c| c.is_ascii_alphanumeric() || *c == b'_')
}

fn ident_len(bytes: &[u8]) -> usize {
    match bytes.first() {
        Some(b) if b.is_ascii_alphabetic() || *b == b'_' => {
            1 + bytes[1..]
                .iter()
                .take_while(|b| b.is_ascii_alphanumeric() || **b == b'_')
                .count()
        }
        _ => 0,
    }
}

impl Path {
    /// A path of the given steps.
    pub fn new(segs: Vec<Seg>) -> Path {
        Path { segs }
    }

    /// Parses `name.key[0]["quoted key"].-1`-style text: an identifier, then steps (see
    /// [`Path::parse_steps`]). No whitespace is allowed.
    pub fn parse(text: &str) -> Result<Path, PathSyntaxError> {
        let n = ident_len(text.as_bytes());
        if n == 0 {
            return Err(PathSyntaxError {
                at: 0,
                message: "a path starts with a name",
            });
        }
        let mut segs = vec![Seg::Key(text[..n].to_string())];
        parse_steps_into(text, n, &mut segs)?;
        Ok(Path { segs })
    }

    /// Parses steps only (`.key`, `.2`, `.-1`, `[2]`, `[-1]`, `["k"]`, `['k']`), as they
    /// follow a namespace or a step id; the empty text is no steps.
    pub fn parse_steps(text: &str) -> Result<Vec<Seg>, PathSyntaxError> {
        let mut segs = Vec::new();
        parse_steps_into(text, 0, &mut segs)?;
        Ok(segs)
    }

    /// The path written in canonical form (`state.items[0]["a b"]`).
    pub fn display(&self) -> String {
        self.to_string()
    }

    /// The first step's key: the namespace (or step id).
    pub fn head(&self) -> Option<&str> {
        match self.segs.first() {
            Some(Seg::Key(k)) => Some(k),
            _ => None,
        }
    }
}

impl fmt::Display for Path {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write_segs(f, &self.segs, true)
    }
}

/// Writes steps in canonical form; `first` when the first step starts the path (no `.`).
pub fn write_segs(out: &mut impl fmt::Write, segs: &[Seg], first: bool) -> fmt::Result {
    for (i, seg) in segs.iter().enumerate() {
        match seg {
            Seg::Key(k) if is_ident(k) => {
                if i > 0 || !first {
                    out.write_char('.')?;
                }
                out.write_str(k)?;
            }
            Seg::Key(k) => write!(out, "[{}]", Value::from(k.as_str()))?,
            Seg::Index(n) => write!(out, "[{n}]")?,
        }
    }
    Ok(())
}

fn parse_steps_into(text: &str, mut i: usize, segs: &mut Vec<Seg>) -> Result<(), PathSyntaxError> {
    let bytes = text.as_bytes();
    let err = |at, message| Err(PathSyntaxError { at, message });
    while i < bytes.len() {
        match bytes[i] {
            b'.' => {
                i += 1;
                let n = ident_len(&bytes[i..]);
                if n > 0 {
                    segs.push(Seg::Key(text[i..i + n].to_string()));
                    i += n;
                    continue;
                }
                match index_at(text, i) {
                    Some((n, len)) => {
                        segs.push(Seg::Index(n));
                        i += len;
                    }
                    None => return err(i, "expected a key or an index after `.`"),
                }
            }
            b'[' => {
                i += 1;
                if let Some((n, len)) = index_at(text, i) {
                    segs.push(Seg::Index(n));
                    i += len;
                } else if let Some((key, len)) = quoted_at(text, i) {
                    segs.push(Seg::Key(key));
                    i += len;
                } else {
                    return err(i, "expected an index or a quoted key");
                }
                if bytes.get(i) != Some(&b']') {
                    return err(i, "expected `]`");
                }
                i += 1;
            }
            _ => return err(i, "expected `.` or `[`"),
        }
    }
    Ok(())
}

/// An integer index at `i` (optionally negative): its value and length. Digits as JSON
/// writes an integer: no leading zero, and not the start of an exponent. A `.` after the
/// digits starts the next step, so `.0.1` is two indexes (`[0][1]`), not a fraction.
fn index_at(text: &str, i: usize) -> Option<(i64, usize)> {
    let bytes = &text.as_bytes()[i..];
    let neg = usize::from(bytes.first() == Some(&b'-'));
    let digits = bytes[neg..]
        .iter()
        .take_while(|b| b.is_ascii_digit())
        .count();
    let exponent = matches!(bytes[neg + digits..], [b'e' | b'E', ..]);
    if digits == 0 || (digits > 1 && bytes[neg] == b'0') || exponent {
        return None;
    }
    let n: i64 = text[i..i + neg + digits].parse().ok()?;
    Some((n, neg + digits))
}

/// A quoted key at `i`: `"…"` with JSON escapes or `'…'` where `\` escapes the next
/// character. Its text and length.
fn quoted_at(text: &str, i: usize) -> Option<(String, usize)> {
    let rest = &text[i..];
    match rest.as_bytes().first()? {
        b'"' => {
            let mut stream = serde_json::Deserializer::from_str(rest).into_iter::<Value>();
            match stream.next()? {
                Ok(Value::String(s)) => Some((s, stream.byte_offset())),
                _ => None,
            }
        }
        b'\'' => {
            let mut out = String::new();
            let mut chars = rest.char_indices().skip(1);
            while let Some((k, c)) = chars.next() {
                match c {
                    '\'' => return Some((out, k + 1)),
                    '\\' => out.push(chars.next()?.1),
                    _ => out.push(c),
                }
            }
            None
        }
        _ => None,
    }
}

/// Why a path did not resolve: the index of the step that failed, and a likely intended key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Miss {
    /// Index of the first step that found nothing.
    pub at: usize,
    /// The closest existing key at that step, when one is close.
    pub suggestion: Option<String>,
}

/// One step from `value`: a key of a map, an index of a list (a map key that is digits also
/// indexes a list, and an index also finds a map key of those digits).
pub fn step<'v>(value: &'v Value, seg: &Seg) -> Option<&'v Value> {
    match (value, seg) {
        (Value::Object(map), seg) => map_step(map, seg),
        (Value::Array(items), Seg::Index(n)) => index(items, *n),
        (Value::Array(items), Seg::Key(k)) => k.parse().ok().and_then(|n| index(items, n)),
        _ => None,
    }
}

/// One step from a map.
pub fn map_step<'v>(map: &'v Map<String, Value>, seg: &Seg) -> Option<&'v Value> {
    match seg {
        Seg::Key(k) => map_get(map, k),
        Seg::Index(n) => map.get(&n.to_string()),
    }
}

fn index(items: &[Value], n: i64) -> Option<&Value> {
    let i = if n < 0 { items.len() as i64 + n } else { n };
    usize::try_from(i).ok().and_then(|i| items.get(i))
}

/// The keys of `value` (a map) closest to `seg`, when one is close enough.
pub fn suggest(value: &Value, seg: &Seg) -> Option<String> {
    match (value, seg) {
        (Value::Object(map), Seg::Key(k)) => {
            did_you_mean(k, map.keys().map(String::as_str)).map(str::to_string)
        }
        _ => None,
    }
}

/// Walks `segs` through `root`; `offset` is added to the index of a failed step.
pub fn resolve_segs<'v>(segs: &[Seg], root: &'v Value, offset: usize) -> Result<&'v Value, Miss> {
    let mut cur = root;
    for (i, seg) in segs.iter().enumerate() {
        match step(cur, seg) {
            Some(next) => cur = next,
            None => {
                return Err(Miss {
                    at: i + offset,
                    suggestion: suggest(cur, seg),
                })
            }
        }
    }
    Ok(cur)
}

/// Walks `path` through `root`.
pub fn resolve<'v>(path: &Path, root: &'v Value) -> Result<&'v Value, Miss> {
    resolve_segs(&path.segs, root, 0)
}

/// Walks `path` through a context: its first step names a namespace of `source`.
pub fn resolve_in<'v>(path: &Path, source: &'v dyn ContextSource) -> Result<&'v Value, Miss> {
    let Some((Seg::Key(name), rest)) = path.segs.split_first() else {
        return Err(Miss {
            at: 0,
            suggestion: None,
        });
    };
    match source.namespace(name) {
        Some(ns) => resolve_segs(rest, ns, 1),
        None => Err(Miss {
            at: 0,
            suggestion: did_you_mean(name, source.namespaces()).map(str::to_string),
        }),
    }
}

/// The keys that exist where a path stopped: at step `miss.at` of `path` inside `root`
/// (for messages such as "`b` has no `x`; it has `a`, `c`").
pub fn keys_at<'v>(path: &Path, root: &'v Value, miss: &Miss) -> Vec<&'v str> {
    match resolve_segs(&path.segs[..miss.at.min(path.segs.len())], root, 0) {
        Ok(Value::Object(map)) => map.keys().map(String::as_str).collect(),
        _ => Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn k(s: &str) -> Seg {
        Seg::Key(s.into())
    }

    #[test]
    fn parses_every_step_form() {
        let p = Path::parse("a.b[0].c[-1][\"d e\"]['f\\'g'].2.-3").unwrap();
        assert_eq!(
            p.segs,
            vec![
                k("a"),
                k("b"),
                Seg::Index(0),
                k("c"),
                Seg::Index(-1),
                k("d e"),
                k("f'g"),
                Seg::Index(2),
                Seg::Index(-3)
            ]
        );
        assert_eq!(p.display(), r#"a.b[0].c[-1]["d e"]["f'g"][2][-3]"#);
        assert_eq!(Path::parse_steps("").unwrap(), vec![]);
    }

    #[test]
    fn syntax_errors_say_where() {
        let e = |t| Path::parse(t).unwrap_err();
        assert_eq!(e("").at, 0);
        assert_eq!(e("a.").message, "expected a key or an index after `.`");
        assert_eq!(e("a[x]").at, 2);
        assert_eq!(e("a[0").message, "expected `]`");
        assert_eq!(e("a b").at, 1);
        assert_eq!(e("a[\"x").message, "expected an index or a quoted key");
        assert_eq!(e("a.01").at, 2);
        assert_eq!(e("a.1e3").at, 2);
        assert_eq!(e("a[1e3]").at, 2);
        assert_eq!(e("a[1.5]").at, 3);
        assert_eq!(e("a[1.5]").message, "expected `]`");
        assert_eq!(e("a.1.05").at, 4);
    }

    #[test]
    fn dotted_indexes_follow_one_another() {
        let p = |t| Path::parse(t).unwrap().segs;
        assert_eq!(p("m.0.0"), vec![k("m"), Seg::Index(0), Seg::Index(0)]);
        assert_eq!(
            p("m.1.5.2"),
            [k("m"), Seg::Index(1), Seg::Index(5), Seg::Index(2)]
        );
        assert_eq!(p("m.-1.0"), vec![k("m"), Seg::Index(-1), Seg::Index(0)]);
        assert_eq!(p("m.0.-1"), vec![k("m"), Seg::Index(0), Seg::Index(-1)]);
        assert_eq!(
            p("m.0[1].2"),
            [k("m"), Seg::Index(0), Seg::Index(1), Seg::Index(2)]
        );
        assert_eq!(
            Path::parse_steps(".0.0.x").unwrap(),
            [Seg::Index(0), Seg::Index(0), k("x")]
        );
        let root = json!({"m": [[1, 2], [3, 4]]});
        let at = |t| resolve(&Path::parse(t).unwrap(), &root).cloned();
        assert_eq!(at("m.1.0"), Ok(json!(3)));
        assert_eq!(at("m.-1.-1"), Ok(json!(4)));
        assert_eq!(at("m.0.0"), at("m.0[0]"));
    }

    #[test]
    fn walks_data_and_reports_misses() {
        let root = json!({"data": [{"email": "a@b"}, {"email": "c@d"}], "n": {"1": "one"}});
        let p = |t| Path::parse(t).unwrap();
        assert_eq!(resolve(&p("data[-1].email"), &root), Ok(&json!("c@d")));
        assert_eq!(resolve(&p("data.0.email"), &root), Ok(&json!("a@b")));
        assert_eq!(resolve(&p("n[1]"), &root), Ok(&json!("one")));
        let miss = resolve(&p("data[0].emial"), &root).unwrap_err();
        assert_eq!(
            miss,
            Miss {
                at: 2,
                suggestion: Some("email".into())
            }
        );
        assert_eq!(keys_at(&p("data[0].emial"), &root, &miss), vec!["email"]);
        assert_eq!(resolve(&p("data[5]"), &root).unwrap_err().at, 1);
    }
}
