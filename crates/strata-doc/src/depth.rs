//! A linear pre-scan of YAML text for the depth of its flow collections (`[…]`, `{…}`).
//!
//! The YAML scanner reads tokens ahead of the parser's events and stops nesting only at its
//! own limit of 255 flow levels (with a bare "recursion limit exceeded"; an earlier scanner
//! spent time proportional to the depth on every token: 100,000 nested `[` took minutes).
//! This scan finds nesting past strata's limit first, and names the bracket. It follows the parts of YAML's lexical rules that decide whether a bracket is a
//! flow indicator — quoted scalars, comments, block scalars, brackets inside plain scalars of
//! block context, lines that may continue a plain scalar — and errs on the side of not
//! counting, so it never refuses a document the parser would accept (nesting past the limit
//! is refused by the parser anyway). Where it does not count, the parser meets the brackets
//! as scalar text, or as a structure error within its 1024-character look-ahead for keys, so
//! it cannot be led into deep nesting there.

/// The byte offset of the first flow-collection opener nested deeper than `limit`, if any.
pub(crate) fn flow_too_deep(text: &str, limit: usize) -> Option<usize> {
    scan::<true>(text, limit)
}

/// [`flow_too_deep`], a byte at a time unless `SKIP`: with it, the text of a plain scalar of
/// block context, where only a line break, a comment or a `:` can change anything, is
/// passed over with `memchr` (the two are held equal by a test).
fn scan<const SKIP: bool>(text: &str, limit: usize) -> Option<usize> {
    let b = text.as_bytes();
    let n = b.len();
    let mut depth = 0usize;
    // True where a new node may start: a quote there opens a quoted scalar, and in block
    // context a bracket there opens a flow collection.
    let mut node_start = true;
    // True inside a plain scalar of block context: a next line may continue it, and its
    // brackets are then text.
    let mut in_plain = false;
    let mut i = 0;
    let mut line_start = 0;
    while i < n {
        let c = b[i];
        let after_space = i == 0 || matches!(b[i - 1], b' ' | b'\t' | b'\n' | b'\r');
        match c {
            b'\n' => {
                line_start = i + 1;
                if depth == 0 {
                    node_start = !in_plain;
                }
            }
            b' ' | b'\t' | b'\r' => {}
            // A document marker may be followed by a node on the same line (`--- |`).
            b'-' if i == line_start && b[i..].starts_with(b"---") && is_blank(b, i + 3) => {
                node_start = true;
                in_plain = false;
                i += 3;
                continue;
            }
            b'#' if after_space => {
                in_plain = false;
                i = memchr::memchr(b'\n', &b[i..]).map_or(n, |k| i + k);
                continue;
            }
            b'"' | b'\'' if node_start => {
                i = skip_quoted(b, i);
                node_start = false;
                in_plain = false;
                continue;
            }
            b'[' | b'{' if depth > 0 || node_start => {
                in_plain = false;
                depth += 1;
                if depth > limit {
                    return Some(i);
                }
                node_start = true;
            }
            b']' | b'}' if depth > 0 => {
                depth -= 1;
                node_start = false;
            }
            b',' if depth > 0 => node_start = true,
            b':' | b'-' | b'?' if is_blank(b, i + 1) && (node_start || c == b':') => {
                node_start = true;
                in_plain = false;
            }
            b':' if depth > 0 && matches!(b.get(i + 1), Some(b'[' | b'{')) => node_start = true,
            b'|' | b'>' if depth == 0 && node_start => {
                i = skip_block_scalar(b, i, line_start);
                line_start = i;
                node_start = true;
                in_plain = false;
                continue;
            }
            // Anchors and tags come before a node; an alias is one.
            b'&' | b'!' if node_start => {
                while i < n
                    && !matches!(
                        b[i],
                        b' ' | b'\t' | b'\n' | b'\r' | b',' | b'[' | b']' | b'{' | b'}'
                    )
                {
                    i += 1;
                }
                continue;
            }
            _ => {
                node_start = false;
                in_plain = depth == 0;
                if SKIP && in_plain {
                    i = memchr::memchr3(b'\n', b'#', b':', &b[i + 1..]).map_or(n, |k| i + 1 + k);
                    continue;
                }
            }
        }
        i += 1;
    }
    None
}

fn is_blank(b: &[u8], i: usize) -> bool {
    matches!(b.get(i), None | Some(b' ' | b'\t' | b'\n' | b'\r'))
}

/// The offset just past the quoted scalar opened at `i` (or the end of the text).
fn skip_quoted(b: &[u8], i: usize) -> usize {
    let quote = b[i];
    let mut j = i + 1;
    loop {
        if j >= b.len() {
            return b.len();
        }
        let next = if quote == b'"' {
            memchr::memchr2(b'"', b'\\', &b[j..])
        } else {
            memchr::memchr(b'\'', &b[j..])
        };
        let Some(k) = next else { return b.len() };
        j += k;
        if b[j] == b'\\' || (quote == b'\'' && b.get(j + 1) == Some(&b'\'')) {
            // An escape in double quotes; `''` is an escaped quote inside single quotes.
            j += 2;
        } else {
            return j + 1;
        }
    }
}

/// The offset of the first line after the block scalar whose indicator is at `i`: its
/// content is every following line that is blank or indented more than the indicator's line
/// — or, for a block scalar that may be the document itself (its indicator first on its line
/// or after `---`), the rest of the text (the parser reads even a `---` line into it).
fn skip_block_scalar(b: &[u8], i: usize, line_start: usize) -> usize {
    if i == line_start || b[line_start..].starts_with(b"---") {
        return b.len();
    }
    let indent = b[line_start..].iter().take_while(|&&c| c == b' ').count();
    let mut j = memchr::memchr(b'\n', &b[i..]).map_or(b.len(), |k| i + k + 1);
    while j < b.len() {
        let spaces = b[j..].iter().take_while(|&&c| c == b' ').count();
        let blank = matches!(b.get(j + spaces), None | Some(b'\n' | b'\r'));
        if !blank && spaces <= indent {
            break;
        }
        j = memchr::memchr(b'\n', &b[j..]).map_or(b.len(), |k| j + k + 1);
    }
    j
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn a_quoted_scalar_ends_at_its_closing_quote() {
        assert_eq!(skip_quoted(br#""a\"b" c"#, 0), 6);
        assert_eq!(skip_quoted(b"'a''b' c", 0), 6);
        assert_eq!(skip_quoted(br#""a\"#, 0), 3);
        assert_eq!(skip_quoted(b"'a''", 0), 4);
        assert_eq!(skip_quoted(b"\"abc", 0), 4);
    }

    proptest! {
        #![proptest_config(ProptestConfig { failure_persistence: None, ..ProptestConfig::default() })]

        /// Passing over plain scalars finds what reading every byte finds.
        #[test]
        fn skipping_plain_text_finds_what_reading_every_byte_finds(
            limit in 0usize..6,
            parts in prop::collection::vec(prop::sample::select(vec![
                "[", "]", "{", "}", "a", "b c", ": ", ":", "- ", "-", "\n", "  ", "\"", "'",
                "''", "\\", " #", "#", "|", ">-", ",", "? ", "&x ", "!t ", "*x", "---\n",
                "--- ", "...\n", "k: v", "x:y", "\t",
            ]), 0..200),
        ) {
            let text = parts.concat();
            prop_assert_eq!(scan::<true>(&text, limit), scan::<false>(&text, limit));
        }
    }
}
