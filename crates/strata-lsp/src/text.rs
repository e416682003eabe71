//! Positions in a document's text: the protocol counts columns in UTF-16 code units, strata
//! counts lines and columns from 1 in characters, and edits are applied to bytes.

use lsp_types::{Position, Range, TextDocumentContentChangeEvent};

/// The byte offset of the start of line `line` (0-based) of `text`; the end of the text when
/// it has fewer lines.
fn line_start(text: &str, line: u32) -> usize {
    if line == 0 {
        return 0;
    }
    text.match_indices('\n')
        .nth(line as usize - 1)
        .map_or(text.len(), |(i, _)| i + 1)
}

/// The byte offset of protocol position `p` in `text` (a column past the line's end is its
/// end).
pub fn offset(text: &str, p: Position) -> usize {
    let start = line_start(text, p.line);
    let rest = &text[start..];
    let line = &rest[..rest.find('\n').unwrap_or(rest.len())];
    let mut units = 0u32;
    for (i, c) in line.char_indices() {
        if units >= p.character {
            return start + i;
        }
        units += c.len_utf16() as u32;
    }
    start + line.len()
}

/// The protocol position of byte `offset` of `text` (rounded down to a character).
pub fn position(text: &str, offset: usize) -> Position {
    let mut offset = offset.min(text.len());
    while !text.is_char_boundary(offset) {
        offset -= 1;
    }
    let before = &text[..offset];
    let line = before.matches('\n').count() as u32;
    let start = before.rfind('\n').map_or(0, |i| i + 1);
    let character = before[start..].chars().map(|c| c.len_utf16() as u32).sum();
    Position { line, character }
}

/// The byte offset of strata's 1-based `line` and `column` (in characters) in `text`.
pub fn offset_of_column(text: &str, line: usize, column: usize) -> usize {
    let start = line_start(
        text,
        u32::try_from(line.saturating_sub(1)).unwrap_or(u32::MAX),
    );
    let rest = &text[start..];
    let end = rest.find('\n').unwrap_or(rest.len());
    rest[..end]
        .char_indices()
        .nth(column.saturating_sub(1))
        .map_or(start + end, |(i, _)| start + i)
}

/// The range of `len` bytes from strata's `line` and `column` in `text`, cut at the line's
/// end (a diagnostic without a span covers one character).
pub fn range_at(text: &str, line: usize, column: usize, len: usize) -> Range {
    let start = offset_of_column(text, line, column);
    let line_end = text[start..].find('\n').map_or(text.len(), |i| start + i);
    let mut end = (start + len.max(1)).min(line_end);
    while !text.is_char_boundary(end) {
        end += 1;
    }
    Range {
        start: position(text, start),
        end: position(text, end),
    }
}

/// Applies one change of incremental sync (or the whole text, when it has no range).
pub fn apply(text: &mut String, change: TextDocumentContentChangeEvent) {
    match change.range {
        Some(r) => {
            let start = offset(text, r.start);
            let end = offset(text, r.end).max(start);
            text.replace_range(start..end, &change.text);
        }
        None => *text = change.text,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pos(line: u32, character: u32) -> Position {
        Position { line, character }
    }

    #[test]
    fn utf16_columns_map_to_bytes_and_back() {
        let text = "a: 𝄞x\nb: ü{y}\n";
        assert_eq!(offset(text, pos(0, 5)), 7);
        assert_eq!(position(text, 7), pos(0, 5));
        assert_eq!(offset(text, pos(1, 4)), 14);
        assert_eq!(position(text, 14), pos(1, 4));
        assert_eq!(offset(text, pos(1, 99)), 17);
        assert_eq!(offset(text, pos(9, 0)), text.len());
    }

    #[test]
    fn incremental_changes_edit_the_range() {
        let mut text = String::from("config:\n  args: [{nme}]\n");
        let change = |range: Option<Range>, new: &str| TextDocumentContentChangeEvent {
            range,
            range_length: None,
            text: new.to_string(),
        };
        apply(
            &mut text,
            change(
                Some(Range {
                    start: pos(1, 11),
                    end: pos(1, 12),
                }),
                "am",
            ),
        );
        assert_eq!(text, "config:\n  args: [{name}]\n");
        apply(&mut text, change(None, "x"));
        assert_eq!(text, "x");
    }

    #[test]
    fn strata_columns_count_characters() {
        let text = "é: {x}\nab\n";
        assert_eq!(offset_of_column(text, 1, 4), 4);
        assert_eq!(
            range_at(text, 1, 4, 3),
            Range {
                start: pos(0, 3),
                end: pos(0, 6)
            }
        );
        assert_eq!(
            range_at(text, 2, 1, 50),
            Range {
                start: pos(1, 0),
                end: pos(1, 2)
            }
        );
    }
}
