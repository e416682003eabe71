//! Hover, inlay hints, go-to-definition, find-references and rename of the placeholder under
//! the cursor, from what the check knows of its name ([`crate::knowledge`]).

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use lsp_types::{
    Hover, HoverContents, InlayHint, InlayHintLabel, Location, MarkupContent, MarkupKind, Position,
    Range, TextEdit, Uri, WorkspaceEdit,
};
use strata_app::{Known, Project};

use crate::completion::{kind_of, FileKind};
use crate::knowledge;
use crate::placeholders::{self, Layer, Placeholder};
use crate::text::{offset, position, range_at};
use crate::uri::from_path;

/// A placeholder under the cursor, in its file.
#[derive(Debug)]
pub struct Spot {
    /// The file, relative to the project.
    pub relative: PathBuf,
    /// The file's text.
    pub text: String,
    /// Where its line starts.
    pub line_start: usize,
    /// The placeholder.
    pub placeholder: Placeholder,
}

/// The placeholder at `pos` of `text` (the file at `relative`).
pub fn spot(relative: PathBuf, text: String, pos: Position) -> Option<Spot> {
    let at = offset(&text, pos);
    let line_start = text[..at].rfind('\n').map_or(0, |i| i + 1);
    let line_end = text[at..].find('\n').map_or(text.len(), |i| at + i);
    let placeholder = placeholders::at(&text[line_start..line_end], at - line_start)?;
    Some(Spot {
        relative,
        text,
        line_start,
        placeholder,
    })
}

fn range_of(text: &str, from: usize, to: usize) -> Range {
    Range {
        start: position(text, from),
        end: position(text, to),
    }
}

/// The hover of the placeholder at `s`.
pub fn hover(project: &Project, s: &Spot) -> Option<Hover> {
    let k = knowledge::of(project, &s.relative, &s.text, &s.placeholder)?;
    let whole = &s.placeholder.whole;
    Some(Hover {
        contents: HoverContents::Markup(MarkupContent {
            kind: MarkupKind::Markdown,
            value: knowledge::hover_text(&s.placeholder, &k),
        }),
        range: Some(range_of(
            &s.text,
            s.line_start + whole.start,
            s.line_start + whole.end,
        )),
    })
}

/// The inlay hints of every placeholder of `text` (the file at `relative`) in `range`.
pub fn inlay_hints(project: &Project, relative: &Path, text: &str, range: Range) -> Vec<InlayHint> {
    let (from, to) = (offset(text, range.start), offset(text, range.end));
    let mut known: HashMap<Layer, Vec<Known>> = HashMap::new();
    let mut out = Vec::new();
    let mut line_start = 0;
    for line in text.split_inclusive('\n') {
        if line_start + line.len() >= from && line_start <= to {
            for p in placeholders::scan(line) {
                let names = known
                    .entry(p.layer)
                    .or_insert_with(|| knowledge::names(project, relative, text, p.layer));
                let Some(label) = names
                    .iter()
                    .find(|k| k.name == p.name)
                    .and_then(knowledge::hint)
                else {
                    continue;
                };
                out.push(InlayHint {
                    position: position(text, line_start + p.whole.end),
                    label: InlayHintLabel::String(label),
                    kind: None,
                    text_edits: None,
                    tooltip: None,
                    padding_left: Some(true),
                    padding_right: None,
                    data: None,
                });
            }
        }
        line_start += line.len();
    }
    out
}

/// Where the name of the placeholder at `s` is set or declared.
pub fn definition(project: &Project, source: &Path, s: &Spot) -> Option<Location> {
    origin_of(
        project,
        source,
        knowledge::of(project, &s.relative, &s.text, &s.placeholder)?,
    )
}

/// Where `k` is set or declared, in the editor's copy of the project at `source`.
pub fn origin_of(project: &Project, source: &Path, k: Known) -> Option<Location> {
    let (file, line, column) = k.origin?;
    let text = std::fs::read_to_string(project.root.join(&file)).unwrap_or_default();
    Some(Location {
        uri: from_path(&source.join(&file))?,
        range: range_at(&text, line, column, 1),
    })
}

/// The files where the placeholders of `layer` in the file at `relative` share its names:
/// a variable's name is one across every tool of the project; a parameter's or an input's
/// is its own file's.
fn scope(project: &Project, relative: &Path, layer: Layer) -> Vec<PathBuf> {
    match layer {
        Layer::Env => tool_files(project),
        _ => vec![relative.to_path_buf()],
    }
}

/// The YAML files under `tools/` (tools and graphs), relative to the project, sorted.
pub(crate) fn tool_files(project: &Project) -> Vec<PathBuf> {
    let mut all = Vec::new();
    walk(&project.root.join("tools"), &mut all);
    all.sort();
    all.into_iter()
        .filter_map(|p| p.strip_prefix(&project.root).ok().map(Path::to_path_buf))
        .collect()
}

fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            walk(&path, out);
        } else if path.extension().is_some_and(|e| e == "yaml" || e == "yml") {
            out.push(path);
        }
    }
}

/// Every use of the name of the placeholder at `s` (its layer's), in the files that share
/// it; `text_of` gives a file's text (the open document's where it is open).
pub fn references(
    project: &Project,
    source: &Path,
    s: &Spot,
    text_of: &dyn Fn(&Path) -> Option<String>,
) -> Vec<Location> {
    let p = &s.placeholder;
    let mut out = Vec::new();
    for file in scope(project, &s.relative, p.layer) {
        let Some(text) = text_of(&file) else { continue };
        let Some(uri) = from_path(&source.join(&file)) else {
            continue;
        };
        for (start, name_at) in uses(&text, p.layer, &p.name) {
            out.push(Location {
                uri: uri.clone(),
                range: range_of(&text, start + name_at.start, start + name_at.end),
            });
        }
    }
    out
}

/// The placeholders of `layer` reading `name` in `text`: each line's start and the name's
/// bytes in it.
fn uses(text: &str, layer: Layer, name: &str) -> Vec<(usize, std::ops::Range<usize>)> {
    let mut out = Vec::new();
    let mut start = 0;
    for line in text.split_inclusive('\n') {
        for p in placeholders::scan(line) {
            if p.layer == layer && p.name == name {
                out.push((start, p.name_at));
            }
        }
        start += line.len();
    }
    out
}

/// Renames the name of the placeholder at `s` to `new`: every use in its file and its
/// declaration. Refused, with the reason, where the name is not the file's to change.
pub fn rename(project: &Project, uri: &Uri, s: &Spot, new: &str) -> Result<WorkspaceEdit, String> {
    let p = &s.placeholder;
    if new.is_empty() || !new.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
        return Err(format!("`{new}` is not a name a placeholder can read"));
    }
    let k = knowledge::of(project, &s.relative, &s.text, p)
        .ok_or_else(|| format!("`{}` names nothing here to rename", p.name))?;
    refusal(project, s, &k)?;
    let mut edits: Vec<TextEdit> = uses(&s.text, p.layer, &p.name)
        .into_iter()
        .map(|(start, at)| TextEdit {
            range: range_of(&s.text, start + at.start, start + at.end),
            new_text: new.to_string(),
        })
        .collect();
    if let Some(at) = k
        .origin
        .as_ref()
        .and_then(|(_, line, _)| declared_at(&s.text, *line, &p.name))
    {
        edits.push(TextEdit {
            range: range_of(&s.text, at, at + p.name.len()),
            new_text: new.to_string(),
        });
    }
    Ok(WorkspaceEdit {
        changes: Some(HashMap::from([(uri.clone(), edits)])),
        ..WorkspaceEdit::default()
    })
}

/// Why the name known as `k` cannot be renamed from the file of `s`, if it cannot.
fn refusal(project: &Project, s: &Spot, k: &Known) -> Result<(), String> {
    let name = &s.placeholder.name;
    let here = s.relative.to_string_lossy();
    match s.placeholder.layer {
        Layer::Env => Err(format!(
            "`{name}` is read from the process's environment when the tool runs; rename it where it is set and in every program that reads it"
        )),
        Layer::Param if k.what == "runtime parameter" => Err(format!(
            "`{name}` is a runtime parameter: strata names it"
        )),
        Layer::Param => {
            let FileKind::Tool(id) = kind_of(&s.relative) else {
                return Ok(());
            };
            if strata_app::tool_names(project, &id).is_ok_and(|n| n.passes_all) && k.what == "declared parameter" {
                return Err(format!(
                    "the tool's program reads its parameters by name from `{{params_json}}` when it runs: renaming `{name}` here would not rename what it reads"
                ));
            }
            match &k.origin {
                Some((file, _, _)) if file != &here => Err(format!(
                    "`{name}` is set in {file}, another file of the executor chain; rename it there"
                )),
                _ => Ok(()),
            }
        }
        Layer::Input => Ok(()),
    }
}

/// The byte offset of `name`, as a whole word, on 1-based `line` of `text` or the next.
fn declared_at(text: &str, line: usize, name: &str) -> Option<usize> {
    let mut start = 0;
    for (i, l) in text.split_inclusive('\n').enumerate() {
        if (line..=line + 1).contains(&(i + 1)) {
            let word = |at: usize| {
                let before = l[..at].chars().next_back();
                let after = l[at + name.len()..].chars().next();
                let edge =
                    |c: Option<char>| !c.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_');
                edge(before) && edge(after)
            };
            if let Some((at, _)) = l.match_indices(name).find(|(at, _)| word(*at)) {
                return Some(start + at);
            }
        }
        start += l.len();
    }
    None
}
