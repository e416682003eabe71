//! Caller text inside messages: errors quote a caller's parameter, input or option so that a
//! person can find it, but never whole (100 KB in, 100 KB out) and never raw (an escape
//! sequence would drive the terminal that shows the error).

/// The most characters of caller text a message quotes.
pub const SHOWN_CHARS: usize = 64;

/// `text` as a terminal may show it: every control character escaped (`\n`, `\r`,
/// `\u{1b}`), nothing cut. The one function every printer of tool text (stderr tails,
/// outputs, messages) goes through, so that a tool cannot retitle, wipe or overwrite the
/// terminal, nor forge a progress line. Text without control characters is borrowed.
pub fn escaped(text: &str) -> std::borrow::Cow<'_, str> {
    if !text.chars().any(char::is_control) {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if c.is_control() {
            out.extend(c.escape_debug());
        } else {
            out.push(c);
        }
    }
    std::borrow::Cow::Owned(out)
}

/// `text` as a message quotes it: control characters escaped (`\n`, `\u{1b}`), and cut
/// after [`SHOWN_CHARS`] characters, marked with `…`.
pub fn shown(text: &str) -> String {
    let mut out = String::with_capacity(text.len().min(SHOWN_CHARS * 2));
    for (i, c) in text.chars().enumerate() {
        if i == SHOWN_CHARS {
            out.push('…');
            break;
        }
        if c.is_control() {
            out.extend(c.escape_debug());
        } else {
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_characters_are_escaped_and_long_text_cut() {
        assert_eq!(shown("plain text"), "plain text");
        assert_eq!(
            shown("a\nb\t\u{1b}[31m\u{7f}"),
            "a\\nb\\t\\u{1b}[31m\\u{7f}"
        );
        let long = "é".repeat(100);
        assert_eq!(shown(&long), format!("{}…", "é".repeat(64)));
        assert_eq!(shown(&"x".repeat(64)), "x".repeat(64));
        assert_eq!(escaped("a\u{1b}]0;T\u{7}\rb"), "a\\u{1b}]0;T\\u{7}\\rb");
        assert!(matches!(
            escaped("plain"),
            std::borrow::Cow::Borrowed("plain")
        ));
    }
}
