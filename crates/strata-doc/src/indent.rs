//! The line a YAML indentation error really comes from. The parser notices a line indented
//! too little only at the line after it, which then looks indented too deep; the line to
//! fix is usually the `key: value` before it.

/// The parser's messages that a misindented line before the one reported can cause.
const MESSAGES: [&str; 2] = [
    "did not find expected key",
    "mapping values are not allowed in this context",
];

/// For a YAML error `message` at `line`: when the previous line holding something is a
/// `key: value` indented less than `line`, that line's number, its column, and a hint saying
/// how the two lines disagree.
pub fn dedented_before(text: &str, message: &str, line: usize) -> Option<(usize, usize, String)> {
    if !MESSAGES.iter().any(|m| message.starts_with(m)) {
        return None;
    }
    let lines: Vec<&str> = text.lines().collect();
    let current = lines.get(line.checked_sub(1)?)?;
    let (k, before) = lines[..line - 1].iter().enumerate().rev().find(|(_, l)| {
        let t = l.trim();
        !t.is_empty() && !t.starts_with('#')
    })?;
    let (deep, shallow) = (indent(current), indent(before));
    let (key, value) = before.trim_start().split_once(':')?;
    if deep <= shallow || key.starts_with('-') || key.contains(' ') || value.trim().is_empty() {
        return None;
    }
    let hint = format!(
        "`{key}:` is indented {shallow} spaces and line {line} below it {deep}: indent `{key}:` as the lines it belongs with, or line {line} as `{key}:`"
    );
    Some((k + 1, shallow + 1, hint))
}

fn indent(line: &str) -> usize {
    line.len() - line.trim_start_matches(' ').len()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_dedented_key_is_the_line_to_fix() {
        let text = "a:\n  b:\n  c: 1\n    d: 2\n";
        let (line, column, hint) =
            dedented_before(text, "did not find expected key", 4).expect("found");
        assert_eq!((line, column), (3, 3));
        assert_eq!(
            hint,
            "`c:` is indented 2 spaces and line 4 below it 4: indent `c:` as the lines it belongs with, or line 4 as `c:`"
        );
    }

    #[test]
    fn other_errors_and_other_shapes_are_left_alone() {
        let text = "a:\n  b:\n\n  # note\n    d: 2\n";
        assert_eq!(dedented_before(text, "did not find expected key", 5), None);
        assert_eq!(dedented_before("a: 1\n  b: 2\n", "found a tab", 2), None);
        assert_eq!(
            dedented_before("a: [\n", "did not find expected key", 9),
            None
        );
    }
}
