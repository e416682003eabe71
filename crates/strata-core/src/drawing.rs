//! What the drawings of graphs and plans share: their formats, and text quoted for each.

/// A drawing format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// A Mermaid `flowchart`.
    Mermaid,
    /// A Graphviz `digraph`.
    Dot,
}

/// `s` inside a double-quoted Mermaid label: quotes become `#quot;`.
pub fn mermaid_text(s: &str) -> String {
    s.replace('"', "#quot;")
}

/// `s` inside a double-quoted Graphviz DOT string: backslashes and quotes escaped.
pub fn dot_text(s: &str) -> String {
    s.replace('\\', "\\\\").replace('"', "\\\"")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quotes_are_escaped_for_each_format() {
        assert_eq!(mermaid_text(r#"a "b" \c"#), r#"a #quot;b#quot; \c"#);
        assert_eq!(dot_text(r#"a "b" \c"#), r#"a \"b\" \\c"#);
    }
}
