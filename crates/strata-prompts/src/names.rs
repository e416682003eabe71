//! What may name a namespace, a template, a version or a component, and the keys a lookup
//! refuses because they would lead out of the tree.

use strata_core::{Error, ErrorKind};

use crate::LAYER;

/// True for a namespace, template or component name: `[A-Za-z0-9_-]+`.
pub(crate) fn is_segment(s: &str) -> bool {
    !s.is_empty()
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

/// True for a version: segments joined by dots (`enterprise`, `1.2`).
pub(crate) fn is_version(s: &str) -> bool {
    s.split('.').all(is_segment)
}

/// True for a template's stem: a name, optionally followed by `.` and a version.
pub(crate) fn is_stem(s: &str) -> bool {
    match s.split_once('.') {
        Some((name, version)) => is_segment(name) && is_version(version),
        None => is_segment(s),
    }
}

/// A stem cut into its name and version (`BrowseLink.enterprise` → `BrowseLink`,
/// `enterprise`): the first dot starts the version.
pub(crate) fn split_stem(stem: &str) -> (&str, Option<&str>) {
    match stem.split_once('.') {
        Some((name, version)) => (name, Some(version)),
        None => (stem, None),
    }
}

/// True when `text` could reach outside the tree if it were a path: absolute, a `.` or `..`
/// segment, a backslash or a NUL.
fn escapes(text: &str) -> bool {
    text.starts_with('/')
        || text.contains('\\')
        || text.contains('\0')
        || text.split('/').any(|s| s == "." || s == "..")
}

fn forbidden(what: &str, text: &str) -> Error {
    Error::new(
        LAYER,
        ErrorKind::Forbidden,
        format!("{what} `{text}` would lead outside the prompts tree"),
    )
    .with_hint("keys and settings name templates inside prompts/: no `..`, `/…` or `\\`")
}

fn invalid(what: &str, text: &str, rule: &str) -> Error {
    Error::new(
        LAYER,
        ErrorKind::Invalid,
        format!("{what} `{text}` is not a valid name"),
    )
    .with_hint(rule.to_string())
}

const NAME_RULE: &str = "names are letters, digits, `_` and `-`";

/// A key cut into its type (when it carries one) and its name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Key<'k> {
    /// The type the key names (`reflection` in `reflection/K`).
    pub type_: Option<&'k str>,
    /// The template's name (or stem).
    pub name: &'k str,
}

/// Parses a lookup key: `name`, `name.version` or `type/name`.
pub(crate) fn parse_key(key: &str) -> Result<Key<'_>, Error> {
    if escapes(key) {
        return Err(forbidden("key", key));
    }
    let (type_, name) = match key.split_once('/') {
        Some((t, n)) => (Some(t), n),
        None => (None, key),
    };
    if type_.is_some_and(|t| !is_segment(t)) || name.contains('/') {
        return Err(invalid(
            "key",
            key,
            "a key is `name` or `type/name` (the root space is a setting)",
        ));
    }
    if !is_stem(name) {
        return Err(invalid("key", key, NAME_RULE));
    }
    Ok(Key { type_, name })
}

/// Checks a root space (`action_agent`, `org/team`).
pub(crate) fn check_root_space(root: &str) -> Result<(), Error> {
    if escapes(root) {
        return Err(forbidden("root space", root));
    }
    if root.split('/').all(is_segment) {
        Ok(())
    } else {
        Err(invalid(
            "root space",
            root,
            "a root space is names joined by `/`; names are letters, digits, `_` and `-`",
        ))
    }
}

/// Checks a type or a default name.
pub(crate) fn check_name(what: &str, name: &str) -> Result<(), Error> {
    if escapes(name) {
        return Err(forbidden(what, name));
    }
    if is_segment(name) {
        Ok(())
    } else {
        Err(invalid(what, name, NAME_RULE))
    }
}

/// Checks a version.
pub(crate) fn check_version(version: &str) -> Result<(), Error> {
    if escapes(version) {
        return Err(forbidden("version", version));
    }
    if is_version(version) {
        Ok(())
    } else {
        Err(invalid(
            "version",
            version,
            "a version is names joined by `.`; names are letters, digits, `_` and `-`",
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_a_name_or_a_type_and_a_name() {
        assert_eq!(
            parse_key("BrowseLink").unwrap(),
            Key {
                type_: None,
                name: "BrowseLink"
            }
        );
        assert_eq!(
            parse_key("reflection/default").unwrap(),
            Key {
                type_: Some("reflection"),
                name: "default"
            }
        );
        assert_eq!(parse_key("Search.v1.2").unwrap().name, "Search.v1.2");
    }

    #[test]
    fn escaping_keys_are_forbidden_and_odd_ones_invalid() {
        for key in [
            "../../etc/passwd",
            "/etc/passwd",
            "main/../x",
            "..",
            "a\\b",
            "./x",
            "x\0",
        ] {
            let e = parse_key(key).unwrap_err();
            assert_eq!(e.kind(), ErrorKind::Forbidden, "{key}");
            assert_eq!(
                e.message(),
                format!("key `{key}` would lead outside the prompts tree")
            );
        }
        for key in ["a/b/c", "", "a b", "x.", "main/", "/"] {
            let kind = parse_key(key).unwrap_err().kind();
            let want = if key.starts_with('/') {
                ErrorKind::Forbidden
            } else {
                ErrorKind::Invalid
            };
            assert_eq!(kind, want, "{key:?}");
        }
    }

    #[test]
    fn settings_are_checked_like_keys() {
        assert!(check_root_space("org/team").is_ok());
        assert_eq!(
            check_root_space("org/../..").unwrap_err().kind(),
            ErrorKind::Forbidden
        );
        assert_eq!(
            check_name("type", "a/b").unwrap_err().kind(),
            ErrorKind::Invalid
        );
        assert_eq!(check_version("1.2").map_err(|e| e.kind()), Ok(()));
        assert_eq!(
            check_version("..").unwrap_err().kind(),
            ErrorKind::Forbidden
        );
        assert_eq!(
            split_stem("BrowseLink.enterprise"),
            ("BrowseLink", Some("enterprise"))
        );
        assert!(!is_stem(".x") && is_stem("a-b_c.d1"));
    }
}
