//! The names each placeholder of a file accepts, exactly as the check accepts them: what an
//! editor offers to complete. The check reads its lists from here, so the two cannot differ.

use std::path::Path;

use serde_json::Value;
use strata_core::{Error, Limits};
use strata_directive::{load_project_hooks, Directive, FrontMatter};
use strata_doc::{Document, Format};
use strata_exec::BASE_ALLOWLIST;
use strata_project::{take_literals, Project, ToolChain};

use crate::catalog::Catalog;

/// The runtime parameters every tool gets.
pub(crate) const RUNTIME_PARAMS: [&str; 6] = [
    "tool_path",
    "tool_dir",
    "tool_parent",
    "project_path",
    "params_json",
    "runtime_dir",
];

/// An environment variable a tool's `${NAME}` may read without a default.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EnvName {
    /// The variable.
    pub name: String,
    /// Whether it is a secret (its value is never shown).
    pub secret: bool,
    /// What sets it: the project's `.env`, a file of the chain, or the base environment.
    pub origin: String,
}

/// What the placeholders of a tool's config accept.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolNames {
    /// `{name}`: the runtime parameters, the config's keys, the declared parameters.
    pub params: Vec<String>,
    /// `${NAME}`: the variables the chain sets (locale variables, `LC_*`, are accepted too).
    pub env: Vec<EnvName>,
}

/// The names `{…}` and `${…}` accept in the config of tool `id`, through its executor chain.
pub fn tool_names(project: &Project, id: &str) -> Result<ToolNames, Error> {
    let chain = ToolChain::load(project, id)?;
    let mut config = Value::Object(chain.merged_config());
    take_literals(&mut config)?;
    Ok(ToolNames {
        params: known_params(&chain, &config),
        env: chain_env(&chain, &crate::tools::project_dotenv(project)),
    })
}

/// The parameters `{name}` reads in the config of `chain` (its literals taken out): the
/// runtime parameters, the config's keys, then the tool's declared parameters.
pub(crate) fn known_params(chain: &ToolChain, config: &Value) -> Vec<String> {
    let mut known: Vec<String> = RUNTIME_PARAMS.iter().map(|s| s.to_string()).collect();
    known.extend(
        config
            .as_object()
            .into_iter()
            .flat_map(|m| m.keys().cloned()),
    );
    for name in crate::tools::declared_params(&chain.links[0]) {
        if !known.contains(&name) {
            known.push(name);
        }
    }
    known
}

/// The variables set for `chain`: the base environment's, the project's `.env` (`dotenv`,
/// its names), then each link's secrets, `env_config.env` and interpreter variable.
pub(crate) fn chain_env(chain: &ToolChain, dotenv: &[String]) -> Vec<EnvName> {
    let mut out: Vec<EnvName> = Vec::new();
    let mut add = |name: &str, secret: bool, origin: &str| {
        if !out.iter().any(|e| e.name == name) {
            out.push(EnvName {
                name: name.to_string(),
                secret,
                origin: origin.to_string(),
            });
        }
    };
    for link in &chain.links {
        for s in &link.file.secrets {
            add(s, true, &link.doc.name);
        }
    }
    for name in BASE_ALLOWLIST {
        add(name, false, "the base environment");
    }
    for name in dotenv {
        add(name, false, ".env");
    }
    for link in &chain.links {
        if let Some(e) = &link.file.env_config {
            for name in e.env.keys() {
                add(name, false, &link.doc.name);
            }
            if let Some(i) = &e.interpreter {
                add(&i.var, false, &link.doc.name);
            }
        }
    }
    out
}

/// The inputs `{input:name}` accepts in the directive `text` (named `file`, a path of the
/// project): the inputs it declares. A directive that does not load (its body half typed)
/// is read for its front matter alone.
pub fn directive_inputs(project: &Project, file: &Path, text: &str) -> Result<Vec<String>, Error> {
    let hooks = load_project_hooks(&project.root, &Catalog(project), &project.limits)?;
    let name = project.display_name(file);
    let front = match Directive::load(&name, text, &Catalog(project), &hooks, &project.limits) {
        Ok(d) => d.front,
        Err(e) => front_matter(&name, text, &project.limits).ok_or(e)?,
    };
    Ok(front.inputs.iter().map(|i| i.name.clone()).collect())
}

/// The front matter of directive `text` (named `name`), when it reads as one.
fn front_matter(name: &str, text: &str, limits: &Limits) -> Option<FrontMatter> {
    let rest = text.strip_prefix("---\n")?;
    let end = rest.find("\n---")? + 1;
    let doc = Document::parse(name, rest.as_bytes()[..end].to_vec(), Format::Yaml, limits).ok()?;
    doc.typed().ok()
}
