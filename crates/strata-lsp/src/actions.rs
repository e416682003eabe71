//! Code actions: each did-you-mean of the check's diagnostics applied (the diagnostic's span
//! replaced with the name it suggests), and semantic tokens that mark each layer's
//! placeholders apart.

use std::collections::HashMap;

use lsp_types::{
    CodeAction, CodeActionKind, CodeActionOrCommand, Diagnostic, SemanticToken, SemanticTokenType,
    SemanticTokensLegend, TextEdit, Uri, WorkspaceEdit,
};

use crate::completion::{kind_of, FileKind};
use crate::placeholders::{self, Layer};
use crate::text::{offset, position};

/// What a diagnostic's help suggests (`did you mean `{name}`?`) in place of `old`, the
/// placeholder its span covers: the suggested placeholder, or `old` with the suggested name.
fn suggestion(d: &Diagnostic, old: &str) -> Option<String> {
    let hint = d.data.as_ref()?.get("hint")?.as_str()?;
    let inner = hint.strip_prefix("did you mean `")?.strip_suffix("`?")?;
    if inner.starts_with('{') || inner.starts_with("${") {
        return Some(inner.to_string());
    }
    let p = placeholders::scan(old).into_iter().next()?;
    Some(format!(
        "{}{inner}{}",
        &old[..p.name_at.start],
        &old[p.name_at.end..]
    ))
}

/// The fixes of the diagnostics `diagnostics` of `text` (the document `uri`) that are
/// mechanical: the span replaced with what the help suggests.
pub fn fixes(uri: &Uri, text: &str, diagnostics: &[Diagnostic]) -> Vec<CodeActionOrCommand> {
    diagnostics
        .iter()
        .filter_map(|d| {
            let (from, to) = (offset(text, d.range.start), offset(text, d.range.end));
            let old = text.get(from..to)?;
            if !(old.starts_with('{') || old.starts_with("${")) {
                return None;
            }
            let new = suggestion(d, old)?;
            let edit = TextEdit {
                range: d.range,
                new_text: new.clone(),
            };
            Some(CodeActionOrCommand::CodeAction(CodeAction {
                title: format!("Replace `{old}` with `{new}`"),
                kind: Some(CodeActionKind::QUICKFIX),
                diagnostics: Some(vec![d.clone()]),
                edit: Some(WorkspaceEdit {
                    changes: Some(HashMap::from([(uri.clone(), vec![edit])])),
                    ..WorkspaceEdit::default()
                }),
                is_preferred: Some(true),
                ..CodeAction::default()
            }))
        })
        .collect()
}

/// The token types, one per layer: env (E), parameter (P), input (I), context (C).
pub fn legend() -> SemanticTokensLegend {
    SemanticTokensLegend {
        token_types: vec![
            SemanticTokenType::VARIABLE,
            SemanticTokenType::PARAMETER,
            SemanticTokenType::PROPERTY,
            SemanticTokenType::NAMESPACE,
        ],
        token_modifiers: Vec::new(),
    }
}

/// The semantic tokens of every placeholder of `text` (the file at `relative`): `${…}` is
/// a variable in a tool's file and the context elsewhere.
pub fn tokens(relative: &std::path::Path, text: &str) -> Vec<SemanticToken> {
    let tool = matches!(kind_of(relative), FileKind::Tool(_));
    let mut out = Vec::new();
    let (mut last_line, mut last_start) = (0, 0);
    let mut line_start = 0;
    for line in text.split_inclusive('\n') {
        for p in placeholders::scan(line) {
            let kind = match p.layer {
                Layer::Env if tool => 0,
                Layer::Env => 3,
                Layer::Param => 1,
                Layer::Input => 2,
            };
            let start = position(text, line_start + p.whole.start);
            let end = position(text, line_start + p.whole.end);
            let delta_line = start.line - last_line;
            let delta_start = if delta_line == 0 {
                start.character - last_start
            } else {
                start.character
            };
            out.push(SemanticToken {
                delta_line,
                delta_start,
                length: end.character - start.character,
                token_type: kind,
                token_modifiers_bitset: 0,
            });
            (last_line, last_start) = (start.line, start.character);
        }
        line_start += line.len();
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_are_relative_to_the_one_before() {
        let text = "a: \"{x} ${HOME}\"\nb: {input:y}\n";
        let t = |delta_line, delta_start, length, token_type| SemanticToken {
            delta_line,
            delta_start,
            length,
            token_type,
            token_modifiers_bitset: 0,
        };
        let tool = tokens(std::path::Path::new("tools/t.yaml"), text);
        assert_eq!(tool, vec![t(0, 4, 3, 1), t(0, 4, 7, 0), t(1, 3, 9, 2)]);
        let directive = tokens(std::path::Path::new("directives/d.md"), text);
        assert_eq!(directive[1], t(0, 4, 7, 3));
    }
}
