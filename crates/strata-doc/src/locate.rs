use strata_core::{FieldPath, PathSeg};
use yaml_rust2::parser::{Event, MarkedEventReceiver, Parser};
use yaml_rust2::scanner::{Marker, TScalarStyle};

enum Kind {
    Map { key: String, expecting_key: bool },
    Seq { index: usize },
}

struct Frame {
    kind: Kind,
    pushed: bool,
}

/// Follows parser events, keeping the path of the node being read, until the target starts.
struct Finder<'a> {
    target: &'a [PathSeg],
    frames: Vec<Frame>,
    path: Vec<PathSeg>,
    found: Option<(Marker, Option<TScalarStyle>)>,
}

impl Finder<'_> {
    /// Handles a scalar that is a map key; returns false when the node is a value.
    fn take_key(&mut self, text: &str) -> bool {
        match self.frames.last_mut() {
            Some(Frame {
                kind: Kind::Map { key, expecting_key },
                ..
            }) if *expecting_key => {
                *key = text.to_string();
                *expecting_key = false;
                true
            }
            _ => false,
        }
    }

    /// A value node starts: push its path segment, record it if it is the target.
    fn start_value(&mut self, mark: Marker, style: Option<TScalarStyle>) -> bool {
        let seg = match self.frames.last() {
            Some(Frame {
                kind: Kind::Map { key, .. },
                ..
            }) => Some(PathSeg::Key(key.clone())),
            Some(Frame {
                kind: Kind::Seq { index },
                ..
            }) => Some(PathSeg::Index(*index)),
            None => None,
        };
        let pushed = seg.is_some();
        self.path.extend(seg);
        if self.found.is_none() && self.path == self.target {
            self.found = Some((mark, style));
        }
        pushed
    }

    /// A value node ends: pop its segment and move the parent on.
    fn end_value(&mut self, pushed: bool) {
        if pushed {
            self.path.pop();
        }
        match self.frames.last_mut().map(|f| &mut f.kind) {
            Some(Kind::Map { expecting_key, .. }) => *expecting_key = true,
            Some(Kind::Seq { index }) => *index += 1,
            None => {}
        }
    }
}

impl MarkedEventReceiver for Finder<'_> {
    fn on_event(&mut self, ev: Event, mark: Marker) {
        match ev {
            Event::Scalar(text, style, ..) if !self.take_key(&text) => {
                let pushed = self.start_value(mark, Some(style));
                self.end_value(pushed);
            }
            Event::Alias(_) if !self.take_key("") => {
                let pushed = self.start_value(mark, None);
                self.end_value(pushed);
            }
            Event::MappingStart(..) | Event::SequenceStart(..) => {
                let pushed = self.start_value(mark, None);
                let kind = if matches!(ev, Event::MappingStart(..)) {
                    Kind::Map {
                        key: String::new(),
                        expecting_key: true,
                    }
                } else {
                    Kind::Seq { index: 0 }
                };
                self.frames.push(Frame { kind, pushed });
            }
            Event::MappingEnd | Event::SequenceEnd => {
                if let Some(frame) = self.frames.pop() {
                    self.end_value(frame.pushed);
                }
            }
            _ => {}
        }
    }
}

/// The 1-based line and column where the field at `path` starts in YAML or JSON `text`;
/// with `offset`, the position of that byte inside a single-line string or a block scalar.
pub fn locate(text: &str, path: &FieldPath, offset: Option<usize>) -> Option<(usize, usize)> {
    let mut finder = Finder {
        target: &path.0,
        frames: Vec::new(),
        path: Vec::new(),
        found: None,
    };
    let mut parser = Parser::new_from_str(text);
    let _ = parser.load(&mut finder, false);
    let (mark, style) = finder.found?;
    let (line, col) = (mark.line(), mark.col() + 1);
    let Some(offset) = offset else {
        return Some((line, col));
    };
    if matches!(style, Some(TScalarStyle::Literal | TScalarStyle::Folded)) {
        return Some(in_block(text.get(mark.index()..)?, line, col, offset));
    }
    let quote = usize::from(matches!(
        style,
        Some(TScalarStyle::SingleQuoted | TScalarStyle::DoubleQuoted)
    ));
    let line_text = text.get(mark.index()..)?.lines().next().unwrap_or("");
    let inner = line_text.get(quote..)?;
    let prefix = inner.get(..offset.min(inner.len()))?;
    Some((line, col + quote + prefix.chars().count()))
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
}
