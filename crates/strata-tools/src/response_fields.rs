//! The naming rule of canned-response fields (SPEC §7), shared by the tool files that declare
//! the fields their results provide (`response_fields`) and the responses that read them: a
//! field is a dotted name (`account.balance`) whose parts are identifiers and not Jinja
//! keywords.

use strata_core::walk::is_ident;

/// Words that Jinja reads as syntax (operators, constants, statements) or that it defines
/// inside templates (`loop`, `self`): a field part named so cannot be written portably.
pub const KEYWORDS: [&str; 44] = [
    "and",
    "or",
    "not",
    "in",
    "is",
    "if",
    "else",
    "elif",
    "endif",
    "for",
    "endfor",
    "true",
    "false",
    "none",
    "True",
    "False",
    "None",
    "set",
    "endset",
    "block",
    "endblock",
    "macro",
    "endmacro",
    "call",
    "endcall",
    "filter",
    "endfilter",
    "with",
    "endwith",
    "include",
    "import",
    "from",
    "extends",
    "raw",
    "endraw",
    "autoescape",
    "endautoescape",
    "loop",
    "self",
    "super",
    "recursive",
    "continue",
    "break",
    "do",
];

/// Why `name` cannot name a response field, or `None` when it can: every dotted part must be
/// an identifier (`[A-Za-z_][A-Za-z0-9_]*`) and not a Jinja keyword.
pub fn name_problem(name: &str) -> Option<String> {
    for part in name.split('.') {
        if KEYWORDS.contains(&part) {
            return Some(if part == name {
                format!("`{name}` is a Jinja keyword, not a field name")
            } else {
                format!("`{name}`: `{part}` is a Jinja keyword, not a field name")
            });
        }
        if !is_ident(part) {
            return Some(format!(
                "`{name}` is not a field name: each dotted part is letters, digits and `_`, not starting with a digit"
            ));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parts_must_be_identifiers_and_not_keywords() {
        assert_eq!(name_problem("account.balance"), None);
        assert_eq!(name_problem("std.missing_params"), None);
        assert_eq!(
            name_problem("in").as_deref(),
            Some("`in` is a Jinja keyword, not a field name")
        );
        assert_eq!(
            name_problem("account.if").as_deref(),
            Some("`account.if`: `if` is a Jinja keyword, not a field name")
        );
        assert_eq!(
            name_problem("account.2x").as_deref(),
            Some("`account.2x` is not a field name: each dotted part is letters, digits and `_`, not starting with a digit")
        );
        assert!(name_problem("a..b").is_some());
    }
}
