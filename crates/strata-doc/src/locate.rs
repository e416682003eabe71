//! Where fields stand in a YAML or JSON text, for diagnostics.
//!
//! [`Positions`] reads the text once with a YAML event parser and keeps the start of every
//! node under its field path, and where every line starts; each lookup then walks the path
//! (maps are hashed) and computes the column from the line, so locating many fields of one
//! file costs one parse in all — not one per field (10 keys of 9,999 references each took
//! minutes to check when every lookup parsed the file again).

use indexmap::IndexMap;
use strata_core::{FieldPath, PathSeg};
use yaml_rust2::parser::{Event, MarkedEventReceiver, Parser};
use yaml_rust2::scanner::{Marker, TScalarStyle};

/// Where a node starts: its line (1-based), its column in characters (0-based), and how a
/// scalar is written (quoted, or a `|`/`>` block). (The parser's character index is not a
/// byte offset: positions in the text are found from the line and column.)
#[derive(Debug, Clone, Copy)]
pub(crate) struct Start {
    line: usize,
    col: usize,
    quoted: bool,
    block: bool,
}

impl Start {
    /// The start of the text.
    pub(crate) fn first() -> Start {
        Start {
            line: 1,
            col: 0,
            quoted: false,
            block: false,
        }
    }

    pub(crate) fn of(mark: Marker, style: Option<TScalarStyle>) -> Start {
        Start {
            line: mark.line(),
            col: mark.col(),
            quoted: matches!(
                style,
                Some(TScalarStyle::SingleQuoted | TScalarStyle::DoubleQuoted)
            ),
            block: matches!(style, Some(TScalarStyle::Literal | TScalarStyle::Folded)),
        }
    }
}

/// A node of the text: where it starts, and its children.
#[derive(Debug, Clone)]
enum Node {
    Leaf(Start),
    /// Keys in order (where each key starts, and its value), the first of a repeated key
    /// kept.
    Map(Start, IndexMap<String, (Start, Node)>),
    Seq(Start, Vec<Node>),
}

impl Node {
    fn start(&self) -> Start {
        match self {
            Node::Leaf(s) | Node::Map(s, _) | Node::Seq(s, _) => *s,
        }
    }
}

/// One line of the text: where it starts (bytes) and whether it is all ASCII (then a byte
/// offset is a column).
#[derive(Debug, Clone, Copy)]
struct Line {
    start: usize,
    end: usize,
    ascii: bool,
}

/// Where the lines of a text start (every line, or only the first ones), found in one pass:
/// turns byte offsets into lines and columns without scanning the text again (a column is counted in characters only on
/// lines that are not ASCII).
#[derive(Debug, Clone, Default)]
pub struct Lines(Vec<Line>);

impl Lines {
    /// The lines of `text` (`\n` or `\r\n` ends a line).
    pub fn of(text: &str) -> Lines {
        Lines::first(text, usize::MAX)
    }

    /// The first `count` lines of `text` (all of them when it has fewer): what one error
    /// needs of a large text is the lines up to its own, not an index of every line.
    pub fn first(text: &str, count: usize) -> Lines {
        let mut lines = Vec::new();
        let mut start = 0;
        for line in text.split_inclusive('\n').take(count) {
            let body = line.strip_suffix('\n').unwrap_or(line);
            let body = body.strip_suffix('\r').unwrap_or(body);
            lines.push(Line {
                start,
                end: start + body.len(),
                ascii: body.is_ascii(),
            });
            start += line.len();
        }
        Lines(lines)
    }

    /// Line `n` (1-based) of `text` (the text these lines are of), without its line end,
    /// and whether it is all ASCII.
    pub fn line<'t>(&self, text: &'t str, n: usize) -> Option<(&'t str, bool)> {
        let line = self.0.get(n.checked_sub(1)?)?;
        Some((text.get(line.start..line.end)?, line.ascii))
    }

    /// The lines of `text` up to the one holding byte `offset`.
    pub fn through(text: &str, offset: usize) -> Lines {
        let from = offset.min(text.len());
        let end =
            memchr::memchr(b'\n', &text.as_bytes()[from..]).map_or(text.len(), |k| from + k + 1);
        Lines::of(&text[..end])
    }

    /// The 1-based line and column of byte `offset` of `text` (the text these lines are of).
    pub fn position(&self, text: &str, offset: usize) -> (usize, usize) {
        let i = self.0.partition_point(|l| l.start <= offset).max(1) - 1;
        let Some(line) = self.0.get(i) else {
            return (1, 1);
        };
        let within = offset.min(line.end).saturating_sub(line.start);
        let column = if line.ascii {
            within
        } else {
            text.get(line.start..line.start + within)
                .map_or(within, |s| s.chars().count())
        };
        (i + 1, column + 1)
    }
}

/// The positions of every node of one text; see the module documentation.
#[derive(Debug, Clone)]
pub struct Positions {
    root: Option<Node>,
    lines: Lines,
}

/// A collection being read, and the key its next value goes under.
enum Open {
    Map(
        Start,
        IndexMap<String, (Start, Node)>,
        Option<(String, Start)>,
    ),
    Seq(Start, Vec<Node>),
}

/// Builds the node tree from parser events.
#[derive(Default)]
struct Builder {
    open: Vec<Open>,
    root: Option<Node>,
}

impl Builder {
    /// A finished node: the value of the open map's pending key, the next item of the open
    /// list, or the root.
    fn finish(&mut self, node: Node) {
        match self.open.last_mut() {
            Some(Open::Map(_, entries, key)) => {
                if let Some((k, at)) = key.take() {
                    entries.entry(k).or_insert((at, node));
                }
            }
            Some(Open::Seq(_, items)) => items.push(node),
            None => {
                if self.root.is_none() {
                    self.root = Some(node);
                }
            }
        }
    }

    /// True (and the key recorded) when a scalar is a map key rather than a value.
    fn take_key(&mut self, text: &str, at: Start) -> bool {
        match self.open.last_mut() {
            Some(Open::Map(_, _, key)) if key.is_none() => {
                *key = Some((text.to_string(), at));
                true
            }
            _ => false,
        }
    }
}

impl MarkedEventReceiver for Builder {
    fn on_event(&mut self, ev: Event, mark: Marker) {
        match ev {
            Event::Scalar(text, style, ..) if !self.take_key(&text, Start::of(mark, None)) => {
                self.finish(Node::Leaf(Start::of(mark, Some(style))));
            }
            Event::Alias(_) if !self.take_key("", Start::of(mark, None)) => {
                self.finish(Node::Leaf(Start::of(mark, None)));
            }
            Event::MappingStart(..) => {
                let start = Start::of(mark, None);
                self.open.push(Open::Map(start, IndexMap::new(), None));
            }
            Event::SequenceStart(..) => {
                self.open.push(Open::Seq(Start::of(mark, None), Vec::new()));
            }
            Event::MappingEnd | Event::SequenceEnd => {
                let node = match self.open.pop() {
                    Some(Open::Map(start, entries, _)) => Node::Map(start, entries),
                    Some(Open::Seq(start, items)) => Node::Seq(start, items),
                    None => return,
                };
                self.finish(node);
            }
            _ => {}
        }
    }
}

/// `text` as the YAML parser can read it to the end: JSON writes a character beyond the
/// basic plane as a pair of `\uD8xx\uDCxx` escapes, which YAML refuses (a surrogate is no
/// character), so each such escape is replaced by `\uFFFD`, of the same length — every
/// node then starts where it does in the text.
fn scannable(text: &str) -> std::borrow::Cow<'_, str> {
    let b = text.as_bytes();
    let surrogate = |i: usize| {
        b[i] == b'\\'
            && b.get(i + 1) == Some(&b'u')
            && b.get(i + 2).is_some_and(|c| c.eq_ignore_ascii_case(&b'd'))
            && b.get(i + 3)
                .is_some_and(|c| matches!(c.to_ascii_lowercase(), b'8'..=b'9' | b'a'..=b'f'))
            && b.get(i + 4..i + 6)
                .is_some_and(|h| h.iter().all(u8::is_ascii_hexdigit))
    };
    let at: Vec<usize> = memchr::memchr_iter(b'\\', b)
        .filter(|&i| surrogate(i))
        .collect();
    if at.is_empty() {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut out = text.as_bytes().to_vec();
    for i in at {
        out[i + 2..i + 6].copy_from_slice(b"FFFD");
    }
    std::borrow::Cow::Owned(String::from_utf8(out).unwrap_or_else(|_| text.to_string()))
}

impl Positions {
    /// Reads `text` once (what does not parse keeps the nodes read before the error).
    pub fn of(text: &str) -> Positions {
        let mut builder = Builder::default();
        let scanned = scannable(text);
        let mut parser = Parser::new_from_str(&scanned);
        let _ = parser.load(&mut builder, false);
        Positions {
            root: builder.root,
            lines: Lines::of(text),
        }
    }

    /// The 1-based line and column where the field at `path` starts; with `offset`, the
    /// position of that byte inside a single-line string or a block scalar.
    pub fn locate(
        &self,
        text: &str,
        path: &FieldPath,
        offset: Option<usize>,
    ) -> Option<(usize, usize)> {
        let start = self.node(path)?.start();
        let line = *self.lines.0.get(start.line.checked_sub(1)?)?;
        place(text, start, line, offset)
    }
}

/// The 1-based line and column of a node starting at `start` (on `line`), or with
/// `offset`, of that byte inside its single-line string or block scalar.
fn place(text: &str, start: Start, info: Line, offset: Option<usize>) -> Option<(usize, usize)> {
    let (line, col) = (start.line, start.col + 1);
    let Some(offset) = offset else {
        return Some((line, col));
    };
    let line_text = text.get(info.start..info.end)?;
    // The node's byte offset in its line: its column, in characters.
    let from = if info.ascii {
        start.col.min(line_text.len())
    } else {
        line_text
            .char_indices()
            .nth(start.col)
            .map_or(line_text.len(), |(i, _)| i)
    };
    if start.block {
        return Some(in_block(text.get(info.start + from..)?, line, col, offset));
    }
    let quote = usize::from(start.quoted);
    if info.ascii {
        // Bytes are characters: no counting.
        let room = (info.end - info.start).saturating_sub(start.col + quote);
        return Some((line, col + quote + offset.min(room)));
    }
    let inner = line_text.get(from..)?.get(quote..)?;
    let prefix = inner.get(..offset.min(inner.len()))?;
    Some((line, col + quote + prefix.chars().count()))
}

/// Where the field at `path` of `text` starts (see [`Positions::locate`]), reading the text's
/// events only as far as that field and keeping nothing else: for one lookup in a large
/// text, where building [`Positions`] would read all of it and hold a node per field.
pub(crate) fn find(text: &str, path: &FieldPath, offset: Option<usize>) -> Option<(usize, usize)> {
    at_start(text, find_start(text, path)?, offset)
}

/// The 1-based line and column of the node starting at `start` (with `offset`, of that byte
/// inside its string), finding its line without an index of the text.
pub(crate) fn at_start(text: &str, start: Start, offset: Option<usize>) -> Option<(usize, usize)> {
    let line_start = match start.line.checked_sub(2) {
        None => 0,
        Some(breaks) => memchr::memchr_iter(b'\n', text.as_bytes()).nth(breaks)? + 1,
    };
    let rest = &text[line_start..];
    let body = &rest[..rest.find('\n').unwrap_or(rest.len())];
    let body = body.strip_suffix('\r').unwrap_or(body);
    let line = Line {
        start: line_start,
        end: line_start + body.len(),
        ascii: body.is_ascii(),
    };
    place(text, start, line, offset)
}

/// The start of the node at `path`, from the text's events up to it.
fn find_start(text: &str, path: &FieldPath) -> Option<Start> {
    /// An open collection: a map's pending key, or a list's next index.
    enum Frame {
        Map(Option<String>),
        Seq(usize),
    }
    let at_target = |frames: &[Frame]| {
        frames.len() == path.0.len()
            && frames.iter().zip(&path.0).all(|(f, seg)| match (f, seg) {
                (Frame::Map(Some(k)), PathSeg::Key(want)) => k == want,
                (Frame::Seq(i), PathSeg::Index(want)) => i == want,
                _ => false,
            })
    };
    // A finished node moves its parent on: past the map's key, or to the list's next item.
    let finish = |frames: &mut Vec<Frame>| match frames.last_mut() {
        Some(Frame::Map(key)) => *key = None,
        Some(Frame::Seq(i)) => *i += 1,
        None => {}
    };
    let mut frames: Vec<Frame> = Vec::new();
    let scanned = scannable(text);
    let mut parser = Parser::new_from_str(&scanned);
    loop {
        let (event, mark) = parser.next_token().ok()?;
        let is_key = matches!(frames.last(), Some(Frame::Map(None)));
        match event {
            Event::StreamEnd => return None,
            Event::Scalar(key, ..) if is_key => {
                if let Some(top) = frames.last_mut() {
                    *top = Frame::Map(Some(key));
                }
            }
            Event::Alias(_) if is_key => {
                if let Some(top) = frames.last_mut() {
                    *top = Frame::Map(Some(String::new()));
                }
            }
            Event::Scalar(_, style, ..) => {
                if at_target(&frames) {
                    return Some(Start::of(mark, Some(style)));
                }
                finish(&mut frames);
            }
            Event::Alias(_) => {
                if at_target(&frames) {
                    return Some(Start::of(mark, None));
                }
                finish(&mut frames);
            }
            Event::MappingStart(..) | Event::SequenceStart(..) => {
                if at_target(&frames) {
                    return Some(Start::of(mark, None));
                }
                frames.push(match event {
                    Event::MappingStart(..) => Frame::Map(None),
                    _ => Frame::Seq(0),
                });
            }
            Event::MappingEnd | Event::SequenceEnd => {
                frames.pop();
                finish(&mut frames);
            }
            _ => {}
        }
    }
}

impl Positions {
    /// The node at `path`.
    fn node(&self, path: &FieldPath) -> Option<&Node> {
        let mut node = self.root.as_ref()?;
        for seg in &path.0 {
            node = match (node, seg) {
                (Node::Map(_, entries), PathSeg::Key(k)) => &entries.get(k)?.1,
                (Node::Seq(_, items), PathSeg::Index(i)) => items.get(*i)?,
                _ => return None,
            };
        }
        Some(node)
    }

    /// The 1-based line and column of the key that ends `path` (where a field is written,
    /// rather than its value).
    pub fn locate_key(&self, path: &FieldPath) -> Option<(usize, usize)> {
        let (PathSeg::Key(key), parent) = path.0.split_last()? else {
            return None;
        };
        match self.node(&FieldPath(parent.to_vec()))? {
            Node::Map(_, entries) => entries.get(key).map(|(at, _)| (at.line, at.col + 1)),
            _ => None,
        }
    }
}

/// The 1-based line and column where the field at `path` starts in YAML or JSON `text`;
/// with `offset`, the position of that byte inside a single-line string or a block scalar.
/// One lookup reads the text only as far as the field; for several fields of one text, build
/// [`Positions`] once (a [`crate::Document`] does).
pub fn locate(text: &str, path: &FieldPath, offset: Option<usize>) -> Option<(usize, usize)> {
    find(text, path, offset)
}

/// The position of byte `offset` of a block scalar (`|` or `>`) whose content starts at
/// `line`:`col` of the file, `rest` being the file from there: each content line is indented
/// by `col - 1` columns (a folded scalar's line breaks count as one byte, as its spaces do).
fn in_block(rest: &str, line: usize, col: usize, offset: usize) -> (usize, usize) {
    let mut remaining = offset;
    for (k, raw) in rest.split('\n').enumerate() {
        let content = if k == 0 {
            raw
        } else {
            let indent = raw.len() - raw.trim_start_matches(' ').len();
            &raw[indent.min(col - 1)..]
        };
        if remaining <= content.len() {
            let prefix = content.get(..remaining).unwrap_or(content);
            return (line + k, col + prefix.chars().count());
        }
        remaining -= content.len() + 1;
    }
    (line, col)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn path(segs: &[PathSeg]) -> FieldPath {
        FieldPath(segs.to_vec())
    }

    #[test]
    fn finds_nested_fields_in_block_and_flow_yaml() {
        let text = "a: 1\nconfig:\n  args:\n    - one\n    - \"x ${y}\"\n  cwd: [p, q]\n";
        let k = |s: &str| PathSeg::Key(s.into());
        assert_eq!(locate(text, &path(&[k("a")]), None), Some((1, 4)));
        let arg1 = path(&[k("config"), k("args"), PathSeg::Index(1)]);
        assert_eq!(locate(text, &arg1, None), Some((5, 7)));
        assert_eq!(locate(text, &arg1, Some(2)), Some((5, 10)));
        let q = path(&[k("config"), k("cwd"), PathSeg::Index(1)]);
        assert_eq!(locate(text, &q, None), Some((6, 12)));
        assert_eq!(locate(text, &path(&[k("missing")]), None), None);
        assert_eq!(locate(text, &path(&[k("config")]), None), Some((3, 7)));
    }

    #[test]
    fn finds_offsets_inside_block_scalars() {
        let text = "a:\n  b: |\n    line one\n\n    {{ x }}\n  c: >-\n    folded\n    more\n";
        let k = |s: &str| PathSeg::Key(s.into());
        let b = path(&[k("a"), k("b")]);
        assert_eq!(locate(text, &b, None), Some((3, 5)));
        assert_eq!(locate(text, &b, Some(5)), Some((3, 10)));
        assert_eq!(locate(text, &b, Some(13)), Some((5, 8)));
        let c = path(&[k("a"), k("c")]);
        assert_eq!(locate(text, &c, Some(9)), Some((8, 7)));
    }

    #[test]
    fn finds_fields_in_json() {
        let text = "{\"a\": {\"b\": [true, \"t\"]}}";
        let k = |s: &str| PathSeg::Key(s.into());
        let p = path(&[k("a"), k("b"), PathSeg::Index(1)]);
        assert_eq!(locate(text, &p, None), Some((1, 20)));
    }

    #[test]
    fn offsets_count_characters_on_lines_that_are_not_ascii() {
        let text = "é: 1\nb: \"ü {x} {y}\"\n";
        let k = |s: &str| PathSeg::Key(s.into());
        assert_eq!(locate(text, &path(&[k("é")]), None), Some((1, 4)));
        // `{y}` starts at byte 8 of the value (`ü` is two bytes): column 4 + 1 + 7.
        assert_eq!(locate(text, &path(&[k("b")]), Some(8)), Some((2, 12)));
        let text = "b: \"a {x} {y}\"\n";
        assert_eq!(locate(text, &path(&[k("b")]), Some(6)), Some((1, 11)));
        assert_eq!(locate(text, &path(&[k("b")]), Some(1000)), Some((1, 15)));
    }

    #[test]
    fn the_first_lines_and_the_lines_through_an_offset_are_those_of_the_whole_text() {
        let text = "ab\r\nçd\n\nxyz";
        let all = Lines::of(text);
        let first = Lines::first(text, 2);
        assert_eq!(first.line(text, 2), Some(("çd", false)));
        assert_eq!(first.line(text, 3), None);
        assert_eq!(Lines::first(text, 0).line(text, 1), None);
        for offset in 0..=text.len() + 1 {
            assert_eq!(
                Lines::through(text, offset).position(text, offset),
                all.position(text, offset),
                "at {offset}"
            );
        }
        assert_eq!(Lines::through(text, 5).line(text, 3), None);
    }

    #[test]
    fn byte_offsets_become_lines_and_columns() {
        let text = "ab\r\nçd\n\nxyz";
        let lines = Lines::of(text);
        assert_eq!(lines.position(text, 0), (1, 1));
        assert_eq!(lines.position(text, 1), (1, 2));
        assert_eq!(lines.position(text, 4), (2, 1));
        assert_eq!(lines.position(text, 6), (2, 2), "after the two bytes of ç");
        assert_eq!(lines.position(text, 8), (3, 1));
        assert_eq!(lines.position(text, 11), (4, 3));
        assert_eq!(lines.position(text, 100), (4, 4));
    }

    #[test]
    fn one_lookup_and_the_index_agree_on_every_field() {
        let text = "a: 1\nb:\n  - x\n  - {c: \"é {y}\", d: [1, 2]}\n  - |\n    l1\n    l2 {z}\nk: &r v\nm: *r\n";
        let k = |s: &str| PathSeg::Key(s.into());
        let i = PathSeg::Index;
        let paths = [
            vec![k("a")],
            vec![k("b")],
            vec![k("b"), i(0)],
            vec![k("b"), i(1)],
            vec![k("b"), i(1), k("c")],
            vec![k("b"), i(1), k("d"), i(1)],
            vec![k("b"), i(2)],
            vec![k("k")],
            vec![k("m")],
            vec![k("b"), i(3)],
            vec![k("nope")],
        ];
        let index = Positions::of(text);
        for p in paths {
            let p = path(&p);
            for offset in [None, Some(0), Some(3), Some(9)] {
                assert_eq!(
                    find(text, &p, offset),
                    index.locate(text, &p, offset),
                    "{p:?} {offset:?}"
                );
            }
        }
    }

    #[test]
    fn text_before_a_field_that_is_not_ascii_moves_nothing() {
        // The parser counts characters, not bytes: `…` is one character and three bytes.
        let text = "# reads `${error…}`\nk: |\n  é {x}\nv: \"{y}\"\n";
        let k = |s: &str| PathSeg::Key(s.into());
        assert_eq!(find(text, &path(&[k("v")]), Some(1)), Some((4, 6)));
        assert_eq!(find(text, &path(&[k("k")]), Some(3)), Some((3, 5)));
        let index = Positions::of(text);
        assert_eq!(index.locate(text, &path(&[k("k")]), Some(3)), Some((3, 5)));
        assert_eq!(index.locate(text, &path(&[k("v")]), Some(1)), Some((4, 6)));
    }

    #[test]
    fn one_index_answers_many_lookups() {
        let keys: Vec<String> = (0..2000).map(|i| format!("k{i}")).collect();
        let text: String = keys.iter().map(|k| format!("{k}: \"{{a}}\"\n")).collect();
        let index = Positions::of(&text);
        for (i, k) in keys.iter().enumerate() {
            let p = path(&[PathSeg::Key(k.clone())]);
            let col = k.len() + 3;
            assert_eq!(index.locate(&text, &p, Some(1)), Some((i + 1, col + 2)));
        }
    }
}
