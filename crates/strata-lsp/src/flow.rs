//! Completion of a graph's state keys (`${state.…}`, nested keys after a `.`) and of a
//! plan's step references (`{{id…` and `$stepN`, the steps whose records do not wait for the one being written;
//! `{{id.result.…` the fields its tool's `outputs` declare),
//! from the check's lists (`strata_app::graph_state`, `strata_app::plan_steps`), read from
//! the document as typed; and the hover and definition of such a reference.

use std::ops::Range;
use std::path::Path;

use std::collections::HashMap;

use lsp_types::{
    CompletionItem, CompletionItemKind, Hover, HoverContents, Location, MarkupContent, MarkupKind,
    Position, TextEdit, Uri, WorkspaceEdit,
};
use strata_app::{Known, Project};

use crate::text::{offset, offset_of_column, position};

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
    /// `key: ` (a graph prompt node's template key follows).
    PromptKey,
}

/// The value of a `key:` line (`  key: BrowseLink`, quoted or not) and its bytes in `line`.
fn key_value(line: &str) -> Option<(Range<usize>, &str)> {
    let rest = line.trim_start().strip_prefix("key:")?;
    let from = line.len() - rest.trim_start().len();
    let value = line[from..].trim_end();
    let unquoted = value.trim_matches(|c| c == '"' || c == '\'');
    let start = from + value.find(unquoted).unwrap_or(0);
    let ok = unquoted.chars().all(|c| is_word(c) || c == '.' || c == '/');
    ok.then_some((start..start + unquoted.len(), unquoted))
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
    if key_value(before).is_some() {
        return Some(Opened::PromptKey);
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
        Opened::StepId => referable_steps(project, &file, text, line)
            .map(|k| item(k.name.clone(), CompletionItemKind::REFERENCE, k))
            .collect(),
        Opened::DollarStep => referable_steps(project, &file, text, line)
            .filter(|k| {
                k.name
                    .strip_prefix("step")
                    .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
            })
            .map(|k| item(k.name.clone(), CompletionItemKind::REFERENCE, k))
            .collect(),
        Opened::PromptKey => strata_app::prompt_keys_at(project, &file, text, line)?
            .into_iter()
            .map(|k| item(k.name.clone(), CompletionItemKind::FILE, k))
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

/// The steps of the plan `text` the step that holds line `line` may refer to: every other
/// step whose record does not wait for it, directly or through others (a reference to such
/// a step would be a cycle), in plan order.
fn referable_steps(
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
    let waiting = waiting_for(&strata_app::plan_step_waits(project, file, text), current);
    steps
        .into_iter()
        .enumerate()
        .filter(move |(i, _)| !waiting.get(*i).copied().unwrap_or(false))
        .map(|(_, k)| k)
}

/// Which steps wait for step `current`, itself included, given what each waits for: a walk
/// back along the dependencies, linear in their number.
fn waiting_for(waits: &[Vec<usize>], current: usize) -> Vec<bool> {
    let mut waited_by: Vec<Vec<usize>> = vec![Vec::new(); waits.len()];
    for (step, deps) in waits.iter().enumerate() {
        for &dep in deps {
            waited_by[dep].push(step);
        }
    }
    let mut waiting = vec![false; waits.len().max(current + 1)];
    let mut todo = vec![current];
    while let Some(step) = todo.pop() {
        if std::mem::replace(&mut waiting[step], true) {
            continue;
        }
        todo.extend(waited_by.get(step).into_iter().flatten().copied());
    }
    waiting
}

fn item(label: String, kind: CompletionItemKind, k: Known) -> CompletionItem {
    CompletionItem {
        label,
        kind: Some(kind),
        detail: Some(k.what),
        ..CompletionItem::default()
    }
}

/// What a reference written in a graph or a plan reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Reads {
    /// `${state.path}`.
    State,
    /// `{{id.…}}`, `$stepN`, `{$stepN}`.
    Step,
}

/// The references of `line`: their bytes, the name written (a state key's path, a step's
/// id) and what they read.
fn written_in(line: &str) -> Vec<(Range<usize>, &str, Reads)> {
    let mut out = Vec::new();
    let word_end = |from: usize, dots: bool| {
        line[from..]
            .find(|c: char| !(is_word(c) || (dots && c == '.')))
            .map_or(line.len(), |i| from + i)
    };
    for (i, _) in line.match_indices("${state.") {
        let from = i + "${state.".len();
        let end = word_end(from, true);
        let name = line[from..end].trim_end_matches('.');
        let close = usize::from(line[end..].starts_with('}'));
        out.push((i..end + close, name, Reads::State));
    }
    for (i, _) in line.match_indices("{{") {
        let from = i + 2 + (line[i + 2..].len() - line[i + 2..].trim_start().len());
        let end = word_end(from, false);
        if end > from && line[end..].starts_with('.') {
            let close = line[end..].find("}}").map_or(end, |c| end + c + 2);
            out.push((i..close, &line[from..end], Reads::Step));
        }
    }
    for (i, _) in line.match_indices("$step") {
        let end = word_end(i + 1, false);
        let digits = &line[i + 5..end];
        let escaped = line[..i].ends_with('$');
        if !escaped && !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()) {
            out.push((i..word_end(end, true), &line[i + 1..end], Reads::Step));
        }
    }
    out
}

/// A state key or plan step a reference names.
struct Named {
    /// What the reference reads (`None`: a prompt key).
    reads: Option<Reads>,
    /// How it is shown: `state.key`, the step's id.
    label: String,
    /// What is known of it.
    known: Known,
    /// Its layer's name.
    layer: &'static str,
    /// The reference's bytes in the text.
    range: Range<usize>,
}

/// The state key or plan step the reference at `pos` of `text` (the file at `relative`)
/// names.
fn named_at(project: &Project, relative: &Path, text: &str, pos: Position) -> Option<Named> {
    let at = offset(text, pos);
    let line_start = text[..at].rfind('\n').map_or(0, |i| i + 1);
    let line_end = text[at..].find('\n').map_or(text.len(), |i| at + i);
    let line = &text[line_start..line_end];
    let file = project.root.join(relative);
    let column = at - line_start;
    let Some((range, name, reads)) = written_in(line)
        .into_iter()
        .find(|(r, _, _)| r.start <= column && column <= r.end)
    else {
        let (range, name) =
            key_value(line).filter(|(r, _)| r.start <= column && column <= r.end)?;
        let number = text[..line_start].matches('\n').count() + 1;
        let known = strata_app::prompt_keys_at(project, &file, text, number)?;
        return known.into_iter().find(|k| k.name == name).map(|k| Named {
            reads: None,
            label: k.name.clone(),
            known: k,
            layer: "prompts",
            range: line_start + range.start..line_start + range.end,
        });
    };
    let range = line_start + range.start..line_start + range.end;
    let known = match reads {
        Reads::State => strata_app::graph_state(project, &file, text)
            .into_iter()
            .filter(|k| name == k.name || name.starts_with(&format!("{}.", k.name)))
            .max_by_key(|k| k.name.len())
            .map(|k| (format!("state.{}", k.name), k, "context (C)")),
        Reads::Step => strata_app::plan_steps(project, &file, text)
            .into_iter()
            .find(|k| k.name == name)
            .map(|k| (k.name.clone(), k, "plan reference")),
    };
    known.map(|(label, k, layer)| Named {
        reads: Some(reads),
        label,
        known: k,
        layer,
        range,
    })
}

/// The hover of the state key or plan step reference at `pos`.
pub fn hover(project: &Project, relative: &Path, text: &str, pos: Position) -> Option<Hover> {
    let n = named_at(project, relative, text, pos)?;
    Some(Hover {
        contents: HoverContents::Markup(MarkupContent {
            kind: MarkupKind::Markdown,
            value: crate::knowledge::describe(&n.label, n.layer, &n.known),
        }),
        range: Some(lsp_types::Range {
            start: position(text, n.range.start),
            end: position(text, n.range.end),
        }),
    })
}

/// Where the state key or plan step referred to at `pos` is set: the node that assigns
/// the key (else its `state:` entry), the step's entry; in the editor's copy of the project
/// at `source`.
pub fn definition(
    project: &Project,
    source: &Path,
    relative: &Path,
    text: &str,
    pos: Position,
) -> Option<Location> {
    let n = named_at(project, relative, text, pos)?;
    crate::navigate::origin_of(project, source, n.known)
}

/// Whether `c` may stand next to a name without making it part of a longer one.
fn edge(c: Option<char>) -> bool {
    !c.is_some_and(|c| is_word(c) || c == '.')
}

/// The bytes of every use of the state key or step `n` in `text`: `state.key` in templates
/// and conditions, `{{id.…}}`, `$stepN` and `{$stepN}`.
fn uses(text: &str, n: &Named) -> Vec<Range<usize>> {
    let name = &n.known.name;
    match n.reads {
        Some(Reads::State) => {
            let written = format!("state.{name}");
            let mut out = Vec::new();
            for (at, _) in text.match_indices(&written) {
                let after = text[at + written.len()..].chars().next();
                let before = text[..at].chars().next_back();
                if edge(before) && !after.is_some_and(is_word) {
                    out.push(at + "state.".len()..at + written.len());
                }
            }
            out
        }
        Some(Reads::Step) => {
            let mut out = Vec::new();
            let mut start = 0;
            for line in text.split_inclusive('\n') {
                for (_, written, _) in written_in(line).into_iter().filter(|r| r.2 == Reads::Step) {
                    if written == name {
                        let from = start + (written.as_ptr() as usize - line.as_ptr() as usize);
                        out.push(from..from + written.len());
                    }
                }
                start += line.len();
            }
            out
        }
        None => Vec::new(),
    }
}

/// The bytes of the name where `n` is declared in `text`: the `state:` entry, the nodes'
/// `assign` keys and `collect`s of a state key; a step's `id`.
fn declarations(project: &Project, file: &Path, text: &str, n: &Named) -> Vec<Range<usize>> {
    let name = &n.known.name;
    let sites = match n.reads {
        Some(Reads::State) => strata_app::state_key_sites(project, file, text, name),
        Some(Reads::Step) => strata_app::step_id_site(project, file, text, name)
            .into_iter()
            .collect(),
        None => Vec::new(),
    };
    sites
        .into_iter()
        .map(|(line, column)| offset_of_column(text, line, column))
        .filter(|at| text[*at..].starts_with(name.as_str()))
        .map(|at| at..at + name.len())
        .collect()
}

/// The uses of the state key or step the reference at `pos` names, in its file (the
/// declarations too with `declared`); `None` when no such reference is there.
pub fn references(
    project: &Project,
    uri: &Uri,
    relative: &Path,
    text: &str,
    pos: Position,
    declared: bool,
) -> Option<Vec<Location>> {
    let n = named_at(project, relative, text, pos).filter(|n| n.reads.is_some())?;
    let file = project.root.join(relative);
    let mut ranges = uses(text, &n);
    if declared {
        ranges.extend(declarations(project, &file, text, &n));
    }
    let found = ranges.into_iter().map(|r| Location {
        uri: uri.clone(),
        range: lsp_types::Range {
            start: position(text, r.start),
            end: position(text, r.end),
        },
    });
    Some(found.collect())
}

/// Renames the state key or step the reference at `pos` names to `new`: every use and
/// declaration in its file. Refused, with the reason, for a nested state key (its
/// top-level key is the name the graph sets), a name that is not one, and a step read as
/// `$stepN` given a name that is not `stepN`. `None` when no such reference is there.
pub fn rename(
    project: &Project,
    uri: &Uri,
    relative: &Path,
    text: &str,
    pos: Position,
    new: &str,
) -> Option<Result<WorkspaceEdit, String>> {
    let n = named_at(project, relative, text, pos).filter(|n| n.reads.is_some())?;
    let name = &n.known.name;
    let word = !new.is_empty() && new.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    if !word {
        return Some(Err(format!("`{new}` is not a name a reference can read")));
    }
    if name.contains('.') {
        return Some(Err(format!(
            "`state.{name}` is a key inside the initial value of `state.{}`; rename it in that value",
            name.split('.').next().unwrap_or_default()
        )));
    }
    let file = project.root.join(relative);
    let ranges = uses(text, &n);
    let dollar = ranges.iter().any(|r| text[..r.start].ends_with('$'));
    let step_n = new
        .strip_prefix("step")
        .is_some_and(|d| !d.is_empty() && d.bytes().all(|b| b.is_ascii_digit()));
    if dollar && !step_n {
        return Some(Err(format!(
            "step `{name}` is read as `${name}`, which names a step only as `stepN`; give it such an id, or write its references as `{{{{{name}.result…}}}}` first"
        )));
    }
    let mut edits: Vec<TextEdit> = ranges
        .into_iter()
        .chain(declarations(project, &file, text, &n))
        .map(|r| TextEdit {
            range: lsp_types::Range {
                start: position(text, r.start),
                end: position(text, r.end),
            },
            new_text: new.to_string(),
        })
        .collect();
    edits.sort_by_key(|e| (e.range.start.line, e.range.start.character));
    Some(Ok(WorkspaceEdit {
        changes: Some(HashMap::from([(uri.clone(), edits)])),
        ..WorkspaceEdit::default()
    }))
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
        assert_eq!(opened("    key: Brow"), Some(Opened::PromptKey));
        assert_eq!(opened("    key: \"main/"), Some(Opened::PromptKey));
        assert_eq!(key_value("    key: \"Search\""), Some((10..16, "Search")));
    }

    #[test]
    fn a_state_key_is_used_in_templates_and_conditions_alone() {
        let text =
            "a: \"${state.n}\"\nwhen: state.n < inputs.state.n and state.nn > 1\nb: ${state.n.x}\n";
        let n = Named {
            reads: Some(Reads::State),
            label: "state.n".into(),
            known: Known {
                name: "n".into(),
                what: String::new(),
                value: strata_app::Shown::Unknown(String::new()),
                default: None,
                origin: None,
            },
            layer: "context (C)",
            range: 0..0,
        };
        let found: Vec<usize> = uses(text, &n).into_iter().map(|r| r.start).collect();
        assert_eq!(found, [12, 28, 75]);
    }

    #[test]
    fn the_references_of_a_line_are_found() {
        let line = r#"x: "${state.cfg.mode} {{ A.result.x }} $step2.y {$step3} $$step4 {{{{""#;
        let found: Vec<(&str, &str, Reads)> = written_in(line)
            .into_iter()
            .map(|(r, name, reads)| (&line[r], name, reads))
            .collect();
        assert_eq!(
            found,
            vec![
                ("${state.cfg.mode}", "cfg.mode", Reads::State),
                ("{{ A.result.x }}", "A", Reads::Step),
                ("$step2.y", "step2", Reads::Step),
                ("$step3", "step3", Reads::Step),
            ]
        );
    }
}
