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
    project
        .dotenv_text()
        .ok()
        .flatten()
        .and_then(|text| parse_dotenv(".env", &text).ok())
        .unwrap_or_default()
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

/// The environment's value of each variable a secret marker names, as a lookup for
/// [`crate::secret_marks::restore_value`]: the project's `.env` (read once, when a marker
/// first asks) or the process environment. An empty value counts as unset.
pub fn environment(project: &Project) -> impl FnMut(&str) -> Option<String> + '_ {
    let mut dotenv: Option<Vec<(String, String)>> = None;
    move |name| {
        let dotenv = dotenv.get_or_insert_with(|| read_dotenv(project));
        lookup(dotenv, name).filter(|v| !v.is_empty())
    }
}

/// Refuses to resume run `run_id` when what it recorded (`recorded`) holds a secret marker
/// whose variable is set neither in the environment nor in `.env`: its later steps would need
/// the value, and strata never wrote it down.
pub fn require_restorable(
    project: &Project,
    recorded: &serde_json::Value,
    run_id: &str,
) -> Result<(), strata_core::Error> {
    let mut environment = environment(project);
    match crate::secret_marks::markers_in(recorded)
        .into_iter()
        .find(|name| environment(name).is_none())
    {
        Some(name) => Err(unrestorable(
            &name,
            &format!("resuming run `{run_id}`"),
            strata_core::Layer::REQUEST,
            strata_core::ErrorKind::RunState,
        )),
        None => Ok(()),
    }
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
            "{what} needs the secret `{name}` (recorded as `{}`), which is set neither in the environment nor in .env",
            crate::secret_marks::marker(name)
        ),
    )
    .with_hint(format!(
        "set {name} to the value the tool printed, then run again; strata never writes a secret's value to disk"
    ))
}
