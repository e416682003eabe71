//! Positions in a RyeOS file, for warnings: byte offsets to 1-based line:column, the line of
//! a key of block YAML, and the signature comments RyeOS put before a file's contents.

/// The 1-based line and column (in characters) of byte `offset` of `text`.
pub(crate) fn position(text: &str, offset: usize) -> (usize, usize) {
    let offset = offset.min(text.len());
    let before = &text[..offset];
    let line = before.matches('\n').count() + 1;
    let line_start = before.rfind('\n').map_or(0, |n| n + 1);
    (line, before[line_start..].chars().count() + 1)
}

/// Whether `line` is a RyeOS signature or unsigned marker comment (`# rye:signed:…`,
/// `<!-- rye:signed:…`, `<!-- ryeos:signed:… -->`, `<!-- rye:unsigned -->`, `<!-- -->`).
pub(crate) fn is_signature_line(line: &str) -> bool {
    let t = line.trim();
    let inner = t
        .strip_prefix("<!--")
        .map(|r| r.trim_end_matches("-->").trim())
        .or_else(|| t.strip_prefix('#').map(str::trim));
    match inner {
        Some(i) => {
            (i.is_empty() && t.starts_with("<!--"))
                || i.starts_with("rye:signed:")
                || i.starts_with("ryeos:signed:")
                || i == "rye:unsigned"
                || i == "ryeos:unsigned"
        }
        None => false,
    }
}

/// The length of the signature comments (and blank lines) that open `text`.
pub(crate) fn leading_signature_len(text: &str) -> usize {
    let mut len = 0;
    let mut seen = false;
    for line in text.split_inclusive('\n') {
        if is_signature_line(line) {
            seen = true;
        } else if !(seen && line.trim().is_empty()) {
            break;
        }
        len += line.len();
    }
    len
}

/// The 1-based line:column of the key at `path` of the block YAML starting at byte `from` of
/// `text` (each key searched for inside the block of the previous one); the deepest key found
/// when the path goes further than the text shows, (0, 0) when not even the first is found.
pub(crate) fn yaml_key_position(text: &str, from: usize, path: &[&str]) -> (usize, usize) {
    let mut found = (0, 0);
    // The parent's indentation (None: the top level) and the line to search from.
    let mut parent: Option<usize> = None;
    let mut offset = from.min(text.len());
    let mut top: Option<usize> = None;
    'keys: for key in path {
        let mut off = offset;
        for line in text[offset..].split_inclusive('\n') {
            let line_off = off;
            off += line.len();
            let content = line.trim_end();
            let stripped = content.trim_start();
            if stripped.is_empty() || stripped.starts_with('#') {
                continue;
            }
            let indent = content.len() - stripped.len();
            match parent {
                Some(p) if indent <= p => break 'keys,
                None => {
                    let t = *top.get_or_insert(indent);
                    if indent > t {
                        continue;
                    }
                }
                _ => {}
            }
            let (dash, after) = match stripped.strip_prefix("- ") {
                Some(a) => (2 + (a.len() - a.trim_start().len()), a.trim_start()),
                None => (0, stripped),
            };
            let unquoted = ['"', '\''].iter().find_map(|q| {
                after
                    .strip_prefix(*q)
                    .and_then(|a| a.strip_prefix(*key))
                    .and_then(|a| a.strip_prefix(*q))
            });
            let unquoted = unquoted.or_else(|| after.strip_prefix(*key));
            if unquoted.is_some_and(|a| a.starts_with(':')) {
                let col = text[line_off..line_off + indent + dash].chars().count() + 1;
                found = (position(text, line_off).0, col);
                parent = Some(indent + dash);
                offset = off;
                continue 'keys;
            }
        }
        break;
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_found_by_indentation() {
        let text = "a: 1\nconfig:\n  x: 2\n  'args':\n    - y\nargs: 3\n";
        assert_eq!(yaml_key_position(text, 0, &["config", "args"]), (4, 3));
        assert_eq!(yaml_key_position(text, 0, &["args"]), (6, 1));
        assert_eq!(yaml_key_position(text, 0, &["nope"]), (0, 0));
        assert_eq!(yaml_key_position(text, 0, &["config", "nope"]), (2, 1));
    }

    #[test]
    fn positions_are_one_based() {
        assert_eq!(position("ab\ncd", 0), (1, 1));
        assert_eq!(position("ab\ncd", 4), (2, 2));
        assert_eq!(position("é\nx", 3), (2, 1));
    }

    #[test]
    fn signature_lines_are_skipped() {
        let t = "<!-- rye:signed:2026:abc:def\n<!-- rye:unsigned -->\n\n# Title\n";
        assert_eq!(&t[leading_signature_len(t)..], "# Title\n");
        let h = "<!-- ryeos:signed:x -->\n---\nname: a\n---\n";
        assert_eq!(&h[leading_signature_len(h)..], "---\nname: a\n---\n");
        assert_eq!(leading_signature_len("# Title\n"), 0);
        assert!(is_signature_line("# rye:signed:2026-04-09T00:59:52Z:3b0f"));
        assert!(is_signature_line("<!-- -->"));
        assert!(!is_signature_line("<!-- a note -->"));
    }

    #[test]
    fn yaml_keys_are_located_inside_their_parent() {
        let t =
            "a: 1\nconfig:\n  nodes:\n    x:\n      action: 1\n    y:\n      next: z\nnodes: 2\n";
        assert_eq!(yaml_key_position(t, 0, &["config"]), (2, 1));
        assert_eq!(
            yaml_key_position(t, 0, &["config", "nodes", "y", "next"]),
            (7, 7)
        );
        assert_eq!(yaml_key_position(t, 0, &["nodes"]), (8, 1));
        assert_eq!(yaml_key_position(t, 0, &["config", "nodes", "q"]), (3, 3));
        assert_eq!(yaml_key_position(t, 0, &["zz"]), (0, 0));
        let l = "hooks:\n  - id: \"a\"\n    event: \"error\"\n  - id: b\n";
        assert_eq!(yaml_key_position(l, 0, &["hooks", "id"]), (2, 5));
    }
}
