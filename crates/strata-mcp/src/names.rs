//! MCP names of strata's items. A tool name may hold ASCII letters, digits, `_`, `-` and `.`
//! (at most 128 characters, MCP 2025-11-25 "Tool names"), so an item is named as `strata
//! tools` and `strata check` name it with each `/` written `.`: tool `examples/echo` is
//! `examples.echo`, directive `directives/greet.md` is `directives.greet.md`, plan
//! `plans/diamond.yaml` is `plans.diamond.yaml` (a file keeps its extension, so a plan file
//! and a tool under `tools/plans/` never share a name). Any other character becomes `_`.

/// The longest tool name MCP allows.
pub(crate) const MAX_NAME: usize = 128;

/// The MCP name of the item at `path` (a tool id, or a file relative to the project); `None` when the name would be longer than MCP allows.
pub(crate) fn mcp_name(path: &str) -> Option<String> {
    let name: String = path
        .chars()
        .map(|c| match c {
            '/' => '.',
            c if c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.') => c,
            _ => '_',
        })
        .collect();
    (!name.is_empty() && name.len() <= MAX_NAME).then_some(name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slashes_become_dots_and_other_characters_underscores() {
        assert_eq!(mcp_name("examples/echo").unwrap(), "examples.echo");
        assert_eq!(mcp_name("directives/greet").unwrap(), "directives.greet");
        assert_eq!(mcp_name("a b/c+d-e_f.g").unwrap(), "a_b.c_d-e_f.g");
        assert_eq!(mcp_name("é").unwrap(), "_");
        assert!(mcp_name(&"x".repeat(129)).is_none());
        assert!(mcp_name("").is_none());
    }
}
