//! The secret values a response or a directive's report must never show.

use strata_app::{Project, ToolChain};
use strata_doc::parse_dotenv;

pub fn secret_values(project: Option<&Project>, tools: &[&str], names: &[String]) -> Vec<String> {
    let mut wanted: Vec<String> = names.to_vec();
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
