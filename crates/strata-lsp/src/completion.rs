//! Completion of placeholder names, as the check accepts them ([`crate::knowledge`]):
//! `{` in a tool's file offers its parameters, `${` the variables its executor chain sets
//! (secrets by name only, never a value), `{input:` in a directive its declared inputs.

use std::path::Path;

use lsp_types::{CompletionItem, CompletionItemKind};
use strata_app::Project;

use crate::placeholders::Layer;

/// The placeholder `before` (a line's text up to the cursor) ends inside of, and the part
/// of its name typed so far.
pub fn opened(before: &str) -> Option<(Layer, &str)> {
    let word_start = before
        .rfind(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .map_or(0, |i| i + 1);
    let (head, word) = before.split_at(word_start);
    if head.ends_with("${") {
        return Some((Layer::Env, word));
    }
    if head.ends_with("{input:") {
        return Some((Layer::Input, word));
    }
    let inner = head.strip_suffix('{')?;
    (!inner.ends_with('{') && !inner.ends_with('$')).then_some((Layer::Param, word))
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

/// The names to offer at the end of `before`, on line `line` (1-based), in the file at
/// `relative` (whose whole text is `text`) of `project`: a graph's state keys and a plan's
/// steps ([`crate::flow`]), or the names of a layer's placeholder.
pub fn complete(
    project: &Project,
    relative: &Path,
    text: &str,
    before: &str,
    line: usize,
) -> Vec<CompletionItem> {
    if let Some(items) = crate::flow::complete(project, relative, text, before, line) {
        if !items.is_empty() {
            return items;
        }
    }
    let Some((layer, _typed)) = opened(before) else {
        return Vec::new();
    };
    let kind = match layer {
        Layer::Param => CompletionItemKind::VARIABLE,
        Layer::Env => CompletionItemKind::CONSTANT,
        Layer::Input => CompletionItemKind::FIELD,
    };
    crate::knowledge::names(project, relative, text, layer)
        .into_iter()
        .map(|k| item(k.name, kind, k.what))
        .collect()
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
        assert_eq!(opened("  args: [\"{na"), Some((Layer::Param, "na")));
        assert_eq!(opened("x: ${HO"), Some((Layer::Env, "HO")));
        assert_eq!(opened("say {input:"), Some((Layer::Input, "")));
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
