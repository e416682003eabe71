//! The placeholders written in a line of text, as an editor needs them while the file is
//! being typed (a half-written one does not hide the others): `${NAME…}` of layer E,
//! `{input:name…}` of layer I and `{name…}` of layer P, each with the byte range of its name.

use std::ops::Range;

/// The layer a placeholder belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Layer {
    /// `${NAME}`: an environment variable.
    Env,
    /// `{name}`: a parameter.
    Param,
    /// `{input:name}`: a directive input.
    Input,
}

/// One placeholder of a line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Placeholder {
    /// Its layer.
    pub layer: Layer,
    /// The name it reads.
    pub name: String,
    /// The bytes of the name in the line.
    pub name_at: Range<usize>,
    /// The bytes of the whole placeholder, to its closing brace (or the name's end).
    pub whole: Range<usize>,
}

fn name_end(line: &str, from: usize) -> usize {
    line[from..]
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .map_or(line.len(), |i| from + i)
}

/// Whether `rest`, what follows a name, goes on as a placeholder does: its closing brace,
/// or a default, optional or filter mark (`:` followed by a space is a YAML flow mapping's
/// key, `{type: string}`).
fn closes(rest: &str) -> bool {
    let mut chars = rest.chars();
    match chars.next() {
        Some('}' | '?' | '|') => true,
        Some(':') => chars.next().is_some_and(|c| !c.is_whitespace()),
        _ => false,
    }
}

/// The placeholders of `line`.
pub fn scan(line: &str) -> Vec<Placeholder> {
    let bytes = line.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while let Some(found) = line[i..].find('{') {
        let open = i + found;
        i = open + 1;
        if bytes.get(open + 1) == Some(&b'{') {
            i = open + 2;
            continue;
        }
        let dollar = open > 0 && bytes[open - 1] == b'$';
        if dollar && open > 1 && bytes[open - 2] == b'$' {
            continue;
        }
        let (layer, start) = if dollar {
            (Layer::Env, open + 1)
        } else if line[open + 1..].starts_with("input:") {
            (Layer::Input, open + 7)
        } else {
            (Layer::Param, open + 1)
        };
        let end = name_end(line, start);
        if end == start || !closes(&line[end..]) {
            continue;
        }
        let close = line[end..].find('}').map_or(end, |c| end + c + 1);
        let begin = if dollar { open - 1 } else { open };
        out.push(Placeholder {
            layer,
            name: line[start..end].to_string(),
            name_at: start..end,
            whole: begin..close,
        });
    }
    out
}

/// The placeholder of `line` whose name or braces hold byte `at`.
pub fn at(line: &str, at: usize) -> Option<Placeholder> {
    scan(line)
        .into_iter()
        .find(|p| p.whole.start <= at && at <= p.whole.end)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_layer_is_told_apart() {
        let line = r#"  args: ["{name}", "${HOME}", "{input:who|x}", "{{s.result}}", "$${NOT}", "{tool_dir}/{", {type: string}]"#;
        let found: Vec<(Layer, String, &str)> = scan(line)
            .into_iter()
            .map(|p| (p.layer, p.name.clone(), &line[p.whole.clone()]))
            .collect();
        assert_eq!(
            found,
            vec![
                (Layer::Param, "name".into(), "{name}"),
                (Layer::Env, "HOME".into(), "${HOME}"),
                (Layer::Input, "who".into(), "{input:who|x}"),
                (Layer::Param, "tool_dir".into(), "{tool_dir}"),
            ]
        );
        assert_eq!(at(line, 12).map(|p| p.name), Some("name".to_string()));
        assert_eq!(at(line, 5), None);
    }
}
