//! Naming rules for response fields: a field is a dotted name (`account.balance`) whose
//! parts are identifiers and not Jinja keywords; its first part says which source serves it.

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

/// The standard fields' namespace: `std.customer.name`.
pub const STD: &str = "std";

/// The generated fields' namespace: `generative.closing_remark`.
pub const GENERATIVE: &str = "generative";

/// The standard fields a caller may give, under `std.`.
pub const STD_FIELDS: [&str; 4] = ["customer", "agent", "variables", "missing_params"];

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

/// The first dotted part of a field name.
pub fn head(name: &str) -> &str {
    name.split('.').next().unwrap_or(name)
}

/// True for a standard field (`std.…`).
pub fn is_std(name: &str) -> bool {
    head(name) == STD
}

/// True for a generated field (`generative.…`).
pub fn is_generative(name: &str) -> bool {
    head(name) == GENERATIVE && name.len() > GENERATIVE.len()
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

    #[test]
    fn the_first_part_names_the_source() {
        assert!(is_std("std.customer.name"));
        assert!(!is_std("standard.x"));
        assert!(is_generative("generative.greeting"));
        assert!(!is_generative("generative"));
        assert_eq!(head("account.balance"), "account");
    }
}
