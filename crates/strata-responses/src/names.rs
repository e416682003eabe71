//! Naming rules for response fields: a field is a dotted name (`account.balance`) whose
//! parts are identifiers and not Jinja keywords; its first part says which source serves it.

pub use strata_tools::response_fields::{name_problem, KEYWORDS};

/// The standard fields' namespace: `std.customer.name`.
pub const STD: &str = "std";

/// The generated fields' namespace: `generative.closing_remark`.
pub const GENERATIVE: &str = "generative";

/// The standard fields a caller may give, under `std.`.
pub const STD_FIELDS: [&str; 4] = ["customer", "agent", "variables", "missing_params"];

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
    fn the_first_part_names_the_source() {
        assert!(is_std("std.customer.name"));
        assert!(!is_std("standard.x"));
        assert!(is_generative("generative.greeting"));
        assert!(!is_generative("generative"));
        assert_eq!(head("account.balance"), "account");
    }
}
