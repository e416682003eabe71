//! Small scans of a template's text for checks: where a variable is first read, and which
//! templates it includes by literal name.

/// The tags of a template: `(start, end)` byte ranges of every `{{ … }}` and `{% … %}`.
fn tags(source: &str) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut at = 0;
    while let Some(i) = source[at..].find('{') {
        let start = at + i;
        let close = match source.as_bytes().get(start + 1) {
            Some(b'{') => "}}",
            Some(b'%') => "%}",
            _ => {
                at = start + 1;
                continue;
            }
        };
        let end = source[start + 2..]
            .find(close)
            .map_or(source.len(), |j| start + 2 + j + 2);
        out.push((start, end));
        at = end;
    }
    out
}

fn is_ident(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

/// The 1-based line and column of the first read of `name` inside a tag.
pub(crate) fn first_use(source: &str, name: &str) -> Option<(usize, usize)> {
    for (start, end) in tags(source) {
        let tag = &source[start..end];
        let mut from = 0;
        while let Some(i) = tag[from..].find(name) {
            let at = from + i;
            let before = tag[..at].chars().next_back();
            let after = tag[at + name.len()..].chars().next();
            let quoted = tag[..at].matches(['\'', '"']).count() % 2 == 1;
            if !before.is_some_and(|c| is_ident(c) || c == '.')
                && !after.is_some_and(is_ident)
                && !quoted
            {
                return Some(position(source, start + at));
            }
            from = at + name.len();
        }
    }
    None
}

/// `(name, line, column)` of every `{% include/import/from/extends '<name>' %}`.
pub(crate) fn includes(source: &str) -> Vec<(String, usize, usize)> {
    let mut out = Vec::new();
    for (start, end) in tags(source) {
        let tag = &source[start..end];
        let Some(body) = tag.strip_prefix("{%") else {
            continue;
        };
        let body = body.trim_start_matches(['-', '+']).trim_start();
        let keyword = body.split_whitespace().next().unwrap_or("");
        if !matches!(keyword, "include" | "import" | "from" | "extends") {
            continue;
        }
        let rest = body[keyword.len()..].trim_start();
        let Some(quote) = rest.chars().next().filter(|c| *c == '\'' || *c == '"') else {
            continue;
        };
        if let Some(len) = rest[1..].find(quote) {
            // `rest` lies inside `source`: its address gives its offset.
            let offset = rest.as_ptr() as usize - source.as_ptr() as usize;
            let (line, column) = position(source, offset);
            out.push((rest[1..1 + len].to_string(), line, column));
        }
    }
    out
}

fn position(source: &str, offset: usize) -> (usize, usize) {
    let before = &source[..offset];
    let line = 1 + before.matches('\n').count();
    let start = before.rfind('\n').map_or(0, |i| i + 1);
    (line, 1 + before[start..].chars().count())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_uses_are_whole_names_inside_tags() {
        let src = "context {{ ctx }}\n{% if x %}{{ a.context }}{{ context }}{% endif %}";
        assert_eq!(first_use(src, "context"), Some((2, 29)));
        assert_eq!(first_use(src, "x"), Some((2, 7)));
        assert_eq!(first_use("{{ 'y' }}{{ y }}", "y"), Some((1, 13)));
        assert_eq!(first_use(src, "nothing"), None);
    }

    #[test]
    fn literal_includes_are_found() {
        let src = "a\n  {%- include 'main/part' %}{% import \"m/macros\" as m %}{% include name %}";
        assert_eq!(
            includes(src),
            [
                ("main/part".to_string(), 2, 15),
                ("m/macros".to_string(), 2, 39)
            ]
        );
    }
}
