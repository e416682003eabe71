//! The one redaction rule: which names are secret (the project's declared secrets and the
//! caller's), and their values, which no response, report or trace may show.

use strata_doc::parse_dotenv;
use strata_project::{Project, Settings, ToolChain};

/// The secret names in force: the project's declared secrets (`secrets:` in `strata.yaml`,
/// `STRATA_SECRETS`) and the caller's `--secret` names, once each. Every command that takes
/// `--secret` redacts through this, so that declaring a secret in the settings redacts it
/// wherever the flag would.
pub fn declared(settings: &Settings, flags: &[String]) -> Vec<String> {
    let mut names = settings.secrets.value.clone();
    for name in flags {
        if !names.contains(name) {
            names.push(name.clone());
        }
    }
    names
}

/// The values of secret variables: `names` (with the project's declared secrets), and those
/// the chains of `tools` declare, read from the project's `.env` (which wins) or the process
/// environment.
pub fn secret_values(project: Option<&Project>, tools: &[&str], names: &[String]) -> Vec<String> {
    let mut wanted: Vec<String> = match project {
        Some(project) => declared(&project.settings, names),
        None => names.to_vec(),
    };
    let mut dotenv = Vec::new();
    if let Some(project) = project {
        for id in tools {
            wanted.extend(
                ToolChain::load(project, id)
                    .map(|c| c.secrets())
                    .unwrap_or_default(),
            );
        }
        if let Ok(text) = project.read_text(&project.root.join(".env")) {
            dotenv = parse_dotenv(".env", &text).unwrap_or_default();
        }
    }
    let mut out: Vec<String> = wanted
        .iter()
        .filter_map(|name| {
            dotenv
                .iter()
                .rev()
                .find(|(k, _)| k == name)
                .map(|(_, v)| v.clone())
                .or_else(|| std::env::var(name).ok())
        })
        .filter(|v| !v.is_empty())
        .collect();
    out.sort();
    out.dedup();
    out
}
