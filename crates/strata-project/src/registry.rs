//! The project and its `tools/` tree: finding the project root, id ↔ path, listing tools,
//! and did-you-mean for unknown ids.

use std::path::{Component, Path, PathBuf};
use std::sync::{Arc, OnceLock};

use serde_json::Value;
use strata_core::{did_you_mean, Error, ErrorKind, Layer, Limits};
use strata_doc::{Document, Format};

use crate::cache::{CompiledTool, TextMemo, ToolCache};
use crate::settings::Settings;

/// A project: a directory holding `tools/` (and optionally `.env` and `.venv`). Clones share
/// one cache of compiled tools.
#[derive(Debug, Clone)]
pub struct Project {
    /// The project root, absolute.
    pub root: PathBuf,
    /// The limits applied to every document and template (the settings' limits).
    pub limits: Limits,
    /// The settings in force: `strata.yaml` and `STRATA_*` variables over the defaults.
    pub settings: Arc<Settings>,
    cache: Arc<ToolCache>,
    /// `.env`, read once while it does not change.
    dotenv: Arc<TextMemo>,
    /// Where the root really is (every symbolic link resolved), found on first use.
    real_root: Arc<OnceLock<PathBuf>>,
}

/// `path` made absolute, with `.` and `..` resolved by its written components (no symbolic
/// link is followed), so its ancestors are the folders it names.
pub fn normal(path: &Path) -> PathBuf {
    let absolute = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
    let mut out = PathBuf::new();
    for c in absolute.components() {
        match c {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            c => out.push(c),
        }
    }
    out
}

/// Whether the folder `dir` lies inside `root`: by its written path with `..` resolved, or
/// where it really is (every symbolic link resolved).
fn lies_in(dir: &Path, root: &Path) -> bool {
    if normal(dir).starts_with(normal(root)) {
        return true;
    }
    match (dir.canonicalize(), root.canonicalize()) {
        (Ok(dir), Ok(root)) => dir.starts_with(root),
        _ => false,
    }
}

/// One entry of `strata tools`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolEntry {
    /// The tool's id.
    pub id: String,
    /// Its description, or why it could not be read.
    pub description: Result<String, String>,
}

const EXTENSIONS: [&str; 2] = ["yaml", "yml"];

impl Project {
    /// The project rooted at `root` (which must hold `tools/`), with its settings
    /// (`strata.yaml`, then the process's `STRATA_*` variables).
    pub fn at(root: &Path) -> Result<Project, Error> {
        let mut project = Project::bare(root)?;
        project.settings = Arc::new(Settings::load(&project.root, &|name| {
            std::env::var(name).ok()
        })?);
        project.limits = project.settings.limits.clone();
        Ok(project)
    }

    /// The project rooted at `root` with the default settings (`strata.yaml` is not read).
    pub fn bare(root: &Path) -> Result<Project, Error> {
        let root = std::path::absolute(root).map_err(|e| {
            Error::new(
                Layer::REQUEST,
                ErrorKind::Io,
                format!("cannot resolve `{}`: {e}", root.display()),
            )
            .with_source(e)
        })?;
        if !root.join("tools").is_dir() {
            return Err(Error::new(
                Layer::REQUEST,
                ErrorKind::Request,
                format!("`{}` has no `tools/` directory", root.display()),
            )
            .with_hint("a project is a directory holding tools/"));
        }
        Ok(Project {
            root,
            limits: Limits::default(),
            settings: Arc::default(),
            cache: Arc::default(),
            dotenv: Arc::default(),
            real_root: Arc::default(),
        })
    }

    /// Tool `id` compiled (once; again only when a file of its chain changed).
    pub fn compiled(&self, id: &str) -> Result<Arc<CompiledTool>, Error> {
        self.cache.get(self, id)
    }

    /// Tool `id` as the cache holds it compiled, when every file of its chain is unchanged
    /// since; `None` when it is not compiled (this compiles nothing).
    pub fn compiled_if_current(&self, id: &str) -> Option<Arc<CompiledTool>> {
        self.cache.current(self, id)
    }

    /// How the cache of compiled tools has served so far (shared by every clone).
    pub fn cache_stats(&self) -> crate::cache::CacheStats {
        self.cache.stats()
    }

    /// The nearest ancestor of `start` (itself included) that holds `tools/`.
    pub fn discover(start: &Path) -> Result<Project, Error> {
        let start = std::path::absolute(start).unwrap_or_else(|_| start.to_path_buf());
        match start.ancestors().find(|d| d.join("tools").is_dir()) {
            Some(root) => Project::at(root),
            None => Err(Error::new(
                Layer::REQUEST,
                ErrorKind::Request,
                format!(
                    "no `tools/` directory in `{}` or any of its parents",
                    start.display()
                ),
            )
            .with_hint(
                "run strata inside a project, pass --project DIR, or create one with `strata init`",
            )),
        }
    }

    /// The nearest ancestor of `start` (itself included) that holds `tools/`, without
    /// opening the project there.
    pub fn find_root(start: &Path) -> Option<PathBuf> {
        let start = std::path::absolute(start).unwrap_or_else(|_| start.to_path_buf());
        start
            .ancestors()
            .find(|d| d.join("tools").is_dir())
            .map(Path::to_path_buf)
    }

    /// The project of `file`, a file given by path (a directive, a tool, a plan): the
    /// project of the current directory when `file` lies inside it, whatever folders named
    /// `tools/` lie between (`directives/test/tools/` does not make `directives/test/` a
    /// project of its own); else the nearest ancestor of the file's folder that holds
    /// `tools/`.
    pub fn discover_for(file: &Path) -> Result<Project, Error> {
        let folder = file
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .unwrap_or(Path::new("."));
        match Project::find_root(Path::new(".")) {
            Some(root) if lies_in(folder, &root) => Project::at(&root),
            _ => Project::discover(&normal(folder)),
        }
    }

    /// The `tools/` directory.
    pub fn tools_dir(&self) -> PathBuf {
        self.root.join("tools")
    }

    /// A path shown in messages: relative to the project root when it is inside it.
    pub fn display_name(&self, path: &Path) -> String {
        path.strip_prefix(&self.root)
            .unwrap_or(path)
            .display()
            .to_string()
    }

    /// The file of tool `id`, if there is one inside `tools/` (see [`Project::find_tool`]).
    pub fn tool_path(&self, id: &str) -> Option<PathBuf> {
        self.find_tool(id).ok().flatten()
    }

    /// The file of tool `id`: `None` when there is none, a Forbidden error when it is a
    /// symbolic link leading outside `tools/` (see [`strata_doc::confine`]). The path is
    /// the one shown in messages; read it with [`Project::read`].
    pub fn find_tool(&self, id: &str) -> Result<Option<PathBuf>, Error> {
        if !valid_id(id) {
            return Ok(None);
        }
        let base = self.tools_dir().join(id);
        let Some(path) = EXTENSIONS
            .iter()
            .map(|ext| base.with_extension(ext))
            .find(|p| p.is_file())
        else {
            return Ok(None);
        };
        self.confine(&path)?;
        Ok(Some(path))
    }

    /// The file of tool `id`, or an error: unknown (with a did-you-mean hint), or leading
    /// outside `tools/`.
    pub fn require_tool(&self, id: &str) -> Result<PathBuf, Error> {
        self.find_tool(id)?
            .ok_or_else(|| self.unknown_tool(id, "tool"))
    }

    /// Where `path` really is, when that is inside the project directory it belongs to:
    /// `tools/`, `directives/`, `hooks/`, `plans/` or `prompts/` for a path under one of
    /// them, the project root otherwise (`.env`, a directive given by path). A Forbidden
    /// error when a symbolic link leads elsewhere.
    pub fn confine(&self, path: &Path) -> Result<PathBuf, Error> {
        let shown = self.display_name(path);
        let dir = ["tools", "directives", "hooks", "plans", "prompts"]
            .into_iter()
            .find(|d| Path::new(&shown).starts_with(d));
        let real_root = self.real_root();
        match dir {
            Some(d) => {
                let dir = self.root.join(d);
                let real_dir = strata_doc::confine_in(&dir, &self.root, real_root, d, "")
                    .unwrap_or_else(|_| dir.canonicalize().unwrap_or_else(|_| dir.clone()));
                strata_doc::confine_in(path, &dir, &real_dir, &shown, &format!("`{d}/`"))
            }
            None => strata_doc::confine_in(path, &self.root, real_root, &shown, "the project"),
        }
    }

    /// Where the root really is, resolved once per project.
    fn real_root(&self) -> &Path {
        self.real_root.get_or_init(|| {
            self.root
                .canonicalize()
                .unwrap_or_else(|_| self.root.clone())
        })
    }

    /// Reads a project file: confined (see [`Project::confine`]) and within the document
    /// limit.
    pub fn read(&self, path: &Path) -> Result<Vec<u8>, Error> {
        let real = self.confine(path)?;
        strata_doc::read_file(&real, &self.display_name(path), &self.limits)
    }

    /// [`Project::read`] as UTF-8 text.
    pub fn read_text(&self, path: &Path) -> Result<String, Error> {
        let real = self.confine(path)?;
        strata_doc::read_text(&real, &self.display_name(path), &self.limits)
    }

    /// The text of the project's `.env`: `None` when there is none. Read once while it does
    /// not change (every later call costs an `lstat`), confined like every read.
    pub fn dotenv_text(&self) -> Result<Option<Arc<str>>, Error> {
        self.dotenv.text(self, &self.root.join(".env"))
    }

    /// The error for an unknown id; `what` is `tool` or `executor`.
    pub fn unknown_tool(&self, id: &str, what: &str) -> Error {
        let ids = self.tool_ids();
        let err = Error::new(
            Layer::REQUEST,
            ErrorKind::UnknownTool,
            format!("unknown {what} `{id}`"),
        );
        match did_you_mean(id, &ids) {
            Some(best) => err.with_hint(format!("did you mean `{best}`?")),
            None => err.with_hint("run `strata tools` to list the tools"),
        }
    }

    /// The canned-response fields tool `id` declares (`response_fields` of its file); none
    /// when the file cannot be read as a tool.
    pub fn response_fields(&self, id: &str) -> Vec<String> {
        self.tool_path(id)
            .and_then(|path| crate::chain::load_link(self, id, &path).ok())
            .map(|link| link.file.response_fields)
            .unwrap_or_default()
    }

    /// Every tool id under `tools/`, sorted (see [`strata_doc::walk`]: each directory is
    /// read once, and links to directories outside `tools/` are not followed).
    pub fn tool_ids(&self) -> Vec<String> {
        let tools = self.tools_dir();
        let mut ids: Vec<String> = strata_doc::walk(&tools, &EXTENSIONS)
            .iter()
            .filter_map(|p| {
                let rel = p.strip_prefix(&tools).ok()?.with_extension("");
                let parts: Option<Vec<&str>> =
                    rel.components().map(|c| c.as_os_str().to_str()).collect();
                Some(parts?.join("/"))
            })
            .collect();
        ids.sort();
        ids.dedup();
        ids
    }

    /// The id of a tool file given by path (relative to `cwd`), when it lies under `tools/`.
    pub fn id_of_path(&self, path: &Path) -> Result<String, Error> {
        let abs = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
        if abs.starts_with(self.tools_dir()) {
            // A link inside tools/ that leads out.
            self.confine(&abs)?;
        }
        let abs = abs.canonicalize().unwrap_or(abs);
        let tools = self.tools_dir();
        let tools = tools.canonicalize().unwrap_or(tools);
        let rel = abs.strip_prefix(&tools).map_err(|_| {
            Error::new(
                Layer::REQUEST,
                ErrorKind::Forbidden,
                format!("`{}` is not under `{}`", path.display(), tools.display()),
            )
            .with_hint("tool files live under the project's tools/ directory")
        })?;
        let ext_ok = rel
            .extension()
            .and_then(|e| e.to_str())
            .is_some_and(|e| EXTENSIONS.contains(&e));
        if !ext_ok {
            return Err(Error::new(
                Layer::REQUEST,
                ErrorKind::Forbidden,
                format!("`{}` is not a .yaml or .yml file", path.display()),
            ));
        }
        let id = rel
            .with_extension("")
            .components()
            .map(|c| c.as_os_str().to_string_lossy().into_owned())
            .collect::<Vec<_>>()
            .join("/");
        Ok(id)
    }

    /// The `kind` a tool file declares (`tool` when it declares none); `None` when the file
    /// cannot be read as YAML.
    pub fn tool_kind(&self, id: &str) -> Option<String> {
        match self.compiled_if_current(id) {
            Some(tool) => compiled_kind(&tool),
            None => self.read_kind(id),
        }
    }

    /// The `kind` tool `id`'s file declares, read from the file.
    fn read_kind(&self, id: &str) -> Option<String> {
        let path = self.tool_path(id)?;
        let bytes = self.read(&path).ok()?;
        let doc =
            Document::parse(&self.display_name(&path), bytes, Format::Yaml, &self.limits).ok()?;
        Some(declared_kind(&doc.value))
    }

    /// Whether an action, step or hook may call tool `id`: it exists and runs on an executor
    /// (a graph does not). Other problems of its chain are reported when it is compiled.
    ///
    /// A tool compiled and unchanged since is told by the file it was compiled from (a
    /// resident `strata run --batch` asks before every run), without finding or reading the
    /// file again.
    pub fn callable(&self, id: &str) -> Result<(), Error> {
        let kind = match self.compiled_if_current(id) {
            Some(tool) => compiled_kind(&tool),
            None if self.tool_path(id).is_none() => return Err(self.unknown_tool(id, "tool")),
            None => self.read_kind(id),
        };
        match kind.as_deref() {
            Some("graph") => Err(Error::new(
                Layer::REQUEST,
                ErrorKind::Invalid,
                format!("`{id}` is a graph, not a tool that runs on an executor"),
            )
            .with_hint(format!(
                "run the graph itself with `strata run {id}`; an action calls a tool"
            ))),
            _ => Ok(()),
        }
    }

    /// Every tool with its description (or the reason it could not be read).
    pub fn list(&self) -> Vec<ToolEntry> {
        self.tool_ids()
            .into_iter()
            .map(|id| {
                let description = self.describe(&id);
                ToolEntry { id, description }
            })
            .collect()
    }

    fn describe(&self, id: &str) -> Result<String, String> {
        let path = self
            .find_tool(id)
            .map_err(|e| e.message().to_string())?
            .ok_or("file vanished")?;
        let bytes = self.read(&path).map_err(|e| e.message().to_string())?;
        let name = self.display_name(&path);
        let doc = Document::parse(&name, bytes.clone(), Format::Yaml, &self.limits)
            .map_err(|e| e.message().to_string())?;
        let is_tool = match doc.value.get("kind") {
            None => true,
            Some(kind) => kind == "tool",
        };
        if is_tool {
            crate::tool_file::read_tool_file(&name, bytes, &self.limits)
                .map_err(|e| e.message().to_string())?;
        }
        Ok(match doc.value.get("description") {
            Some(Value::String(s)) => s.clone(),
            _ => String::new(),
        })
    }
}

/// True for an id made of plain path segments (no `..`, no absolute path, no empty segment).
fn valid_id(id: &str) -> bool {
    !id.is_empty()
        && !id.starts_with('/')
        && Path::new(id)
            .components()
            .all(|c| matches!(c, Component::Normal(_)))
        && id.split('/').all(|s| !s.is_empty())
}

/// The `kind` a tool's document declares (`tool` when it declares none).
fn declared_kind(value: &Value) -> String {
    match value.get("kind") {
        Some(Value::String(kind)) => kind.clone(),
        _ => "tool".into(),
    }
}

/// The `kind` of a compiled tool: its own file's, the first of its chain.
fn compiled_kind(tool: &CompiledTool) -> Option<String> {
    tool.chain
        .links
        .first()
        .map(|link| declared_kind(&link.doc.value))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn project(files: &[&str]) -> (tempfile::TempDir, Project) {
        let dir = tempfile::tempdir().unwrap();
        for f in files {
            let p = dir.path().join("tools").join(f);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, "description: about ".to_string() + f + "\n").unwrap();
        }
        std::fs::create_dir_all(dir.path().join("tools")).unwrap();
        let p = Project::at(dir.path()).unwrap();
        (dir, p)
    }

    #[test]
    fn ids_are_paths_without_extension() {
        let (_d, p) = project(&[
            "runtimes/python.yaml",
            "examples/hello.yml",
            "examples/scripts/x.py",
            ".hidden/y.yaml",
        ]);
        assert_eq!(p.tool_ids(), ["examples/hello", "runtimes/python"]);
        assert!(p.tool_path("examples/hello").is_some());
        assert!(p.tool_path("../tools/examples/hello").is_none());
        let list = p.list();
        assert_eq!(list[0].description, Ok("about examples/hello.yml".into()));
    }

    #[test]
    fn unknown_ids_suggest_the_closest() {
        let (_d, p) = project(&["examples/hello.yaml", "runtimes/python.yaml"]);
        let e = p.require_tool("examples/helo").unwrap_err();
        assert_eq!(e.message(), "unknown tool `examples/helo`");
        assert_eq!(e.hint(), Some("did you mean `examples/hello`?"));
        let e = p.require_tool("zzz").unwrap_err();
        assert_eq!(e.hint(), Some("run `strata tools` to list the tools"));
    }

    #[test]
    fn paths_map_to_ids() {
        let (d, p) = project(&["examples/hello.yaml"]);
        let path = d.path().join("tools/examples/hello.yaml");
        assert_eq!(p.id_of_path(&path).unwrap(), "examples/hello");
        let e = p.id_of_path(&d.path().join("x.yaml")).unwrap_err();
        assert!(e.message().contains("is not under"), "{}", e.message());
    }

    #[test]
    fn a_folder_lies_in_a_root_by_its_path_with_dots_resolved() {
        let (d, _p) = project(&["a.yaml"]);
        let root = d.path();
        assert!(lies_in(&root.join("directives/test"), root));
        assert!(lies_in(root, root));
        assert!(!lies_in(&root.join("directives/../.."), root));
        assert!(!lies_in(root.parent().unwrap(), root));
    }

    #[test]
    fn a_compiled_tool_is_callable_until_its_file_changes_or_goes() {
        let (d, p) = project(&[]);
        let write = |rel: &str, text: &str| {
            let path = d.path().join("tools").join(rel);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        };
        write(
            "runtimes/subprocess.yaml",
            include_str!("../../../tools/runtimes/subprocess.yaml"),
        );
        write(
            "t.yaml",
            "executor: runtimes/subprocess\nconfig:\n  command: \"true\"\n",
        );
        p.compiled("t").unwrap();
        assert_eq!(p.callable("t"), Ok(()));
        assert_eq!(p.tool_kind("t").as_deref(), Some("tool"));
        // Rewritten as a graph: the compiled chain is no longer current, the file tells.
        write("t.yaml", "kind: graph\nstart: a\nnodes: {}\n");
        let e = p.callable("t").unwrap_err();
        assert_eq!(
            e.message(),
            "`t` is a graph, not a tool that runs on an executor"
        );
        assert_eq!(p.tool_kind("t").as_deref(), Some("graph"));
        std::fs::remove_file(d.path().join("tools/t.yaml")).unwrap();
        assert_eq!(p.callable("t").unwrap_err().message(), "unknown tool `t`");
    }

    #[test]
    fn discovery_walks_up() {
        let (d, _p) = project(&["a.yaml"]);
        let deep = d.path().join("tools/x/y");
        std::fs::create_dir_all(&deep).unwrap();
        let found = Project::discover(&deep).unwrap();
        assert_eq!(found.root, d.path());
    }
}
