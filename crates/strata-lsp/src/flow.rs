//! Completion of a graph's state keys (`${state.…}`, nested keys after a `.`) and of a
//! plan's step references (`{{id…` and `$stepN`, the steps before the one being written;
//! `{{id.result.…` the fields its tool's `outputs` declare),
//! from the check's lists (`strata_app::graph_state`, `strata_app::plan_steps`), read from
//! the document as typed.

use std::path::Path;

use lsp_types::{CompletionItem, CompletionItemKind};
use strata_app::{Known, Project};

/// What a line's text up to the cursor ends inside of.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Opened<'a> {
    /// `${state.` and the path typed after it (`count`, `config.`).
    State(&'a str),
    /// `{{` (a step id follows).
    StepId,
    /// `{{id.result.` and the path typed after it.
    StepResult(&'a str, &'a str),
    /// `$` or `{$` (a `stepN` id follows).
    DollarStep,
}

fn is_word(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_' || c == '-'
}

/// What `before` (a line's text up to the cursor) ends inside of.
pub fn opened(before: &str) -> Option<Opened<'_>> {
    if let Some(at) = before.rfind("${state.") {
        let path = &before[at + "${state.".len()..];
        if path.chars().all(|c| is_word(c) || c == '.') {
            return Some(Opened::State(path));
        }
    }
    if let Some(at) = before.rfind("{{") {
        let inner = before[at + 2..].trim_start();
        if let Some((id, path)) = inner.split_once(".result.") {
            let id_ok = !id.is_empty() && id.chars().all(is_word);
            if id_ok && path.chars().all(|c| is_word(c) || c == '.') {
                return Some(Opened::StepResult(id, path));
            }
        }
    }
    let head = before.trim_end_matches(is_word);
    if head.trim_end().ends_with("{{") && !head.trim_end().ends_with("{{{") {
        return Some(Opened::StepId);
    }
    let dollar = head.strip_suffix('$')?;
    (!dollar.ends_with('$')).then_some(Opened::DollarStep)
}

/// The names to offer at the end of `before`, on line `line` (1-based) of the file at
/// `relative` (text `text`) of `project`; `None` when `before` is in none of these
/// references.
pub fn complete(
    project: &Project,
    relative: &Path,
    text: &str,
    before: &str,
    line: usize,
) -> Option<Vec<CompletionItem>> {
    let file = project.root.join(relative);
    let items = match opened(before)? {
        Opened::State(path) => nested(strata_app::graph_state(project, &file, text), path),
        Opened::StepResult(id, path) => nested(
            strata_app::step_result_paths(project, &file, text, id),
            path,
        ),
        Opened::StepId => earlier_steps(project, &file, text, line)
            .map(|k| item(k.name.clone(), CompletionItemKind::REFERENCE, k))
            .collect(),
        Opened::DollarStep => earlier_steps(project, &file, text, line)
            .filter(|k| {
                k.name
                    .strip_prefix("step")
                    .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
            })
            .map(|k| item(k.name.clone(), CompletionItemKind::REFERENCE, k))
            .collect(),
    };
    Some(items)
}

/// The names of `known` (dotted paths) one level below the path typed, `path`: after
/// `cfg.`, `cfg.depth` as `depth`, not `cfg.mode.fast`.
fn nested(known: Vec<Known>, path: &str) -> Vec<CompletionItem> {
    let prefix = &path[..path.rfind('.').map_or(0, |i| i + 1)];
    known
        .into_iter()
        .filter_map(|k| {
            let rest = k.name.strip_prefix(prefix)?.to_string();
            (!rest.contains('.')).then(|| item(rest, CompletionItemKind::FIELD, k))
        })
        .collect()
}

/// The steps of the plan `text` written before the step that holds line `line`.
fn earlier_steps(
    project: &Project,
    file: &Path,
    text: &str,
    line: usize,
) -> impl Iterator<Item = Known> {
    let steps = strata_app::plan_steps(project, file, text);
    let current = steps
        .iter()
        .rposition(|k| k.origin.as_ref().is_some_and(|o| o.1 <= line))
        .unwrap_or(0);
    steps.into_iter().take(current)
}

fn item(label: String, kind: CompletionItemKind, k: Known) -> CompletionItem {
    CompletionItem {
        label,
        kind: Some(kind),
        detail: Some(k.what),
        ..CompletionItem::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_reference_before_the_cursor_is_found() {
        assert_eq!(opened("x: \"${state."), Some(Opened::State("")));
        assert_eq!(opened("x: \"${state.cfg.de"), Some(Opened::State("cfg.de")));
        assert_eq!(opened("in: \"{{A"), Some(Opened::StepId));
        assert_eq!(opened("in: \"{{ "), Some(Opened::StepId));
        assert_eq!(
            opened("in: \"{{ A.result.data.e"),
            Some(Opened::StepResult("A", "data.e"))
        );
        assert_eq!(opened("in: \"$ste"), Some(Opened::DollarStep));
        assert_eq!(opened("in: \"{$"), Some(Opened::DollarStep));
        assert_eq!(opened("in: \"$$step"), None);
        assert_eq!(opened("in: \"{{{{"), None);
        assert_eq!(opened("in: \"${HO"), None);
        assert_eq!(opened("in: {na"), None);
    }
}
