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
        dotenv = read_dotenv(project);
    }
    let mut out: Vec<String> = wanted
        .iter()
        .filter_map(|name| lookup(&dotenv, name))
        .filter(|v| !v.is_empty())
        .collect();
    out.sort();
    out.dedup();
    out
}

/// The project's `.env` entries (none when it is absent or unreadable).
fn read_dotenv(project: &Project) -> Vec<(String, String)> {
    dotenv_entries(project).unwrap_or_default()
}

/// The project's `.env` entries (none when it is absent); an error when it cannot be read or
/// parsed, for what must know every secret value (an export keeping them out of a manifest).
pub fn dotenv_entries(project: &Project) -> Result<Vec<(String, String)>, strata_core::Error> {
    match project.dotenv_text()? {
        Some(text) => parse_dotenv(".env", &text),
        None => Ok(Vec::new()),
    }
}

/// `name` in the project's `.env` (which wins) or the process environment.
fn lookup(dotenv: &[(String, String)], name: &str) -> Option<String> {
    dotenv
        .iter()
        .rev()
        .find(|(k, _)| k == name)
        .map(|(_, v)| v.clone())
        .or_else(|| std::env::var(name).ok())
}

/// The value of each variable a secret marker names, as a lookup for
/// [`crate::secret_marks::restore_value`] — only for a variable the project declares secret:
/// a name in `.env` (whose value wins), in the `secrets` setting, or in the `secrets` of a
/// tool's executor chain; its value from `.env` or the process environment. Any other
/// variable, however a marker names it, is never read. Both are read once, when a marker
/// first asks. An empty value counts as unset.
pub fn environment(project: &Project) -> impl FnMut(&str) -> Option<String> + '_ {
    let mut dotenv: Option<Vec<(String, String)>> = None;
    let mut declared: Option<Vec<String>> = None;
    move |name| {
        let dotenv = dotenv.get_or_insert_with(|| read_dotenv(project));
        let declared = declared.get_or_insert_with(|| declared_in_project(project));
        let in_dotenv = dotenv.iter().any(|(k, _)| k == name);
        if !in_dotenv && !declared.iter().any(|d| d == name) {
            return None;
        }
        lookup(dotenv, name).filter(|v| !v.is_empty())
    }
}

/// Every name the project declares secret outside `.env`: the `secrets` setting and the
/// `secrets` of every tool's executor chain.
fn declared_in_project(project: &Project) -> Vec<String> {
    let mut names = project.settings.secrets.value.clone();
    for id in project.tool_ids() {
        for name in ToolChain::load(project, &id)
            .map(|c| c.secrets())
            .unwrap_or_default()
        {
            if !names.contains(&name) {
                names.push(name);
            }
        }
    }
    names
}

/// The error for a secret marker whose variable is set nowhere: `what` is the call or run
/// that needed it.
pub fn unrestorable(
    name: &str,
    what: &str,
    layer: strata_core::Layer,
    kind: strata_core::ErrorKind,
) -> strata_core::Error {
    strata_core::Error::new(
        layer,
        kind,
        format!(
            "{what} needs the secret `{name}`, which is set neither in the environment nor in .env"
        ),
    )
    .with_hint(format!(
        "set {name} to the value the tool printed, then run again; strata never writes a secret's value to disk"
    ))
}
