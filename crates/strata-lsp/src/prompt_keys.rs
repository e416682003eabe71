//! Find-references and rename of a prompt key across the project: the `key:` of every
//! graph prompt node under `tools/` naming it, and every template of `prompts/` defining it
//! (each fallback variant: `BrowseLink`, `BrowseLink.enterprise`).

use std::collections::HashMap;
use std::ops::Range;
use std::path::{Path, PathBuf};

use lsp_types::{
    DocumentChangeOperation, DocumentChanges, Location, OneOf,
    OptionalVersionedTextDocumentIdentifier, Position, RenameFile, ResourceOp, TextDocumentEdit,
    TextEdit, Uri, WorkspaceEdit,
};
use strata_app::{Project, PromptKeyUse};

use crate::text::{offset_of_column, position};
use crate::uri::from_path;

/// Gives a file's text (the open document's where it is open), by its path relative to
/// the project.
pub type TextOf<'a> = &'a dyn Fn(&Path) -> Option<String>;

/// The name a key names: `Search` in `Search` and in `main/Search`.
fn name_of(written: &str) -> &str {
    written.rsplit('/').next().unwrap_or(written)
}

/// Whether `written` is built at run time (holds a `${…}` template).
fn built_at_run_time(written: &str) -> bool {
    written.contains("${")
}

/// The prompt node key at `pos` of `text` (the file at `relative`): its use.
fn use_at(project: &Project, relative: &Path, text: &str, pos: Position) -> Option<PromptKeyUse> {
    let file = project.root.join(relative);
    let line = pos.line as usize + 1;
    let at = crate::text::offset(text, pos);
    strata_app::prompt_key_uses(project, &file, text)
        .into_iter()
        .find(|u| {
            let start = offset_of_column(text, u.at.0, u.at.1);
            u.at.0 == line && start <= at && at <= start + u.written.len()
        })
}

/// The graph files that may hold prompt nodes: the YAML files under `tools/`, and
/// `relative`.
fn graph_files(project: &Project, relative: &Path) -> Vec<PathBuf> {
    let mut files = crate::navigate::tool_files(project);
    if !files.iter().any(|f| f == relative) {
        files.push(relative.to_path_buf());
    }
    files
}

/// A prompt node's key and the bytes of the name it names.
type Spanned = (PromptKeyUse, Range<usize>);

/// A file of the project with its text and URI.
struct Opened {
    uri: Uri,
    text: String,
}

fn open(source: &Path, file: &Path, text_of: TextOf) -> Option<Opened> {
    Some(Opened {
        uri: from_path(&source.join(file))?,
        text: text_of(file)?,
    })
}

fn range(text: &str, r: Range<usize>) -> lsp_types::Range {
    lsp_types::Range {
        start: position(text, r.start),
        end: position(text, r.end),
    }
}

/// Every use of key `name` in the graph files: each file, the node, the key as written
/// and the bytes of its name.
fn uses_of(
    project: &Project,
    source: &Path,
    relative: &Path,
    text_of: TextOf,
) -> Vec<(Opened, Vec<Spanned>)> {
    let mut out = Vec::new();
    for file in graph_files(project, relative) {
        let Some(opened) = open(source, &file, text_of) else {
            continue;
        };
        let found = strata_app::prompt_key_uses(project, &project.root.join(&file), &opened.text);
        let spans = found
            .into_iter()
            .map(|u| {
                let start = offset_of_column(&opened.text, u.at.0, u.at.1);
                let name_from = start + u.written.len() - name_of(&u.written).len();
                let span = name_from..start + u.written.len();
                (u, span)
            })
            .collect::<Vec<_>>();
        if !spans.is_empty() {
            out.push((opened, spans));
        }
    }
    out
}

/// Where the templates named `name` are defined: a dict entry's stem (its name part), or
/// the start of a template file (whose name holds the stem).
fn definitions(
    project: &Project,
    source: &Path,
    name: &str,
    text_of: TextOf,
) -> Vec<(Opened, Option<Range<usize>>)> {
    let sites = strata_app::prompt_key_sites(project, name).into_iter();
    sites
        .filter_map(|s| {
            let opened = open(source, Path::new(&s.file), text_of)?;
            let span = s.at.map(|(line, column)| {
                let start = offset_of_column(&opened.text, line, column);
                start..start + name.len()
            });
            Some((opened, span))
        })
        .collect()
}

/// The uses of the prompt key at `pos` across the graph files (its definitions too with
/// `declared`); `None` when no prompt node's key is there or the key is built at run time.
pub fn references(
    project: &Project,
    source: &Path,
    relative: &Path,
    text: &str,
    pos: Position,
    declared: bool,
    text_of: TextOf,
) -> Option<Vec<Location>> {
    let at = use_at(project, relative, text, pos).filter(|u| !built_at_run_time(&u.written))?;
    let name = name_of(&at.written);
    let mut out = Vec::new();
    for (opened, spans) in uses_of(project, source, relative, text_of) {
        for (_, span) in spans
            .into_iter()
            .filter(|(u, _)| name_of(&u.written) == name)
        {
            out.push(Location {
                uri: opened.uri.clone(),
                range: range(&opened.text, span),
            });
        }
    }
    if declared {
        for (opened, span) in definitions(project, source, name, text_of) {
            out.push(Location {
                uri: opened.uri,
                range: range(&opened.text, span.unwrap_or(0..0)),
            });
        }
    }
    Some(out)
}

/// Renames the prompt key at `pos` to `new`: every prompt node's `key` naming it, every
/// dict entry defining it and every template file (renamed), each variant's suffix kept.
/// Refused, with the reason, for a name that is not a key's, a name another template
/// already has, and where a prompt node builds its key at run time. `None` when no prompt
/// node's key is there.
pub fn rename(
    project: &Project,
    source: &Path,
    relative: &Path,
    text: &str,
    pos: Position,
    new: &str,
    text_of: TextOf,
) -> Option<Result<WorkspaceEdit, String>> {
    let at = use_at(project, relative, text, pos)?;
    Some(rename_key(project, source, relative, &at, new, text_of))
}

fn rename_key(
    project: &Project,
    source: &Path,
    relative: &Path,
    at: &PromptKeyUse,
    new: &str,
    text_of: TextOf,
) -> Result<WorkspaceEdit, String> {
    if built_at_run_time(&at.written) {
        return Err(format!(
            "the key of prompt node `{}` is built at run time (`{}`); rename the template it picks in `prompts/`",
            at.node, at.written
        ));
    }
    let name = name_of(&at.written);
    let valid = !new.is_empty()
        && new
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    if !valid {
        return Err(format!(
            "`{new}` is not a prompt key's name: names are letters, digits, `_` and `-`"
        ));
    }
    if let Some(taken) = strata_app::prompt_key_sites(project, new).first() {
        return Err(format!(
            "prompt key `{new}` is already taken by {}",
            taken.file
        ));
    }
    let uses = uses_of(project, source, relative, text_of);
    let mut edits: HashMap<String, (Uri, Vec<TextEdit>)> = HashMap::new();
    let mut add = |opened: &Opened, span: Range<usize>| {
        let entry = edits
            .entry(opened.uri.as_str().to_string())
            .or_insert_with(|| (opened.uri.clone(), Vec::new()));
        entry.1.push(TextEdit {
            range: range(&opened.text, span),
            new_text: new.to_string(),
        });
    };
    for (opened, spans) in &uses {
        if let Some((u, _)) = spans.iter().find(|(u, _)| built_at_run_time(&u.written)) {
            return Err(format!(
                "prompt node `{}` builds its key at run time (`{}`), so which key it reads is not known; write its key out before renaming `{name}`",
                u.node, u.written
            ));
        }
        for (_, span) in spans.iter().filter(|(u, _)| name_of(&u.written) == name) {
            add(opened, span.clone());
        }
    }
    let mut renamed = Vec::new();
    for (opened, span) in definitions(project, source, name, text_of) {
        match span {
            Some(span) => add(&opened, span),
            None => {
                let old = opened.uri;
                let path = crate::uri::to_path(&old).ok_or("a template's file has no path")?;
                let file_name = path
                    .file_name()
                    .and_then(|f| f.to_str())
                    .unwrap_or_default();
                let renamed_to = format!("{new}{}", &file_name[name.len().min(file_name.len())..]);
                let new_uri = from_path(&path.with_file_name(renamed_to))
                    .ok_or("a template's new file has no URI")?;
                renamed.push(DocumentChangeOperation::Op(ResourceOp::Rename(
                    RenameFile {
                        old_uri: old,
                        new_uri,
                        options: None,
                        annotation_id: None,
                    },
                )));
            }
        }
    }
    let mut files: Vec<(Uri, Vec<TextEdit>)> = edits.into_values().collect();
    files.sort_by(|a, b| a.0.as_str().cmp(b.0.as_str()));
    let mut operations: Vec<DocumentChangeOperation> = files
        .into_iter()
        .map(|(uri, mut edits)| {
            edits.sort_by_key(|e| (e.range.start.line, e.range.start.character));
            DocumentChangeOperation::Edit(TextDocumentEdit {
                text_document: OptionalVersionedTextDocumentIdentifier { uri, version: None },
                edits: edits.into_iter().map(OneOf::Left).collect(),
            })
        })
        .collect();
    operations.extend(renamed);
    Ok(WorkspaceEdit {
        document_changes: Some(DocumentChanges::Operations(operations)),
        ..WorkspaceEdit::default()
    })
}
