//! Completion of placeholder names, as the check accepts them (`strata_check`'s lists):
//! `{` in a tool's file offers its parameters, `${` the variables its executor chain sets
//! (secrets by name only, never a value), `{input:` in a directive its declared inputs.

use std::path::Path;

use lsp_types::{CompletionItem, CompletionItemKind};
use strata_app::Project;

/// What the text before the cursor is inside of.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Opened {
    /// `{name` of layer P.
    Param,
    /// `${NAME` of layer E.
    Env,
    /// `{input:name` of layer I.
    Input,
}

/// The placeholder `before` (a line's text up to the cursor) ends inside of, and the part
/// of its name typed so far.
pub fn opened(before: &str) -> Option<(Opened, &str)> {
    let word_start = before
        .rfind(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .map_or(0, |i| i + 1);
    let (head, word) = before.split_at(word_start);
    if head.ends_with("${") {
        return Some((Opened::Env, word));
    }
    if head.ends_with("{input:") {
        return Some((Opened::Input, word));
    }
    let inner = head.strip_suffix('{')?;
    (!inner.ends_with('{') && !inner.ends_with('$')).then_some((Opened::Param, word))
}

/// What a file of the project is, by where it lies.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FileKind {
    /// A tool or runtime, by id.
    Tool(String),
    /// A directive.
    Directive,
    /// Anything else.
    Other,
}

/// The kind of the file at `relative` in the project.
pub fn kind_of(relative: &Path) -> FileKind {
    let text = relative.to_string_lossy();
    if let Some(rest) = text.strip_prefix("tools/") {
        for ext in [".yaml", ".yml"] {
            if let Some(id) = rest.strip_suffix(ext) {
                return FileKind::Tool(id.to_string());
            }
        }
    }
    if text.starts_with("directives/") && text.ends_with(".md") {
        return FileKind::Directive;
    }
    FileKind::Other
}

/// The names to offer at the end of `before` in the file at `relative` (whose whole text
/// is `text`) of `project`.
pub fn complete(
    project: &Project,
    relative: &Path,
    text: &str,
    before: &str,
) -> Vec<CompletionItem> {
    let Some((what, _typed)) = opened(before) else {
        return Vec::new();
    };
    match (what, kind_of(relative)) {
        (Opened::Param, FileKind::Tool(id)) => strata_app::tool_names(project, &id)
            .map(|n| {
                n.params
                    .into_iter()
                    .map(|p| item(p.name, CompletionItemKind::VARIABLE, p.what))
                    .collect()
            })
            .unwrap_or_default(),
        (Opened::Env, FileKind::Tool(id)) => strata_app::tool_names(project, &id)
            .map(|n| {
                n.env
                    .into_iter()
                    .map(|e| item(e.name, CompletionItemKind::CONSTANT, e.what))
                    .collect()
            })
            .unwrap_or_default(),
        (Opened::Input, FileKind::Directive) => {
            strata_app::directive_inputs(project, &project.root.join(relative), text)
                .map(|inputs| {
                    inputs
                        .into_iter()
                        .map(|i| item(i.name, CompletionItemKind::FIELD, i.what))
                        .collect()
                })
                .unwrap_or_default()
        }
        _ => Vec::new(),
    }
}

fn item(label: String, kind: CompletionItemKind, detail: String) -> CompletionItem {
    CompletionItem {
        label,
        kind: Some(kind),
        detail: Some(detail),
        ..CompletionItem::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_placeholder_before_the_cursor_is_found() {
        assert_eq!(opened("  args: [\"{na"), Some((Opened::Param, "na")));
        assert_eq!(opened("x: ${HO"), Some((Opened::Env, "HO")));
        assert_eq!(opened("say {input:"), Some((Opened::Input, "")));
        assert_eq!(opened("{{step"), None);
        assert_eq!(opened("{a} b"), None);
        assert_eq!(
            kind_of(Path::new("tools/t/x.yaml")),
            FileKind::Tool("t/x".into())
        );
        assert_eq!(kind_of(Path::new("directives/d.md")), FileKind::Directive);
        assert_eq!(kind_of(Path::new("plans/p.yaml")), FileKind::Other);
    }
}
