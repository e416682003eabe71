//! The names each placeholder of a file accepts, exactly as the check accepts them: what an
//! editor offers to complete. The check reads its lists from here, so the two cannot differ.

use std::path::Path;

use serde_json::Value;
use strata_core::{Error, FieldPath, Limits, PathSeg};
use strata_directive::{load_project_hooks, Directive};
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

/// What a value is at edit time.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Shown {
    /// Known: its text (a config key's, an `env_config.env` entry's).
    Value(String),
    /// A secret, or what may hold one (the project's `.env`): never shown.
    Secret,
    /// Not known before the tool runs, and why.
    Unknown(String),
}

/// A name a placeholder accepts, and what is known of it before anything runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Known {
    /// The name.
    pub name: String,
    /// What it is (`declared parameter`, `config key`, `secret`, …).
    pub what: String,
    /// Its value, as far as it can be known now.
    pub value: Shown,
    /// Its default (a declared parameter's schema default, as JSON).
    pub default: Option<String>,
    /// Where it is set or declared: the file (relative to the project), line and column.
    pub origin: Option<(String, usize, usize)>,
}

/// What the placeholders of a tool's config accept.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolNames {
    /// `{name}`: the runtime parameters, the config's keys, the declared parameters.
    pub params: Vec<Known>,
    /// `${NAME}`: the variables the chain sets (locale variables, `LC_*`, are accepted too).
    pub env: Vec<Known>,
    /// Whether the config passes every parameter as JSON (`{params_json}`): the program
    /// then reads parameters by a name it knows only at run time.
    pub passes_all: bool,
}

/// The names `{…}` and `${…}` accept in the config of tool `id`, through its executor chain.
pub fn tool_names(project: &Project, id: &str) -> Result<ToolNames, Error> {
    let chain = ToolChain::load(project, id)?;
    let mut config = Value::Object(chain.merged_config());
    take_literals(&mut config)?;
    let params = known_params(&chain, &config)
        .into_iter()
        .map(|name| describe_param(&chain, &config, name))
        .collect();
    let dotenv = crate::tools::project_dotenv(project);
    let dotenv_text = project.dotenv_text().ok().flatten();
    let env = chain_env(&chain, &dotenv)
        .into_iter()
        .map(|e| describe_env(&chain, dotenv_text.as_deref(), e))
        .collect();
    let passes_all = config.to_string().contains("{params_json}");
    Ok(ToolNames {
        params,
        env,
        passes_all,
    })
}

fn path(keys: &[&str]) -> FieldPath {
    FieldPath(keys.iter().map(|k| PathSeg::Key(k.to_string())).collect())
}

/// Where `keys` is in the first file of `chain` that has it.
fn origin(chain: &ToolChain, keys: &[&str]) -> Option<(String, usize, usize)> {
    let p = path(keys);
    let link = chain
        .links
        .iter()
        .find(|l| p.lookup(&l.doc.value).is_some())?;
    let (line, column) = link.doc.locate(&p, None)?;
    Some((link.doc.name.clone(), line, column))
}

fn describe_param(chain: &ToolChain, config: &Value, name: String) -> Known {
    let unknown = |why: &str| Shown::Unknown(why.to_string());
    if RUNTIME_PARAMS.contains(&name.as_str()) {
        return Known {
            what: "runtime parameter".into(),
            value: unknown("set by strata when the tool runs"),
            default: None,
            origin: None,
            name,
        };
    }
    if let Some(v) = config.get(&name) {
        let text = v.as_str().map_or_else(|| v.to_string(), str::to_string);
        return Known {
            what: "config key".into(),
            value: Shown::Value(text),
            default: None,
            origin: origin(chain, &["config", &name]),
            name,
        };
    }
    let default = chain.links[0]
        .file
        .parameters
        .as_ref()
        .and_then(|p| p.pointer(&format!("/properties/{name}/default")))
        .map(Value::to_string);
    Known {
        what: "declared parameter".into(),
        value: unknown("given by the caller when the tool runs"),
        default,
        origin: origin(chain, &["parameters", "properties", &name]),
        name,
    }
}

fn describe_env(chain: &ToolChain, dotenv: Option<&str>, e: EnvName) -> Known {
    let EnvName {
        name,
        secret,
        origin: set_by,
    } = e;
    let unknown = |why: &str| Shown::Unknown(why.to_string());
    let (what, value, at) = if secret {
        let at = chain.links.iter().find_map(|l| {
            let i = l.file.secrets.iter().position(|s| *s == name)?;
            let p = FieldPath(vec![PathSeg::Key("secrets".into()), PathSeg::Index(i)]);
            let (line, column) = l.doc.locate(&p, None)?;
            Some((l.doc.name.clone(), line, column))
        });
        ("secret", Shown::Secret, at)
    } else if set_by == ".env" {
        let line = dotenv.and_then(|t| dotenv_line(t, &name));
        (
            "set in .env",
            Shown::Secret,
            line.map(|l| (".env".to_string(), l, 1)),
        )
    } else if set_by == BASE {
        (
            "from the caller's environment",
            unknown("read from the caller's environment when the tool runs"),
            None,
        )
    } else if let Some(v) = chain
        .links
        .iter()
        .find_map(|l| l.file.env_config.as_ref()?.env.get(&name))
    {
        let text = v.as_str().map_or_else(|| v.to_string(), str::to_string);
        (
            "variable of env_config.env",
            Shown::Value(text),
            origin(chain, &["env_config", "env", &name]),
        )
    } else {
        (
            "interpreter",
            unknown("the interpreter found when the tool runs"),
            origin(chain, &["env_config", "interpreter", "var"]),
        )
    };
    Known {
        name,
        what: what.into(),
        value,
        default: None,
        origin: at,
    }
}

/// The 1-based line of `.env` text that sets `name`.
fn dotenv_line(text: &str, name: &str) -> Option<usize> {
    text.lines()
        .position(|l| {
            let l = l.trim_start();
            let l = l.strip_prefix("export ").unwrap_or(l);
            l.strip_prefix(name)
                .is_some_and(|r| r.trim_start().starts_with('='))
        })
        .map(|i| i + 1)
}

/// What sets a variable of the base environment.
const BASE: &str = "the base environment";

/// An environment variable a tool's `${NAME}` may read without a default.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct EnvName {
    /// The variable.
    pub(crate) name: String,
    /// Whether it is a secret (its value is never shown).
    pub(crate) secret: bool,
    /// What sets it: the project's `.env`, a file of the chain, or the base environment.
    pub(crate) origin: String,
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
        add(name, false, BASE);
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
pub fn directive_inputs(project: &Project, file: &Path, text: &str) -> Result<Vec<Known>, Error> {
    let hooks = load_project_hooks(&project.root, &Catalog(project), &project.limits)?;
    let name = project.display_name(file);
    let doc = front_doc(&name, text, &project.limits);
    let front = match Directive::load(&name, text, &Catalog(project), &hooks, &project.limits) {
        Ok(d) => d.front,
        Err(e) => doc.as_ref().and_then(|d| d.typed().ok()).ok_or(e)?,
    };
    let known = front.inputs.iter().enumerate().map(|(i, input)| {
        let at = FieldPath(vec![PathSeg::Key("inputs".into()), PathSeg::Index(i)]);
        let required = if input.required { "required " } else { "" };
        Known {
            name: input.name.clone(),
            what: format!("{required}input"),
            value: Shown::Unknown("given by the caller when the directive runs".into()),
            default: input.default.as_ref().map(Value::to_string),
            origin: doc
                .as_ref()
                .and_then(|d| d.locate(&at, None))
                .map(|(line, column)| (name.clone(), line, column)),
        }
    });
    Ok(known.collect())
}

/// The front matter of directive `text` (named `name`) as a document whose lines are the
/// file's, when it reads as one.
fn front_doc(name: &str, text: &str, limits: &Limits) -> Option<Document> {
    let rest = text.strip_prefix("---\n")?;
    let end = rest.find("\n---")? + 1;
    let front = format!("\n{}", &rest[..end]);
    Document::parse(name, front.into_bytes(), Format::Yaml, limits).ok()
}
