//! A run's work sent off this machine — to Ray workers (`strata.ray`), or into an Argo
//! workflow ([`App::export_argo`]) — and the one rule of what must not go with it.
//!
//! * [`RunSecrets`]: the secret values of a run's tools — every `.env` value, and the value in
//!   strata's environment of each secret the project (`secrets:` of `strata.yaml`) or the
//!   tools' executor chains (`secrets:`) declare — of at least [`SHORTEST_SECRET`] bytes.
//!   [`RunSecrets::found_in`] is the one search of a value (user values, graph inputs, a plan,
//!   a manifest) for them: every string and key as written and, when it is JSON, once parsed
//!   (so an escape hides nothing), every number as text.
//! * [`ScaleOut`]: the checks of a run sent to Ray workers, before anything is submitted — the
//!   files of the upload ([`ScaleOut::check_upload`]: none holds a secret value, every tool the
//!   run needs is among them) and the tasks' arguments ([`ScaleOut::check_arguments`]).

use std::collections::{BTreeMap, BTreeSet, HashSet};
use std::fs::File;
use std::io::{ErrorKind as IoKind, Read};
use std::path::{Component, Path, PathBuf};

use memchr::memmem::Finder;
use serde_json::Value;
use strata_argo::tools_of;
use strata_core::{Error, ErrorKind, FieldPath, Layer, PathSeg};
use strata_project::ToolChain;

use crate::App;

/// Secret values shorter than this (bytes) are not searched for: they would be found in
/// ordinary text.
pub const SHORTEST_SECRET: usize = 4;

/// How much of a file is read at once when it is searched for secret values.
const CHUNK: usize = 1 << 20;

/// The secrets of a run's tools, by the one rule (see the module's documentation): the
/// variable names each tool reads as secret and the values nothing sent off this machine may
/// hold. Never shows a value.
pub struct RunSecrets {
    by_tool: BTreeMap<String, Vec<String>>,
    values: Vec<(String, String)>,
}

impl RunSecrets {
    /// The secrets of `tools` (ids): an error when `.env` cannot be read or parsed (a value
    /// it holds would go unsearched). A tool whose chain does not load declares nothing (the
    /// run refuses it on its own).
    pub fn read(app: &App, tools: &[String]) -> Result<RunSecrets, Error> {
        let dotenv = crate::secrets::dotenv_entries(app.project())?;
        let mut by_tool = BTreeMap::new();
        let mut declared = app.settings().secrets.value.clone();
        for tool in tools {
            if by_tool.contains_key(tool) {
                continue;
            }
            let mut names = ToolChain::load(app.project(), tool)
                .map(|c| c.secrets())
                .unwrap_or_default();
            for n in &names {
                if !declared.contains(n) {
                    declared.push(n.clone());
                }
            }
            for (k, _) in &dotenv {
                if !names.contains(k) {
                    names.push(k.clone());
                }
            }
            by_tool.insert(tool.clone(), names);
        }
        let mut values = dotenv;
        for name in declared {
            if let Ok(v) = std::env::var(&name) {
                values.push((name, v));
            }
        }
        values.retain(|(_, v)| v.len() >= SHORTEST_SECRET);
        Ok(RunSecrets { by_tool, values })
    }

    /// The secret variable names `tool` reads: its chain's `secrets` and every `.env` name.
    pub fn names(&self, tool: &str) -> Vec<String> {
        self.by_tool.get(tool).cloned().unwrap_or_default()
    }

    /// Every secret variable name the tools read, sorted, once each.
    pub fn tool_names(&self) -> Vec<&str> {
        let mut all: Vec<&str> = self
            .by_tool
            .values()
            .flatten()
            .map(String::as_str)
            .collect();
        all.sort_unstable();
        all.dedup();
        all
    }

    /// The names whose values are searched for, sorted, once each.
    pub fn searched(&self) -> Vec<&str> {
        let mut all: Vec<&str> = self.values.iter().map(|(n, _)| n.as_str()).collect();
        all.sort_unstable();
        all.dedup();
        all
    }

    /// The first secret (its variable's name) whose value `value` holds, and where: in a
    /// string or a key as written or, when it is JSON, once parsed; in a number's text.
    pub fn found_in(&self, value: &Value) -> Option<(&str, FieldPath)> {
        self.values.iter().find_map(|(name, secret)| {
            find(value, secret, &FieldPath::root(), true).map(|path| (name.as_str(), path))
        })
    }
}

/// The secret values a search looks for, by variable name, and the buffer it reads files
/// into (made once for every file).
struct Search<'a> {
    needles: Vec<(&'a str, Finder<'a>)>,
    /// How much of a chunk is kept before the next: the longest value less one byte.
    keep: usize,
    buf: Vec<u8>,
}

impl<'a> Search<'a> {
    fn new(values: &'a [(String, String)]) -> Search<'a> {
        let needles: Vec<(&str, Finder<'_>)> = values
            .iter()
            .map(|(name, value)| (name.as_str(), Finder::new(value.as_bytes())))
            .collect();
        let keep = values.iter().map(|(_, v)| v.len()).max().unwrap_or(1) - 1;
        Search {
            needles,
            keep,
            buf: Vec::new(),
        }
    }

    /// The first secret (its variable's name) whose value the file at `path` holds, read
    /// in chunks (a file of any size; a value across two chunks is found). A file that
    /// cannot be read holds none: it cannot be sent either.
    fn in_file(&mut self, path: &Path) -> Option<&'a str> {
        if self.needles.is_empty() {
            return None;
        }
        let mut file = File::open(path).ok()?;
        let (keep, buf) = (self.keep, &mut self.buf);
        buf.resize(keep + CHUNK, 0);
        let mut kept = 0;
        loop {
            let n = match file.read(&mut buf[kept..kept + CHUNK]) {
                Ok(0) => return None,
                Ok(n) => n,
                Err(e) if e.kind() == IoKind::Interrupted => continue,
                Err(_) => return None,
            };
            let data = &buf[..kept + n];
            if let Some((name, _)) = self.needles.iter().find(|(_, f)| f.find(data).is_some()) {
                return Some(name);
            }
            let len = data.len();
            kept = keep.min(len);
            buf.copy_within(len - kept..len, 0);
        }
    }
}

/// Where in `value` (under `path`) `secret` is: a string or key holding it as written or,
/// when `parse` and the string is JSON, once parsed; a number whose text holds it.
fn find(value: &Value, secret: &str, path: &FieldPath, parse: bool) -> Option<FieldPath> {
    let string_holds = |s: &str| {
        s.contains(secret)
            || (parse
                && serde_json::from_str::<Value>(s)
                    .is_ok_and(|v| find(&v, secret, path, false).is_some()))
    };
    match value {
        Value::String(s) => string_holds(s).then(|| path.clone()),
        Value::Number(n) => n.to_string().contains(secret).then(|| path.clone()),
        Value::Array(items) => items
            .iter()
            .enumerate()
            .find_map(|(i, v)| find(v, secret, &path.child(PathSeg::Index(i)), parse)),
        Value::Object(map) => map.iter().find_map(|(k, v)| {
            let at = path.child(PathSeg::Key(k.clone()));
            if string_holds(k) {
                Some(at)
            } else {
                find(v, secret, &at, parse)
            }
        }),
        Value::Bool(_) | Value::Null => None,
    }
}

/// A run sent to Ray workers, checked on this machine before anything is submitted: what it
/// needs uploaded and what it may not send (its [`RunSecrets`]).
pub struct ScaleOut {
    root: PathBuf,
    /// Each tool the run needs, and its file relative to the project (`/`-separated).
    needs: Vec<(String, String)>,
    secrets: RunSecrets,
}

impl App {
    /// The checks of a run of `tools` — the tools a plan's steps call, or a graph's id — sent
    /// to Ray workers. The run needs those tools, the tools a graph calls (its nodes', its
    /// foreach bodies', its hooks'), and each one's executor chain; their secrets are
    /// searched for. `None`: a run of any of the project's tools, which needs none of them
    /// in particular and whose secrets are every tool's.
    pub fn scale_out(&self, tools: Option<&[String]>) -> Result<ScaleOut, Error> {
        let (needs, secrets) = match tools {
            Some(tools) => {
                let ids = self.needed_tools(tools);
                (self.tool_files(&ids), RunSecrets::read(self, &ids)?)
            }
            None => (Vec::new(), RunSecrets::read(self, &self.tool_ids())?),
        };
        Ok(ScaleOut {
            root: self.root.clone(),
            needs,
            secrets,
        })
    }

    /// `tools`, the tools the graphs among them call, and the tools of their executor chains
    /// (those that exist), sorted.
    fn needed_tools(&self, tools: &[String]) -> Vec<String> {
        let mut need: Vec<String> = Vec::new();
        // Each tool once: a plan's steps mostly call a few tools many times.
        let given: BTreeSet<&String> = tools.iter().collect();
        let mut todo: Vec<String> = given.into_iter().map(|t| self.tool_named(t)).collect();
        while let Some(id) = todo.pop() {
            if need.contains(&id) || self.tool_path(&id).is_none() {
                continue;
            }
            // A graph has no executor chain: its tools are what it calls.
            if let Ok(chain) = ToolChain::load(self.project(), &id) {
                todo.extend(chain.links.iter().skip(1).map(|l| l.id.clone()));
            } else if self.is_graph(&id) {
                if let Ok(graph) = self.load_graph(&id) {
                    todo.extend(tools_of(&graph).into_iter().map(String::from));
                }
            }
            need.push(id);
        }
        need.sort();
        need
    }

    /// Each of `ids` with its file, relative to the project and `/`-separated.
    fn tool_files(&self, ids: &[String]) -> Vec<(String, String)> {
        let relative = |path: PathBuf| {
            let rel = path.strip_prefix(&self.root).ok()?.to_path_buf();
            let parts: Option<Vec<&str>> =
                rel.components().map(|c| c.as_os_str().to_str()).collect();
            Some(parts?.join("/"))
        };
        ids.iter()
            .filter_map(|id| Some((id.clone(), relative(self.tool_path(id)?)?)))
            .collect()
    }
}

impl ScaleOut {
    /// The secret names whose values are searched for, sorted (never a value).
    pub fn secret_names(&self) -> Vec<&str> {
        self.secrets.searched()
    }

    /// The tools the run needs, sorted.
    pub fn needed(&self) -> Vec<&str> {
        self.needs.iter().map(|(id, _)| id.as_str()).collect()
    }

    /// Checks the files that would be uploaded (`files`: paths relative to the project,
    /// `/`-separated): every tool the run needs is among them (else kind `invalid`), and none
    /// holds a secret value, whatever its size (else kind `forbidden`, naming the file and
    /// the variable, never the value).
    pub fn check_upload(&self, files: &[String]) -> Result<(), Error> {
        let shipped: HashSet<&str> = files.iter().map(String::as_str).collect();
        let missing: Vec<String> = self
            .needs
            .iter()
            .filter(|(_, file)| !shipped.contains(file.as_str()))
            .map(|(id, _)| format!("`{id}`"))
            .collect();
        if !missing.is_empty() {
            return Err(Error::new(
                Layer::REQUEST,
                ErrorKind::Invalid,
                format!(
                    "the run needs tool {}, left out of the upload to the Ray workers (by excludes= or .gitignore)",
                    missing.join(", ")
                ),
            )
            .with_hint(
                "take it out of excludes= and .gitignore, or set RAY_RUNTIME_ENV_IGNORE_GITIGNORE=1",
            ));
        }
        let mut search = Search::new(&self.secrets.values);
        for rel in files {
            let path = self.file(rel)?;
            if let Some(name) = search.in_file(&path) {
                return Err(Error::new(
                    Layer::REQUEST,
                    ErrorKind::Forbidden,
                    format!("`{rel}` holds the value of secret `{name}`: it would be uploaded to the Ray workers"),
                )
                .with_hint("exclude it (excludes=[...] or .gitignore), or keep the value only in .env or the environment"));
            }
        }
        Ok(())
    }

    /// Checks what the run's tasks would be given (`what`: the user values, the graph's
    /// inputs, the plan): it holds no secret value (kind `forbidden`, naming the variable,
    /// never the value). A task's arguments carry secret markers, never values.
    pub fn check_arguments(&self, what: &str, value: &Value) -> Result<(), Error> {
        match self.secrets.found_in(value) {
            None => Ok(()),
            Some((name, _)) => Err(Error::new(
                Layer::REQUEST,
                ErrorKind::Forbidden,
                format!("the Ray tasks' arguments would hold the value of secret `{name}` (found in {what})"),
            )
            .with_hint("keep the value in .env and let the tool read its variable")),
        }
    }

    /// File `rel` of the project: an error when it is not a relative path inside it.
    fn file(&self, rel: &str) -> Result<PathBuf, Error> {
        let inside = Path::new(rel)
            .components()
            .all(|c| matches!(c, Component::Normal(_) | Component::CurDir));
        if rel.is_empty() || !inside {
            return Err(Error::new(
                Layer::REQUEST,
                ErrorKind::Invalid,
                format!(
                    "`{}` is not a path inside the project",
                    strata_core::shown(rel)
                ),
            )
            .with_hint("give the files of the upload relative to the project's root"));
        }
        Ok(self.root.join(rel))
    }
}
