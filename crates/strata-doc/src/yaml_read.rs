//! Reading YAML text in one pass over the parser's events, counting what the document
//! expands to as it goes (see [`crate::bounded`]): the first node past a limit, a collection
//! nested too deep, a number that is not finite or a repeated key stops the read at that
//! node, before the rest of the text is even scanned. What the nodes become is the
//! [`Build`]er's: JSON values, or a compiled template whose own limits stop the read too.
//!
//! Plain scalars resolve as YAML 1.2's core schema does (`null`, `~` and nothing are null;
//! `true`/`false` in three spellings; decimal, `0x`, `0o` and `0b` integers, where a leading
//! zero makes text — `0123` stays a string; floats and `.inf`/`.nan`); quoted and block
//! scalars are always text. Keys are read as text, as written. Tags of the YAML schema
//! (`!!str`, `!!int`, …) are honoured; other tags are refused, and so is a second document.

use serde_json::{Number, Value};
use strata_core::{Error, FieldPath, PathSeg};
use yaml_rust2::parser::{Event, Parser, Tag};
use yaml_rust2::scanner::{Marker, ScanError, TScalarStyle};

use crate::bounded::{Budget, Stop};
use crate::build::Build;
use crate::locate::Start;

/// Why a YAML read failed: a syntax error, or a limit (or value rule) the budget enforces,
/// with the 1-based line and column where it was met, or the builder's error about a
/// scalar (its field path set), with where the scalar starts.
#[derive(Debug)]
pub(crate) enum YamlFail {
    /// Not YAML, or YAML a JSON value cannot stand for.
    Syntax(String, (usize, usize)),
    /// Not YAML: the scanner's error (its message and position are those of a `Syntax`).
    Scan(ScanError),
    /// Stopped by the budget or a value rule.
    Stop(Stop, (usize, usize)),
    /// Refused by the builder.
    Build(Box<Error>, Start),
}

/// The handle of the YAML schema's own tags (`!!str` is `tag:yaml.org,2002:str`).
const SCHEMA: &str = "tag:yaml.org,2002:";

/// A collection being read: its items so far, its anchor, and what the budget had counted
/// when it opened (so an anchored collection knows what an alias of it costs).
enum Open<B: Build> {
    Seq(Vec<B::Node>, Anchor<B::Tally>),
    /// Entries, the key waiting for its value (and where it stands).
    Map(B::Map, Option<(String, (usize, usize))>, Anchor<B::Tally>),
}

/// An anchor being defined: its id (0 for none) and what the budget and the builder had
/// counted when it opened.
#[derive(Clone, Copy)]
struct Anchor<T> {
    id: usize,
    counted: Counts,
    tally: T,
}

/// What a read has counted: nodes and bytes (the budget's), and aliases followed — an alias
/// inside an anchored node counts again each time the node repeats.
#[derive(Clone, Copy, Default)]
struct Counts {
    nodes: usize,
    bytes: usize,
    aliases: usize,
}

impl Counts {
    fn since(self, before: Counts) -> Counts {
        Counts {
            nodes: self.nodes - before.nodes,
            bytes: self.bytes - before.bytes,
            aliases: self.aliases - before.aliases,
        }
    }
}

/// How many times over aliases may repeat the document's events (as `serde_yaml` allowed):
/// aliases of aliases stop here long before they reach the node limit.
pub(crate) const REPETITION: usize = 100;

/// An anchored node: what is kept of it, and what it counts for each time it repeats.
struct Anchored<N, T> {
    kept: Kept<N, T>,
    cost: Counts,
}

/// What is kept of an anchored node.
enum Kept<N, T> {
    /// A key: its text (built into a node when an alias uses it as a value).
    Key(String),
    /// A value: its node, its text as a key (or the kind of node that cannot be one), and
    /// the builder's tallies before and after it.
    Node(N, Result<String, &'static str>, (T, T)),
}

/// Reads a whole YAML document against `budget` into what `build` makes of it, refusing
/// collections nested deeper than `max_depth`.
pub(crate) fn read_yaml<B: Build>(
    text: &str,
    budget: &Budget,
    max_depth: usize,
    build: &mut B,
) -> Result<B::Node, YamlFail> {
    Reader {
        budget,
        max_depth,
        offsets: B::VERBATIM.then(|| Offsets::of(text)),
        build,
        open: Vec::new(),
        anchors: Vec::new(),
        root: None,
        documents: 0,
        events: 0,
        aliases: 0,
    }
    .read(text)
}

struct Reader<'b, 't, B: Build> {
    budget: &'b Budget,
    max_depth: usize,
    /// Where the parser's marks stand in the text, when the builder points into it.
    offsets: Option<Offsets<'t>>,
    build: &'b mut B,
    open: Vec<Open<B>>,
    anchors: Vec<Option<Anchored<B::Node, B::Tally>>>,
    root: Option<B::Node>,
    documents: usize,
    /// Events read so far.
    events: usize,
    /// Aliases followed so far, counting those inside each repeated node.
    aliases: usize,
}

/// Byte offsets of the parser's marks, which count characters: the same numbers in an
/// ASCII text; otherwise found by walking forward from the offset asked for last (scalars
/// come in order, so a read walks the text at most once).
struct Offsets<'t> {
    text: &'t str,
    ascii: bool,
    /// The last offset found, in characters and in bytes.
    chars: usize,
    bytes: usize,
}

impl<'t> Offsets<'t> {
    fn of(text: &'t str) -> Offsets<'t> {
        Offsets {
            text,
            ascii: text.is_ascii(),
            chars: 0,
            bytes: 0,
        }
    }

    /// The byte offset of character `chars`, if the text has that many; none for a mark
    /// before the last one asked for (walking back from the start each time could make a
    /// read quadratic in the text; the string is then kept as a copy).
    fn byte_of(&mut self, chars: usize) -> Option<usize> {
        if self.ascii {
            return (chars <= self.text.len()).then_some(chars);
        }
        if chars < self.chars {
            return None;
        }
        let mut rest = self.text[self.bytes..].chars();
        while self.chars < chars {
            self.bytes += rest.next()?.len_utf8();
            self.chars += 1;
        }
        Some(self.bytes)
    }
}

/// The line and the 1-based column of `mark`.
pub(crate) fn at(mark: &Marker) -> (usize, usize) {
    (mark.line(), mark.col() + 1)
}

impl<B: Build> Reader<'_, '_, B> {
    fn read(mut self, text: &str) -> Result<B::Node, YamlFail> {
        let mut parser = Parser::new_from_str(text);
        loop {
            let (event, mark) = parser.next_token().map_err(YamlFail::Scan)?;
            self.events += 1;
            match event {
                Event::StreamEnd => break,
                Event::DocumentStart => {
                    self.documents += 1;
                    if self.documents > 1 {
                        return Err(YamlFail::Syntax(
                            "deserializing from YAML containing more than one document is not \
                             supported"
                                .into(),
                            at(&mark),
                        ));
                    }
                }
                Event::Scalar(text, style, anchor, tag) => {
                    if self.is_key_next() {
                        if anchor != 0 {
                            let cost = Counts {
                                bytes: text.len(),
                                ..Counts::default()
                            };
                            self.remember(anchor, Kept::Key(text.clone()), cost);
                        }
                        self.key(text, &mark)?;
                    } else {
                        let counted = self.counted();
                        let tally = self.build.tally();
                        let value = scalar(text, style, tag.as_ref(), self.budget)
                            .map_err(|fail| fail.at(&mark))?;
                        let key = if anchor == 0 { Err("") } else { key_of(&value) };
                        let built = match value {
                            Value::String(s) => match self.verbatim_at(&s, style, &mark) {
                                Some(at) => self.build.verbatim(s, at),
                                None => self.build.scalar(Value::String(s)),
                            },
                            value => self.build.scalar(value),
                        };
                        let node = built.map_err(|e| self.refused(e, &mark, Some(style)))?;
                        if anchor != 0 {
                            let cost = self.counted().since(counted);
                            let tallies = (tally, self.build.tally());
                            self.remember(anchor, Kept::Node(node.clone(), key, tallies), cost);
                        }
                        self.finish(node, "scalar", &mark)?;
                    }
                }
                Event::SequenceStart(id, tag) => {
                    let anchor = self.open(id, tag.as_ref(), &mark)?;
                    self.open.push(Open::Seq(Vec::new(), anchor));
                }
                Event::MappingStart(id, tag) => {
                    let anchor = self.open(id, tag.as_ref(), &mark)?;
                    self.open.push(Open::Map(B::Map::default(), None, anchor));
                }
                Event::SequenceEnd | Event::MappingEnd => {
                    let (node, kind, anchor) = match self.open.pop() {
                        Some(Open::Seq(items, anchor)) => {
                            (self.build.list(items), "sequence", anchor)
                        }
                        Some(Open::Map(entries, _, anchor)) => {
                            (self.build.map(entries), "map", anchor)
                        }
                        None => continue,
                    };
                    if anchor.id != 0 {
                        let cost = self.counted().since(anchor.counted);
                        let tallies = (anchor.tally, self.build.tally());
                        let kept = Kept::Node(node.clone(), Err(kind), tallies);
                        self.remember(anchor.id, kept, cost);
                    }
                    self.finish(node, kind, &mark)?;
                }
                Event::Alias(id) => self.alias(id, &mark)?,
                Event::StreamStart | Event::DocumentEnd | Event::Nothing => {}
            }
        }
        match self.root {
            Some(root) => Ok(root),
            None => self
                .build
                .scalar(Value::Null)
                .map_err(|e| YamlFail::Build(Box::new(e), Start::first())),
        }
    }

    /// Checks a collection's tag and the nesting depth before it opens, and counts it: its
    /// anchor, with what was counted before it.
    fn open(
        &self,
        id: usize,
        tag: Option<&Tag>,
        mark: &Marker,
    ) -> Result<Anchor<B::Tally>, YamlFail> {
        if let Some(tag) = tag {
            if tag.handle != SCHEMA {
                return Err(unsupported_tag(tag, mark));
            }
        }
        if self.open.len() >= self.max_depth {
            return Err(YamlFail::Stop(Stop::TooDeep, at(mark)));
        }
        let anchor = Anchor {
            id,
            counted: self.counted(),
            tally: self.build.tally(),
        };
        self.budget
            .count_node()
            .map_err(|s| YamlFail::Stop(s, at(mark)))?;
        Ok(anchor)
    }

    /// Where string scalar `value`, met at `mark` in `style`, stands as it is in the text,
    /// in bytes — when the builder points into the text and the text from there is the
    /// value (a plain or quoted scalar without escapes or folded lines).
    fn verbatim_at(&mut self, value: &str, style: TScalarStyle, mark: &Marker) -> Option<usize> {
        let offsets = self.offsets.as_mut()?;
        let quote = match style {
            TScalarStyle::Plain => 0,
            TScalarStyle::SingleQuoted | TScalarStyle::DoubleQuoted => 1,
            TScalarStyle::Literal | TScalarStyle::Folded => return None,
        };
        let at = offsets.byte_of(mark.index() + quote)?;
        let stands = offsets.text.as_bytes().get(at..at + value.len()) == Some(value.as_bytes());
        stands.then_some(at)
    }

    /// True when the next scalar is a map key.
    fn is_key_next(&self) -> bool {
        matches!(self.open.last(), Some(Open::Map(_, None, _)))
    }

    /// Records `key` as the open map's next key, counted (a repeated key is refused when
    /// its value is placed: one lookup per entry).
    fn key(&mut self, key: String, mark: &Marker) -> Result<(), YamlFail> {
        self.budget
            .count_text(key.len())
            .map_err(|s| YamlFail::Stop(s, at(mark)))?;
        if let Some(Open::Map(_, pending, _)) = self.open.last_mut() {
            *pending = Some((key, at(mark)));
        }
        Ok(())
    }

    /// Places a finished node (of `kind`: scalar, sequence or map): under the open map's
    /// key, at the end of the open list, or as the document.
    fn finish(&mut self, node: B::Node, kind: &str, mark: &Marker) -> Result<(), YamlFail> {
        match self.open.last_mut() {
            Some(Open::Map(entries, pending, _)) => match pending.take() {
                Some((key, key_at)) => {
                    if let Err(key) = self.build.insert(entries, key, node) {
                        return Err(YamlFail::Stop(Stop::DuplicateKey(key), key_at));
                    }
                }
                None => {
                    return Err(YamlFail::Syntax(
                        format!("invalid type: {kind}, expected a map key"),
                        at(mark),
                    ))
                }
            },
            Some(Open::Seq(items, _)) => items.push(node),
            None => self.root = Some(node),
        }
        Ok(())
    }

    /// The builder's error about the scalar at `mark`, with its field path: the open
    /// collections' keys and indexes.
    fn refused(&self, error: Error, mark: &Marker, style: Option<TScalarStyle>) -> YamlFail {
        let path = self
            .open
            .iter()
            .filter_map(|open| match open {
                Open::Seq(items, _) => Some(PathSeg::Index(items.len())),
                Open::Map(_, Some((key, _)), _) => Some(PathSeg::Key(key.clone())),
                Open::Map(_, None, _) => None,
            })
            .collect();
        YamlFail::Build(
            Box::new(error.at_path(&FieldPath(path))),
            Start::of(*mark, style),
        )
    }

    /// What has been counted so far.
    fn counted(&self) -> Counts {
        let (nodes, bytes) = self.budget.counted();
        Counts {
            nodes,
            bytes,
            aliases: self.aliases,
        }
    }

    /// Keeps what an anchor stands for, which cost `cost`.
    fn remember(&mut self, id: usize, kept: Kept<B::Node, B::Tally>, cost: Counts) {
        if id == 0 {
            return;
        }
        if self.anchors.len() <= id {
            self.anchors.resize_with(id + 1, || None);
        }
        self.anchors[id] = Some(Anchored { kept, cost });
    }

    /// Repeats an anchored node, counting it again.
    fn alias(&mut self, id: usize, mark: &Marker) -> Result<(), YamlFail> {
        let Some(Some(anchored)) = self.anchors.get(id) else {
            return Err(YamlFail::Syntax("unknown anchor".into(), at(mark)));
        };
        let cost = anchored.cost;
        self.aliases = self.aliases.saturating_add(1 + cost.aliases);
        if self.aliases > self.events.saturating_mul(REPETITION) {
            return Err(YamlFail::Stop(Stop::Repetition, at(mark)));
        }
        self.budget
            .charge_counts(cost.nodes, cost.bytes)
            .map_err(|s| YamlFail::Stop(s, at(mark)))?;
        if self.is_key_next() {
            let key = match &anchored.kept {
                Kept::Key(text) | Kept::Node(_, Ok(text), _) => Ok(text.clone()),
                Kept::Node(_, Err(kind), _) => Err(*kind),
            };
            return match key {
                Ok(key) => self.key(key, mark),
                Err(kind) => Err(YamlFail::Syntax(
                    format!("invalid type: {kind}, expected a map key"),
                    at(mark),
                )),
            };
        }
        let (node, kind) = match &anchored.kept {
            Kept::Node(node, key, (before, after)) => (
                self.build.repeat(node, *before, *after),
                key.as_ref().err().copied().unwrap_or("scalar"),
            ),
            Kept::Key(text) => (self.build.scalar(Value::String(text.clone())), "scalar"),
        };
        let node = node.map_err(|e| self.refused(e, mark, None))?;
        self.finish(node, kind, mark)
    }
}

/// A scalar's failure before its position is known.
enum ScalarFail {
    Syntax(String),
    Stop(Stop),
}

impl ScalarFail {
    fn at(self, mark: &Marker) -> YamlFail {
        match self {
            ScalarFail::Syntax(message) => YamlFail::Syntax(message, at(mark)),
            ScalarFail::Stop(stop) => YamlFail::Stop(stop, at(mark)),
        }
    }
}

fn unsupported_tag(tag: &Tag, mark: &Marker) -> YamlFail {
    YamlFail::Syntax(
        format!("unsupported tag `{}{}`", tag.handle, tag.suffix),
        at(mark),
    )
}

/// The value of a scalar written `text` in `style` with `tag`, counted against `budget`.
fn scalar(
    text: String,
    style: TScalarStyle,
    tag: Option<&Tag>,
    budget: &Budget,
) -> Result<Value, ScalarFail> {
    budget.count_node().map_err(ScalarFail::Stop)?;
    let invalid = |expected: &str, text: &str| {
        ScalarFail::Syntax(format!(
            "invalid value: string {text:?}, expected {expected}"
        ))
    };
    let value = match tag {
        Some(tag) if tag.handle != SCHEMA => {
            return Err(ScalarFail::Syntax(format!(
                "unsupported tag `{}{}`",
                tag.handle, tag.suffix
            )))
        }
        Some(tag) => match tag.suffix.as_str() {
            "bool" => Value::Bool(parse_bool(&text).ok_or_else(|| invalid("a boolean", &text))?),
            "int" => int(&text).ok_or_else(|| invalid("an integer", &text))?,
            "float" => match parse_float(&text) {
                Some(f) => finite(f)?,
                None => return Err(invalid("a float", &text)),
            },
            "null" if is_null(&text) => Value::Null,
            "null" => return Err(invalid("null", &text)),
            _ => Value::String(text),
        },
        None if style == TScalarStyle::Plain => plain(text)?,
        None => Value::String(text),
    };
    // An integer past 64 bits holds its digits: they count as a string's bytes.
    let bytes = match &value {
        Value::String(s) => s.len(),
        Value::Number(n) if strata_core::is_big_integer(n) => n.as_str().len(),
        _ => 0,
    };
    if bytes > 0 {
        budget.count_text(bytes).map_err(ScalarFail::Stop)?;
    }
    Ok(value)
}

/// The value of an untagged plain scalar.
fn plain(text: String) -> Result<Value, ScalarFail> {
    if text.is_empty() || is_null(&text) {
        return Ok(Value::Null);
    }
    if let Some(b) = parse_bool(&text) {
        return Ok(Value::Bool(b));
    }
    if let Some(n) = int(&text) {
        return Ok(n);
    }
    if !digits_but_not_number(&text) {
        if let Some(f) = parse_float(&text) {
            return finite(f);
        }
    }
    Ok(Value::String(text))
}

/// True when `text`, written as a plain scalar, reads back as that text (not null, a
/// boolean or a number): when a writer may leave it unquoted.
pub(crate) fn is_plain_text(text: &str) -> bool {
    !(text.is_empty()
        || is_null(text)
        || parse_bool(text).is_some()
        || int(text).is_some()
        || (!digits_but_not_number(text) && parse_float(text).is_some()))
}

fn finite(f: f64) -> Result<Value, ScalarFail> {
    Number::from_f64(f)
        .map(Value::Number)
        .ok_or(ScalarFail::Stop(Stop::NotFinite))
}

/// A scalar's text as a map key (an alias may stand for a key).
fn key_of(value: &Value) -> Result<String, &'static str> {
    Ok(match value {
        Value::String(s) => s.clone(),
        Value::Number(n) => n.to_string(),
        Value::Bool(b) => b.to_string(),
        Value::Null => String::new(),
        _ => return Err("scalar"),
    })
}

fn is_null(text: &str) -> bool {
    matches!(text, "null" | "Null" | "NULL" | "~")
}

fn parse_bool(text: &str) -> Option<bool> {
    match text {
        "true" | "True" | "TRUE" => Some(true),
        "false" | "False" | "FALSE" => Some(false),
        _ => None,
    }
}

/// Leading zeros followed by digits: text in YAML 1.2, not an octal number.
fn digits_but_not_number(text: &str) -> bool {
    let digits = text.strip_prefix(['-', '+']).unwrap_or(text);
    digits.len() > 1 && digits.starts_with('0') && digits[1..].bytes().all(|b| b.is_ascii_digit())
}

/// An integer: decimal (an optional sign), or `0x`/`0o`/`0b` (an optional `-`), exact past
/// 64 bits (a number holds its digits): decimal of any length, the other bases up to 128
/// bits (longer, the text is no integer).
fn int(text: &str) -> Option<Value> {
    let (negative, unsigned) = match text.as_bytes().first() {
        Some(b'-') => (true, &text[1..]),
        Some(b'+') => (false, &text[1..]),
        _ => (false, text),
    };
    if unsigned.starts_with(['+', '-']) || digits_but_not_number(text) {
        return None;
    }
    let (digits, radix) = if let Some(rest) = unsigned.strip_prefix("0x") {
        (rest, 16)
    } else if let Some(rest) = unsigned.strip_prefix("0o") {
        (rest, 8)
    } else if let Some(rest) = unsigned.strip_prefix("0b") {
        (rest, 2)
    } else {
        (unsigned, 10)
    };
    if digits.starts_with(['+', '-']) {
        return None;
    }
    let sign = if negative { "-" } else { "" };
    let decimal = match u128::from_str_radix(digits, radix) {
        Ok(magnitude) => match (negative, u64::try_from(magnitude)) {
            (false, Ok(n)) => return Some(Value::from(n)),
            (true, _) if magnitude <= 1 << 63 => {
                return Some(Value::from((magnitude as i128).wrapping_neg() as i64))
            }
            _ => format!("{sign}{magnitude}"),
        },
        // Past 128 bits: decimal digits are kept as they are (no leading zero: that is text).
        Err(_) if radix == 10 && digits.bytes().all(|b| b.is_ascii_digit()) => {
            format!("{sign}{digits}")
        }
        Err(_) => return None,
    };
    strata_core::number_from_text(&decimal).map(Value::Number)
}

/// A float as YAML writes one (`.inf`, `-.inf`, `.nan` in three spellings each) or as Rust
/// parses one; not finite only when written so.
fn parse_float(text: &str) -> Option<f64> {
    let unsigned = match text.strip_prefix('+') {
        Some(rest) if rest.starts_with(['+', '-']) => return None,
        Some(rest) => rest,
        None => text,
    };
    match unsigned {
        ".inf" | ".Inf" | ".INF" => return Some(f64::INFINITY),
        "-.inf" | "-.Inf" | "-.INF" => return Some(f64::NEG_INFINITY),
        _ => {}
    }
    if matches!(text, ".nan" | ".NaN" | ".NAN") {
        return Some(f64::NAN);
    }
    unsigned.parse::<f64>().ok().filter(|f| f.is_finite())
}
