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
/// how the two lines disagree; when `line` is a key indented between two levels above it
/// (dedented by a space from its siblings), that line, and a hint naming both levels.
pub fn dedented_before(text: &str, message: &str, line: usize) -> Option<(usize, usize, String)> {
    if !MESSAGES.iter().any(|m| message.contains(m)) {
        return None;
    }
    dedented_key(text, line).or_else(|| between_levels(text, line))
}

/// `n space` or `n spaces`.
fn spaces(n: usize) -> String {
    format!("{n} space{}", if n == 1 { "" } else { "s" })
}

/// A key at `line` indented less than the lines before it and more than their parent: no
/// level it could belong to.
fn between_levels(text: &str, line: usize) -> Option<(usize, usize, String)> {
    let lines: Vec<&str> = text.lines().collect();
    let current = lines.get(line.checked_sub(1)?)?;
    let n = indent(current);
    let (key, _) = current.trim_start().split_once(':')?;
    if key.starts_with('-') || key.contains(' ') {
        return None;
    }
    // The levels above: each line holding something less indented than every one after it.
    let mut levels: Vec<(usize, &str)> = Vec::new();
    for l in lines[..line - 1].iter().rev() {
        let t = l.trim();
        if t.is_empty() || t.starts_with('#') {
            continue;
        }
        let i = indent(l);
        if levels.last().is_none_or(|(last, _)| i < *last) {
            levels.push((i, t.split_once(':').map_or(t, |(k, _)| k)));
        }
        if i == 0 {
            break;
        }
    }
    if levels.iter().any(|(i, _)| *i == n) {
        return None;
    }
    let (deep, sibling) = levels
        .iter()
        .filter(|(i, _)| *i > n)
        .min_by_key(|(i, _)| *i)?;
    let (shallow, parent) = levels
        .iter()
        .filter(|(i, _)| *i < n)
        .max_by_key(|(i, _)| *i)?;
    let hint = format!(
        "`{key}:` is indented {}, between `{sibling}:` above it ({deep}) and `{parent}:` ({shallow}): indent it {} to belong with `{sibling}:`, or {} to stand beside `{parent}:`",
        spaces(n),
        spaces(*deep),
        spaces(*shallow)
    );
    Some((line, n + 1, hint))
}

/// The `key: value` before `line`, indented less than `line`.
fn dedented_key(text: &str, line: usize) -> Option<(usize, usize, String)> {
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
    fn a_key_dedented_by_a_space_names_both_levels() {
        let text = "config:\n  command: echo\n args: [x]\n";
        let (line, column, hint) =
            dedented_before(text, "did not find expected key", 3).expect("found");
        assert_eq!((line, column), (3, 2));
        assert_eq!(
            hint,
            "`args:` is indented 1 space, between `command:` above it (2) and `config:` (0): indent it 2 spaces to belong with `command:`, or 0 spaces to stand beside `config:`"
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
