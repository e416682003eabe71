//! What is known of a placeholder before anything runs, from the check's own lists
//! (`strata_app::tool_names`, `strata_app::directive_inputs`): what it is, its value where it
//! can be known (a secret as `***`, what is only known at run time marked so), its default,
//! and where it is set.

use std::path::Path;

use strata_app::{Known, Project, Shown};

use crate::completion::{kind_of, FileKind};
use crate::placeholders::{Layer, Placeholder};

/// The names the placeholders of `layer` accept in the file at `relative` (text `text`).
pub fn names(project: &Project, relative: &Path, text: &str, layer: Layer) -> Vec<Known> {
    match (layer, kind_of(relative)) {
        (Layer::Param, FileKind::Tool(id)) => strata_app::tool_names(project, &id)
            .map(|n| n.params)
            .unwrap_or_default(),
        (Layer::Env, FileKind::Tool(id)) => strata_app::tool_names(project, &id)
            .map(|n| n.env)
            .unwrap_or_default(),
        (Layer::Input, FileKind::Directive) => {
            strata_app::directive_inputs(project, &project.root.join(relative), text)
                .unwrap_or_default()
        }
        _ => Vec::new(),
    }
}

/// What is known of placeholder `p` of the file at `relative`.
pub fn of(project: &Project, relative: &Path, text: &str, p: &Placeholder) -> Option<Known> {
    names(project, relative, text, p.layer)
        .into_iter()
        .find(|k| k.name == p.name)
}

/// The value as shown: the text, `***` for a secret, or why it is not known yet.
pub fn shown(value: &Shown) -> String {
    match value {
        Shown::Value(v) => v.clone(),
        Shown::Secret => "***".to_string(),
        Shown::Unknown(why) => format!("not known yet: {why}"),
    }
}

/// The layer's name as `strata explain` shows it.
pub fn layer_name(layer: Layer) -> &'static str {
    match layer {
        Layer::Env => "env (E)",
        Layer::Param => "params (P)",
        Layer::Input => "inputs (I)",
    }
}

/// The hover text of placeholder `p`, known as `k`.
pub fn hover_text(p: &Placeholder, k: &Known) -> String {
    describe(&p.name, layer_name(p.layer), k)
}

/// The hover text of a reference written `name`, of the layer named `layer`, known as `k`.
pub fn describe(name: &str, layer: &str, k: &Known) -> String {
    let mut out = format!("**`{name}`**: {} · layer {layer}\n\n", k.what);
    out.push_str(&format!("value: `{}`", shown(&k.value)));
    if let Some(d) = &k.default {
        out.push_str(&format!("\n\ndefault: `{d}`"));
    }
    if let Some((file, line, _)) = &k.origin {
        out.push_str(&format!("\n\nfrom: {file}:{line}"));
    }
    out
}

/// The inlay hint of a placeholder: its value where it is known or secret, nothing where it
/// is not known yet.
pub fn hint(k: &Known) -> Option<String> {
    match &k.value {
        Shown::Unknown(_) => k.default.as_ref().map(|d| format!("= {d} (default)")),
        v => Some(format!("= {}", shown(v))),
    }
}
