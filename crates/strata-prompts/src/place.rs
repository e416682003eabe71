//! Where a template was written: a file of its own, or a string inside a YAML/JSON dict file,
//! and how a line and column inside the template map to the file.

use std::fmt;
use std::sync::Arc;

use strata_core::Location;

/// Where a template (or component) is defined.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Place {
    /// The file, relative to the project (`prompts/main/BrowseLink.j2`), or
    /// `<default template>` for the configured default template.
    pub file: String,
    /// 1-based line where the template's text starts.
    pub line: usize,
    /// 1-based column where the template's text starts.
    pub column: usize,
    layout: Layout,
    /// For a quoted scalar: the file position (line, column) of each character of the
    /// template's text, line by line, so positions map through escapes (`\n`, `\"`, `''`)
    /// and folded lines.
    map: Option<Arc<PositionMap>>,
}

/// The file position (line, column) of each character of a template, line by line.
type PositionMap = Vec<Vec<(usize, usize)>>;

/// How the template's text sits in its file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Layout {
    /// The whole file is the template.
    File,
    /// A flow scalar in a dict file; `quote` is 1 for a quoted one.
    Inline { quote: usize },
    /// A block scalar (`|` or `>`) in a dict file, its lines indented by `indent` columns.
    Block { indent: usize },
    /// Not in a file.
    Given,
}

impl Place {
    /// A template that is a whole file.
    pub(crate) fn file(file: &str) -> Place {
        Place {
            file: file.to_string(),
            line: 1,
            column: 1,
            layout: Layout::File,
            map: None,
        }
    }

    /// A template given in code, named `name`.
    pub(crate) fn given(name: &str) -> Place {
        Place {
            file: name.to_string(),
            line: 1,
            column: 1,
            layout: Layout::Given,
            map: None,
        }
    }

    /// A string value of a dict file whose value starts at `line`:`column` of `text`.
    #[cfg(test)]
    pub(crate) fn in_dict(file: &str, text: &str, line: usize, column: usize) -> Place {
        Place::in_dict_of(file, text, line, column, None)
    }

    /// [`Place::in_dict`] for the string `source`: a quoted scalar whose decoded text is
    /// `source` gets a position map through its escapes and folded lines.
    pub(crate) fn in_dict_of(
        file: &str,
        text: &str,
        line: usize,
        column: usize,
        source: Option<&str>,
    ) -> Place {
        let rest = text
            .lines()
            .nth(line.saturating_sub(1))
            .and_then(|l| l.get(l.char_indices().nth(column - 1).map_or(l.len(), |c| c.0)..))
            .unwrap_or("");
        let starts_block = block_starts_at(text, line, column);
        let layout = match rest.chars().next() {
            Some(c @ ('|' | '>')) => {
                let body = text
                    .lines()
                    .enumerate()
                    .skip(line)
                    .find(|(_, l)| !l.trim().is_empty());
                if let Some((i, l)) = body {
                    let indent = l.len() - l.trim_start().len();
                    let map = (c == '>')
                        .then(|| folded_map(text, i + 1, indent, source?))
                        .flatten();
                    return Place {
                        file: file.to_string(),
                        line: i + 1,
                        column: 1 + indent,
                        layout: Layout::Block { indent },
                        map: map.map(Arc::new),
                    };
                }
                Layout::Block { indent: 0 }
            }
            Some(q @ ('"' | '\'')) => {
                let map = source.and_then(|src| {
                    // `rest` is a slice of `text`: the scalar runs on from there.
                    let offset = (rest.as_ptr() as usize).checked_sub(text.as_ptr() as usize)?;
                    quoted_map(text.get(offset..)?, q, line, column, src)
                });
                return Place {
                    file: file.to_string(),
                    line,
                    column,
                    layout: Layout::Inline { quote: 1 },
                    map: map.map(Arc::new),
                };
            }
            _ if starts_block.is_some() => {
                let map = (starts_block == Some('>'))
                    .then(|| folded_map(text, line, column - 1, source?))
                    .flatten();
                return Place {
                    file: file.to_string(),
                    line,
                    column,
                    layout: Layout::Block { indent: column - 1 },
                    map: map.map(Arc::new),
                };
            }
            _ => Layout::Inline { quote: 0 },
        };
        Place {
            file: file.to_string(),
            line,
            column,
            layout,
            map: None,
        }
    }

    /// [`Place::in_dict`] with `starts`, the byte offset where each line of `text` starts:
    /// only the lines from the one before `line` are read, so placing every string of a big
    /// file costs time linear in the file.
    pub(crate) fn in_dict_indexed(
        file: &str,
        text: &str,
        starts: &[usize],
        line: usize,
        column: usize,
        source: &str,
    ) -> Place {
        let from = line.saturating_sub(2);
        let offset = starts.get(from).copied().unwrap_or(text.len());
        let mut place = Place::in_dict_of(
            file,
            text.get(offset..).unwrap_or(""),
            line - from,
            column,
            Some(source),
        );
        place.line += from;
        if let Some(map) = place.map.as_mut() {
            for at in Arc::make_mut(map).iter_mut().flatten() {
                at.0 += from;
            }
        }
        place
    }

    /// True when the template is a file of its own.
    pub fn is_file(&self) -> bool {
        self.layout == Layout::File
    }

    /// The file position of line `line`, column `column` of the template's text.
    pub fn at(&self, line: usize, column: usize) -> Location {
        if let Some(map) = &self.map {
            if let Some((l, c)) = mapped(map, line, column) {
                return Location {
                    file: self.file.clone(),
                    line: l,
                    column: c,
                };
            }
        }
        let (line, column) = match self.layout {
            Layout::File | Layout::Given => (line, column),
            Layout::Inline { quote } if line == 1 => (self.line, self.column + quote + column - 1),
            Layout::Inline { .. } => (self.line + line - 1, column),
            Layout::Block { indent } => (self.line + line - 1, indent + column),
        };
        Location {
            file: self.file.clone(),
            line,
            column,
        }
    }

    /// Where the template starts.
    pub fn start(&self) -> Location {
        self.at(1, 1)
    }
}

/// The file position of `line`:`column` of a template through its position map: past the
/// end of a line, counted on from its last character.
fn mapped(map: &[Vec<(usize, usize)>], line: usize, column: usize) -> Option<(usize, usize)> {
    let row = map.get(line.checked_sub(1)?)?;
    match row.get(column.checked_sub(1)?) {
        Some(&at) => Some(at),
        None => {
            let &(l, c) = row.last()?;
            Some((l, c + column - row.len()))
        }
    }
}

/// The position map of the quoted scalar (`quote` is `"` or `'`) that starts `raw`, which
/// starts at `line`:`column` of its file: the file position of each character of its decoded
/// text, line by line (a line's `\n` included). `None` when the decoding does not give
/// `source` (then positions are counted the plain way).
fn quoted_map(
    raw: &str,
    quote: char,
    line: usize,
    column: usize,
    source: &str,
) -> Option<PositionMap> {
    let mut chars = Chars::new(raw);
    if chars.at(0) != Some(quote) {
        return None;
    }
    let mut out = String::new();
    let mut rows: Vec<Vec<(usize, usize)>> = vec![Vec::new()];
    // Literal spaces and tabs not yet emitted: dropped before a folded line break.
    let mut pending: Vec<(char, (usize, usize))> = Vec::new();
    let (mut l, mut c) = (line, column + 1);
    let mut i = 1;
    let emit = |ch: char, at: (usize, usize), out: &mut String, rows: &mut Vec<Vec<_>>| {
        out.push(ch);
        if let Some(row) = rows.last_mut() {
            row.push(at);
        }
        if ch == '\n' {
            rows.push(Vec::new());
        }
    };
    let flush = |pending: &mut Vec<(char, (usize, usize))>, out: &mut String, rows: &mut Vec<_>| {
        for (ch, at) in pending.drain(..) {
            emit(ch, at, out, rows);
        }
    };
    loop {
        let ch = chars.at(i)?;
        match ch {
            _ if ch == quote => {
                if quote == '\'' && chars.at(i + 1) == Some('\'') {
                    flush(&mut pending, &mut out, &mut rows);
                    emit('\'', (l, c), &mut out, &mut rows);
                    i += 2;
                    c += 2;
                    continue;
                }
                flush(&mut pending, &mut out, &mut rows);
                break;
            }
            '\\' if quote == '"' => {
                flush(&mut pending, &mut out, &mut rows);
                let next = chars.at(i + 1)?;
                let at = (l, c);
                let (decoded, width) = match next {
                    '\n' | '\r' => {
                        // An escaped line break: joined without a space.
                        i += 1;
                        if next == '\r' && chars.at(i + 1) == Some('\n') {
                            i += 1;
                        }
                        i += 1;
                        l += 1;
                        c = 1;
                        while matches!(chars.at(i), Some(' ' | '\t')) {
                            i += 1;
                            c += 1;
                        }
                        continue;
                    }
                    '0' => ('\0', 2),
                    'a' => ('\u{7}', 2),
                    'b' => ('\u{8}', 2),
                    't' | '\t' => ('\t', 2),
                    'n' => ('\n', 2),
                    'v' => ('\u{b}', 2),
                    'f' => ('\u{c}', 2),
                    'r' => ('\r', 2),
                    'e' => ('\u{1b}', 2),
                    ' ' => (' ', 2),
                    '"' => ('"', 2),
                    '/' => ('/', 2),
                    '\\' => ('\\', 2),
                    'N' => ('\u{85}', 2),
                    '_' => ('\u{a0}', 2),
                    'L' => ('\u{2028}', 2),
                    'P' => ('\u{2029}', 2),
                    'x' | 'u' | 'U' => {
                        let n = match next {
                            'x' => 2,
                            'u' => 4,
                            _ => 8,
                        };
                        let hex: String = (i + 2..i + 2 + n)
                            .map(|k| chars.at(k))
                            .collect::<Option<String>>()?;
                        let code = u32::from_str_radix(&hex, 16).ok()?;
                        (char::from_u32(code)?, 2 + n)
                    }
                    _ => return None,
                };
                emit(decoded, at, &mut out, &mut rows);
                i += width;
                c += width;
            }
            '\n' | '\r' => {
                // A line break inside the scalar folds: trailing blanks dropped, then one
                // space, or one line break per empty line that follows.
                pending.clear();
                let at = (l, c);
                let mut breaks = 0;
                loop {
                    if chars.at(i) == Some('\r') {
                        i += 1;
                    }
                    if chars.at(i) == Some('\n') {
                        i += 1;
                    }
                    l += 1;
                    c = 1;
                    while matches!(chars.at(i), Some(' ' | '\t')) {
                        i += 1;
                        c += 1;
                    }
                    if matches!(chars.at(i), Some('\n' | '\r')) {
                        breaks += 1;
                        continue;
                    }
                    break;
                }
                if breaks == 0 {
                    emit(' ', at, &mut out, &mut rows);
                } else {
                    for _ in 0..breaks {
                        emit('\n', at, &mut out, &mut rows);
                    }
                }
            }
            ' ' | '\t' => {
                pending.push((ch, (l, c)));
                i += 1;
                c += 1;
            }
            _ => {
                flush(&mut pending, &mut out, &mut rows);
                emit(ch, (l, c), &mut out, &mut rows);
                i += 1;
                c += 1;
            }
        }
    }
    (out == source).then_some(rows)
}

/// The position map of the folded block scalar (`>`) of `text` whose first line is `line`,
/// its lines indented by `indent` columns: the file position of each character of its
/// decoded text, line by line. Lines fold into one another with a space; an empty line is a
/// line break, and a more indented line keeps its breaks. `None` when the decoding does not
/// give `source` (then positions are counted the plain way).
fn folded_map(text: &str, line: usize, indent: usize, source: &str) -> Option<PositionMap> {
    let mut out = String::new();
    let mut rows: Vec<Vec<(usize, usize)>> = vec![Vec::new()];
    let mut emit = |ch: char, at: (usize, usize), out: &mut String| {
        out.push(ch);
        if let Some(row) = rows.last_mut() {
            row.push(at);
        }
        if ch == '\n' {
            rows.push(Vec::new());
        }
    };
    // The end of the last line with text, whether it was more indented, and the empty
    // lines met since.
    let mut last: Option<((usize, usize), bool)> = None;
    let mut empty = 0;
    for (k, l) in text.lines().enumerate().skip(line - 1) {
        let at_line = k + 1;
        if l.trim().is_empty() {
            empty += 1;
            continue;
        }
        let lead = l.len() - l.trim_start().len();
        if lead < indent {
            break;
        }
        let content = &l[indent..];
        let more = content.starts_with([' ', '\t']);
        if let Some((end, was_more)) = last {
            let breaks = match (empty, was_more || more) {
                (0, false) => {
                    emit(' ', end, &mut out);
                    0
                }
                (n, false) => n,
                (n, true) => n + 1,
            };
            for _ in 0..breaks {
                emit('\n', end, &mut out);
            }
        }
        let mut column = indent + 1;
        for ch in content.chars() {
            emit(ch, (at_line, column), &mut out);
            column += 1;
        }
        last = Some(((at_line, column), more));
        empty = 0;
    }
    let (end, _) = last?;
    let body = source.trim_end_matches('\n');
    if out != body {
        return None;
    }
    for _ in body.len()..source.len() {
        emit('\n', end, &mut out);
    }
    Some(rows)
}

/// The characters of a text, decoded only as far as they are read: a quoted scalar is read up
/// to its closing quote, never to the end of the file it starts in.
struct Chars<'a> {
    rest: std::str::Chars<'a>,
    read: Vec<char>,
}

impl<'a> Chars<'a> {
    fn new(text: &'a str) -> Self {
        Chars {
            rest: text.chars(),
            read: Vec::new(),
        }
    }

    /// The character at index `i`, if the text has one.
    fn at(&mut self, i: usize) -> Option<char> {
        while self.read.len() <= i {
            self.read.push(self.rest.next()?);
        }
        Some(self.read[i])
    }
}

/// The indicator (`|` or `>`) of the block scalar whose text `line`:`column` starts: the
/// previous line ends with it (and chomping or indentation indicators), and only spaces come
/// before the text; `None` when no block scalar starts there.
fn block_starts_at(text: &str, line: usize, column: usize) -> Option<char> {
    let mut lines = text.lines().skip(line.saturating_sub(2));
    let (prev, this) = (lines.next()?, lines.next()?);
    let indicator = prev
        .trim_end()
        .trim_end_matches(|c: char| c == '-' || c == '+' || c.is_ascii_digit())
        .chars()
        .last()
        .filter(|c| matches!(c, '|' | '>'))?;
    (line > 1 && this.chars().take(column - 1).all(|c| c == ' ')).then_some(indicator)
}

/// `prompts/main/x.j2` for a file of its own, `prompts/t.yaml:3:12` inside a dict file.
impl fmt::Display for Place {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.layout {
            Layout::File | Layout::Given => f.write_str(&self.file),
            _ => write!(f, "{}:{}:{}", self.file, self.line, self.column),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn loc(line: usize, column: usize) -> Location {
        Location {
            file: "p.yaml".into(),
            line,
            column,
        }
    }

    #[test]
    fn positions_map_into_block_and_flow_scalars() {
        let text =
            "main:\n  a: \"x {{ y }}\"\n  b: |\n    one\n      {{ z }}\n  c: plain {{ w }}\n";
        let a = Place::in_dict("p.yaml", text, 2, 6);
        assert_eq!(a.at(1, 3), loc(2, 9));
        assert_eq!(a.to_string(), "p.yaml:2:6");
        let b = Place::in_dict("p.yaml", text, 3, 6);
        assert_eq!(b.start(), loc(4, 5));
        assert_eq!(b.at(2, 3), loc(5, 7));
        let c = Place::in_dict("p.yaml", text, 6, 6);
        assert_eq!(c.at(1, 7), loc(6, 12));
        assert_eq!(Place::file("p.j2").at(3, 4).line, 3);
    }

    #[test]
    fn positions_map_through_quoted_escapes_and_folds() {
        let text =
            "main:\n  a: \"x\\ny {{ z }}\\t\\\"q\\\" {{ w }}\"\n  b: 'it''s\n\n    {{ v }}'\n";
        let a = Place::in_dict_of("p.yaml", text, 2, 6, Some("x\ny {{ z }}\t\"q\" {{ w }}"));
        assert_eq!(a.at(1, 1), loc(2, 7));
        assert_eq!(a.at(2, 6), loc(2, 15));
        assert_eq!(a.at(2, 18), loc(2, 30));
        let b = Place::in_dict_of("p.yaml", text, 3, 6, Some("it's\n{{ v }}"));
        assert_eq!(b.at(1, 4), loc(3, 11));
        assert_eq!(b.at(2, 4), loc(5, 8));
        // A decoding that does not give the string falls back to counting.
        let c = Place::in_dict_of("p.yaml", text, 2, 6, Some("other"));
        assert_eq!(c.at(1, 3), loc(2, 9));
    }

    #[test]
    fn positions_map_through_folded_blocks() {
        let text = "main:\n  a: >\n    one\n    two\n\n    three\n      more\n    end {{ x\n";
        let source = "one two\nthree\n  more\nend {{ x\n";
        for (line, column) in [(2, 6), (3, 5)] {
            let a = Place::in_dict_of("p.yaml", text, line, column, Some(source));
            assert_eq!(a.at(1, 1), loc(3, 5));
            assert_eq!(a.at(1, 5), loc(4, 5));
            assert_eq!(a.at(2, 1), loc(6, 5));
            assert_eq!(a.at(3, 3), loc(7, 7));
            assert_eq!(a.at(4, 5), loc(8, 9));
        }
    }
}
