//! Names in a manifest: step and node ids as Argo task names (mapped, with collisions
//! refused), workflow names, namespaces, parameter names and container images, each checked
//! with a message that says what the rule is.

use std::collections::HashMap;

use strata_core::{Error, ErrorKind};

use crate::ARGO;

/// The longest Argo task or template name.
pub const TASK_NAME_MAX: usize = 128;

/// The longest workflow name Argo accepts (it becomes a Kubernetes label value).
pub const WORKFLOW_NAME_MAX: usize = 63;

fn invalid(message: String, hint: &str) -> Error {
    Error::new(ARGO, ErrorKind::Invalid, message).with_hint(hint)
}

/// The Argo task name of a step or node id: `_` becomes `-`, and an id that then starts
/// with `-` gets `x` in front (`_setup` → `x-setup`, `find_john` → `find-john`). Letters keep
/// their case. Other characters and names longer than Argo's 128 are refused. The id itself
/// travels in every task's command, so a task always maps back to its step.
pub fn task_name(what: &str, id: &str) -> Result<String, Error> {
    let mut out = String::with_capacity(id.len() + 1);
    for c in id.chars() {
        match c {
            'a'..='z' | 'A'..='Z' | '0'..='9' | '-' => out.push(c),
            '_' => out.push('-'),
            other => return Err(invalid(
                format!("{what} `{id}` cannot be an Argo task name: it holds {other:?}"),
                "task names are letters, digits and `-`; strata maps `_` to `-` and nothing else",
            )),
        }
    }
    if !out.starts_with(|c: char| c.is_ascii_alphanumeric()) {
        out.insert(0, 'x');
    }
    if out.len() > TASK_NAME_MAX {
        return Err(invalid(
            format!(
                "{what} `{id}` is {} characters long; an Argo task name has at most {TASK_NAME_MAX}",
                id.chars().count()
            ),
            "shorten the id",
        ));
    }
    Ok(out)
}

/// The task names of `ids` (in order), refusing two ids that map to one name and names that
/// `reserved` already uses; an error comes with the position of the id it is about.
pub fn task_names<'a>(
    what: &str,
    ids: impl IntoIterator<Item = &'a str>,
    reserved: &[&str],
) -> Result<Vec<String>, (usize, Error)> {
    let mut seen: HashMap<String, &str> = HashMap::new();
    let mut out = Vec::new();
    for (i, id) in ids.into_iter().enumerate() {
        let name = task_name(what, id).map_err(|e| (i, e))?;
        if let Some(first) = seen.get(&name) {
            return Err((
                i,
                Error::new(
                    ARGO,
                    ErrorKind::DuplicateId,
                    format!("{what}s `{first}` and `{id}` both become the Argo task `{name}`"),
                )
                .with_hint("task names map `_` to `-`; rename one of them"),
            ));
        }
        if reserved.contains(&name.as_str()) {
            return Err((i, Error::new(
                ARGO,
                ErrorKind::DuplicateId,
                format!("{what} `{id}` becomes the Argo task `{name}`, a name the export uses for itself"),
            )
            .with_hint("rename it")));
        }
        seen.insert(name.clone(), id);
        out.push(name);
    }
    Ok(out)
}

/// Refuses a name that two of `names` share (tasks an export makes for one node); the error
/// comes with the position of the second.
pub fn distinct(what: &str, names: &[String]) -> Result<(), (usize, Error)> {
    for (i, n) in names.iter().enumerate() {
        if names[..i].contains(n) {
            return Err((i, Error::new(
                ARGO,
                ErrorKind::DuplicateId,
                format!("two {what}s would be named `{n}`"),
            )
            .with_hint("a foreach node `x` has the tasks `x`, `x-each` and `x-collect`; rename the node that clashes")));
        }
    }
    Ok(())
}

/// True for a DNS-1123 label: lower-case letters, digits and `-`, starting and ending with a
/// letter or digit, at most `max` characters.
fn dns_label(s: &str, max: usize) -> bool {
    !s.is_empty()
        && s.len() <= max
        && s.bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        && !s.starts_with('-')
        && !s.ends_with('-')
}

/// Checks a workflow name (`--name`): a DNS-1123 label of at most 63 characters.
pub fn check_workflow_name(name: &str) -> Result<(), Error> {
    if dns_label(name, WORKFLOW_NAME_MAX) {
        return Ok(());
    }
    Err(invalid(
        format!("`{name}` cannot name a workflow"),
        "a workflow name is 1 to 63 lower-case letters, digits and `-`, starting and ending with a letter or digit",
    ))
}

/// Checks a namespace (`--namespace`): a DNS-1123 label of at most 63 characters.
pub fn check_namespace(ns: &str) -> Result<(), Error> {
    if dns_label(ns, 63) {
        return Ok(());
    }
    Err(invalid(
        format!("`{ns}` cannot name a Kubernetes namespace"),
        "a namespace is 1 to 63 lower-case letters, digits and `-`, starting and ending with a letter or digit",
    ))
}

/// Checks a Kubernetes Secret's name (`--secret`): a DNS-1123 subdomain.
pub fn check_secret_name(name: &str) -> Result<(), Error> {
    let ok = name.len() <= 253 && name.split('.').all(|part| dns_label(part, 63));
    if ok {
        return Ok(());
    }
    Err(invalid(
        format!("`{name}` cannot name a Kubernetes Secret"),
        "a Secret's name is lower-case letters, digits, `-` and `.`, each part starting and ending with a letter or digit",
    ))
}

/// A prefix for `metadata.generateName` made from a file name (`plans/diamond.yaml` →
/// `diamond-`): lower-cased, other characters as `-`, at most 57 characters before the `-`.
pub fn generate_name(file: &str) -> String {
    let stem = std::path::Path::new(file)
        .file_stem()
        .and_then(|s| s.to_str())
        .unwrap_or("strata");
    let mut out = String::new();
    for c in stem.chars() {
        let c = c.to_ascii_lowercase();
        if c.is_ascii_lowercase() || c.is_ascii_digit() {
            out.push(c);
        } else if !out.ends_with('-') && !out.is_empty() {
            out.push('-');
        }
    }
    let mut out: String = out.trim_end_matches('-').chars().take(57).collect();
    out = out.trim_end_matches('-').to_string();
    if out.is_empty() {
        out.push_str("strata");
    }
    out.push('-');
    out
}

/// Checks an Argo parameter name (a user value's name): letters, digits, `_` and `-`.
pub fn check_parameter_name(what: &str, name: &str) -> Result<(), Error> {
    let ok = !name.is_empty()
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-');
    if ok {
        return Ok(());
    }
    Err(invalid(
        format!("{what} `{name}` cannot be an Argo parameter name"),
        "Argo parameter names are ASCII letters, digits, `_` and `-`",
    ))
}

/// Checks a container image reference (`--image`): `[registry[:port]/]path[:tag][@digest]`
/// of letters, digits and `._-/:@+`, with no space or control character.
pub fn check_image(image: &str) -> Result<(), Error> {
    let hint =
        "an image is a reference such as `registry.example.com/strata:0.1.0`: no spaces, no quotes";
    if image.is_empty() {
        return Err(invalid("the image is empty".into(), hint));
    }
    if let Some(c) = image.chars().find(|c| c.is_whitespace() || c.is_control()) {
        return Err(invalid(
            format!("the image `{image}` holds {c:?}; an image reference has no spaces"),
            hint,
        ));
    }
    if let Some(c) = image
        .chars()
        .find(|c| !(c.is_ascii_alphanumeric() || "._-/:@+".contains(*c)))
    {
        return Err(invalid(
            format!("the image `{image}` holds {c:?}, which an image reference cannot"),
            hint,
        ));
    }
    let name = image.split('@').next().unwrap_or_default();
    let bad_part = name
        .split('/')
        .any(|part| part.is_empty() || part.starts_with(['.', '-', ':']));
    if bad_part || image.starts_with(['@', ':']) || image.ends_with([':', '@', '/']) {
        return Err(invalid(
            format!("`{image}` is not an image reference"),
            hint,
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_become_task_names() {
        assert_eq!(task_name("step", "find_john").unwrap(), "find-john");
        assert_eq!(task_name("step", "_setup").unwrap(), "x-setup");
        assert_eq!(task_name("step", "A").unwrap(), "A");
        assert_eq!(task_name("step", "step1").unwrap(), "step1");
        let e = task_name("node", "a b").unwrap_err();
        assert_eq!(
            e.to_string(),
            "argo error at $: node `a b` cannot be an Argo task name: it holds ' ' (hint: task names are letters, digits and `-`; strata maps `_` to `-` and nothing else)"
        );
        let long = "a".repeat(129);
        assert_eq!(
            task_name("step", &long).unwrap_err().message(),
            format!("step `{long}` is 129 characters long; an Argo task name has at most 128")
        );
    }

    #[test]
    fn two_ids_with_one_task_name_are_refused() {
        let (i, e) = task_names("step", ["find_john", "find-john"], &[]).unwrap_err();
        assert_eq!((i, e.kind()), (1, ErrorKind::DuplicateId));
        assert_eq!(
            e.message(),
            "steps `find_john` and `find-john` both become the Argo task `find-john`"
        );
        let (_, e) = task_names("step", ["plan"], &["plan"]).unwrap_err();
        assert_eq!(
            e.message(),
            "step `plan` becomes the Argo task `plan`, a name the export uses for itself"
        );
    }

    #[test]
    fn names_images_and_namespaces() {
        assert!(check_workflow_name("diamond-1").is_ok());
        assert!(check_workflow_name("Diamond").is_err());
        assert!(check_namespace("argo").is_ok());
        assert!(check_namespace("-argo").is_err());
        assert!(check_secret_name("strata-secrets").is_ok());
        assert!(check_secret_name("Strata").is_err());
        assert_eq!(generate_name("plans/duplicates.json"), "duplicates-");
        assert_eq!(generate_name("My_Plan.yaml"), "my-plan-");
        assert_eq!(generate_name("___.yaml"), "strata-");
        for ok in [
            "strata",
            "strata:0.1.0",
            "ghcr.io/acme/strata:latest",
            "localhost:5000/strata@sha256:abc",
        ] {
            assert!(check_image(ok).is_ok(), "{ok}");
        }
        assert_eq!(
            check_image("my image").unwrap_err().message(),
            "the image `my image` holds ' '; an image reference has no spaces"
        );
        assert_eq!(
            check_image("a\"b").unwrap_err().message(),
            "the image `a\"b` holds '\"', which an image reference cannot"
        );
        assert!(check_image("").is_err());
        assert!(check_image("a//b").is_err());
        assert!(check_image("strata:").is_err());
        assert!(check_parameter_name("value", "meeting_title").is_ok());
        assert!(check_parameter_name("value", "été").is_err());
    }
}
