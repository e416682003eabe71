//! The import as a whole: reading the RyeOS tree (project space, then each `--space`),
//! deciding each file's era and kind, converting what is used, writing the new project and
//! checking it through the application layer (MAPPING.md §1).

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::path::{Path, PathBuf};

use serde_json::{Map, Value};
use strata_core::{Error, ErrorKind, Layer};

use crate::model::{Catalog, FileImport, Written};
use crate::position::yaml_key_position;
use crate::report::{CheckSummary, Entry, ImportReport, Notice};
use crate::tool::ToolContext;
use crate::util::plain_path;
use crate::yaml::read_yaml;
use crate::{code, directive, graph, hook, target, tool};

/// strata's primitive, the very file `strata init` writes.
const SUBPROCESS: &str = include_str!("../../../tools/runtimes/subprocess.yaml");

/// The RyeOS era a file belongs to, detected per file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Era {
    /// The Python era (`tool_type:`, `executor_id: rye/…`, XML directives, code tools).
    Python,
    /// The Rust era (HEAD: `executor_id: "@subprocess"`, front-matter directives,
    /// `.ai/runtimes/`).
    Head,
}

impl Era {
    /// `py` or `head`.
    pub fn name(self) -> &'static str {
        match self {
            Era::Python => "py",
            Era::Head => "head",
        }
    }
}

/// What a RyeOS file is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ItemKind {
    /// A YAML tool or runtime under `.ai/tools/`.
    Tool,
    /// A `tool_type: graph` file under `.ai/tools/`.
    Graph,
    /// A code file with `__executor_id__` under `.ai/tools/`.
    Code,
    /// A directive under `.ai/directives/`.
    Directive,
    /// `.ai/config/agent/hook_conditions.yaml`.
    Hooks,
    /// A HEAD `.ai/runtimes/*.yaml` daemon descriptor.
    Runtime,
}

impl ItemKind {
    /// The kind's name in the report.
    pub fn name(self) -> &'static str {
        match self {
            ItemKind::Tool => "tool",
            ItemKind::Graph => "graph",
            ItemKind::Code => "code",
            ItemKind::Directive => "directive",
            ItemKind::Hooks => "hooks",
            ItemKind::Runtime => "runtime",
        }
    }
}

/// What `strata import ryeos` is asked to do.
#[derive(Clone, Debug)]
pub struct ImportOptions {
    /// The RyeOS project directory (holding `.ai/`).
    pub source: PathBuf,
    /// The new strata project directory: absent or empty.
    pub target: PathBuf,
    /// RyeOS spaces (directories holding `.ai/`), searched after the project, in order.
    pub spaces: Vec<PathBuf>,
}

/// One file found under a space's `.ai/`.
#[derive(Clone, Debug)]
struct Found {
    /// 0 for the project, `n` for the n-th `--space`.
    space: usize,
    /// Its path under `.ai/`, `/`-separated.
    rel: String,
    /// The real file to read (links resolved and confined).
    real: PathBuf,
    /// Why the file is neither read nor copied, when it is not.
    unread: Option<Unread>,
}

/// Why a file found under `.ai/` is neither read nor copied (in the project, it is refused
/// with the reason; in a space, it is as if absent).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Unread {
    /// A link leading outside its space.
    Escapes,
    /// A name that is not UTF-8.
    NotUtf8,
    /// A name holding a control character.
    Control,
}

impl Unread {
    /// The code and reason of the refusal.
    fn refusal(self) -> (&'static str, &'static str) {
        match self {
            Unread::Escapes => (
                "IMP-escape",
                "a symbolic link leading outside the RyeOS tree: not read, not copied",
            ),
            Unread::NotUtf8 => (
                "IMP-name",
                "the name is not UTF-8: not read, not copied (strata's ids and paths are printable text; rename it)",
            ),
            Unread::Control => (
                "IMP-name",
                "the name holds a control character: not read, not copied (strata's ids and paths are printable text; rename it)",
            ),
        }
    }
}

/// One convertible item.
#[derive(Clone, Debug)]
struct Item {
    found: Found,
    kind: ItemKind,
    id: String,
    text: String,
}

/// An error of the import as a whole (exit code 2).
pub(crate) fn fail(message: String, hint: &str) -> Error {
    Error::new(Layer::new("import"), ErrorKind::Invalid, message).with_hint(hint.to_owned())
}

/// Runs the whole import: reads, converts, writes and checks. An `Err` means nothing could
/// be imported (exit code 2); refusals and check errors are in the report.
pub fn import_ryeos(opts: &ImportOptions) -> Result<ImportReport, Error> {
    let target = &opts.target;
    let mut roots = vec![space_root(&opts.source, "the RyeOS project")?];
    for s in &opts.spaces {
        roots.push(space_root(s, "the --space")?);
    }
    target::check(target, &roots)?;

    // Every file of every space, sorted.
    let mut per_space: Vec<Vec<Found>> = Vec::new();
    for (i, root) in roots.iter().enumerate() {
        let mut files = Vec::new();
        walk(root, root, "", i, &mut files, &mut BTreeSet::new()).map_err(|e| {
            fail(
                format!("cannot read `{}`: {e}", root.display()),
                "check the permissions of the RyeOS tree",
            )
            .with_source(e)
        })?;
        files.sort_by(|a, b| a.rel.cmp(&b.rel));
        per_space.push(files);
    }

    // Items by id, the first space that has one winning (RyeOS's resolution order).
    let mut items: Vec<Item> = Vec::new();
    let mut kept: Vec<Found> = Vec::new();
    let mut unread: Vec<(Found, Unread)> = Vec::new();
    let mut execution: Option<(String, Map<String, Value>)> = None;
    for files in &per_space {
        for f in files {
            if let Some(why) = f.unread {
                if f.space == 0 {
                    unread.push((f.clone(), why));
                }
                continue;
            }
            let Ok(bytes) = std::fs::read(&f.real) else {
                continue;
            };
            let text = String::from_utf8(bytes).ok();
            if f.rel == "config/execution/execution.yaml" && execution.is_none() {
                if let Some(Ok(Value::Object(m))) = text.as_deref().map(read_yaml) {
                    execution = Some((format!(".ai/{}", f.rel), m));
                }
            }
            match text.as_deref().and_then(|t| classify(&f.rel, t)) {
                Some((kind, id)) => items.push(Item {
                    found: f.clone(),
                    kind,
                    id,
                    text: text.unwrap_or_default(),
                }),
                None if f.space == 0 => kept.push(f.clone()),
                None => {}
            }
        }
    }
    let mut catalog = Catalog::default();
    let mut by_id: BTreeMap<(bool, String), usize> = BTreeMap::new();
    for (i, item) in items.iter().enumerate() {
        let is_tool = matches!(item.kind, ItemKind::Tool | ItemKind::Graph | ItemKind::Code);
        if !matches!(
            item.kind,
            ItemKind::Tool | ItemKind::Graph | ItemKind::Code | ItemKind::Directive
        ) {
            continue;
        }
        let key = (is_tool, item.id.clone());
        match by_id.get(&key).map(|&w| &items[w]) {
            None => {
                by_id.insert(key, i);
            }
            // In one space, a YAML definition wins over a code file of the same id.
            Some(w)
                if w.found.space == item.found.space
                    && w.kind == ItemKind::Code
                    && item.kind != ItemKind::Code =>
            {
                by_id.insert(key, i);
            }
            Some(_) => {}
        }
        if item.kind == ItemKind::Graph {
            catalog.graphs.insert(item.id.clone());
        }
        if is_tool {
            catalog.tools.insert(item.id.clone());
        } else {
            catalog.directives.insert(item.id.clone());
        }
    }
    // A YAML definition's code file: the code item of its id in its space.
    let mut code_items: BTreeMap<(usize, &str), &Item> = BTreeMap::new();
    for it in items.iter().filter(|it| it.kind == ItemKind::Code) {
        code_items.entry((it.found.space, &it.id)).or_insert(it);
    }
    for (&(is_tool, ref id), &w) in &by_id {
        if !is_tool || items[w].kind == ItemKind::Code {
            continue;
        }
        if let Some(code) = code_items.get(&(items[w].found.space, id.as_str())) {
            let rel = code
                .found
                .rel
                .strip_prefix("tools/")
                .unwrap_or(&code.found.rel);
            catalog.code_beside.insert(id.clone(), rel.to_owned());
        }
    }
    let ctx = ToolContext { execution };

    // Convert the project's items, then the space items they use, to a fixpoint.
    // Each item is queued once.
    let mut queued: BTreeSet<usize> = items
        .iter()
        .enumerate()
        .filter(|(_, it)| it.found.space == 0)
        .map(|(i, _)| i)
        .collect();
    let mut queue: VecDeque<usize> = queued.iter().copied().collect();
    let mut entries: Vec<(usize, FileImport)> = Vec::new();
    while let Some(i) = queue.pop_front() {
        let item = &items[i];
        let imported = match shadowed_by(item, i, &items, &by_id) {
            Some(winner) => shadowed(item, winner),
            None => convert(item, &catalog, &ctx),
        };
        for id in references(&imported) {
            if let Some(&j) = by_id.get(&(true, id)) {
                if queued.insert(j) {
                    queue.push_back(j);
                }
            }
        }
        entries.push((i, imported));
    }
    entries.sort_by(|a, b| {
        let (x, y) = (&items[a.0].found, &items[b.0].found);
        (x.space, &x.rel).cmp(&(y.space, &y.rel))
    });

    // Files written by two items: identical texts are written once; otherwise the first
    // (in walk order) wins and the later one is told.
    let mut owner: BTreeMap<String, (usize, String)> = BTreeMap::new();
    owner.insert(
        "tools/runtimes/subprocess.yaml".into(),
        (usize::MAX, SUBPROCESS.to_owned()),
    );
    for (n, (_, imp)) in entries.iter_mut().enumerate() {
        let mut keep: Vec<Written> = Vec::new();
        let mut clashes = Vec::new();
        for w in imp.written.drain(..) {
            match owner.get(&w.path) {
                Some((_, text)) if *text == w.contents => {}
                Some(_) => clashes.push(format!("`{}` is also written, differently, by an earlier file: this file's version is not written", w.path)),
                None => match file_and_directory(&owner, &w.path) {
                    Some(other) => clashes.push(format!("`{}` cannot be written: the new project has `{other}` (a path cannot be both a file and a directory)", w.path)),
                    None => {
                        owner.insert(w.path.clone(), (n, w.contents.clone()));
                        keep.push(w);
                    }
                },
            }
        }
        let nothing_left = keep.is_empty() && !clashes.is_empty();
        imp.written = keep;
        if nothing_left {
            let why = clashes.join("; ");
            *imp = std::mem::replace(imp, FileImport::imported(String::new())).refuse(
                "IMP-conflict",
                format!("nothing of this file is written: {why}"),
            );
        } else {
            for message in clashes {
                imp.warn("IMP-conflict", message, 0, 0);
            }
        }
        imp.finish();
    }

    // Write the new project, the target held for this import until its report is written.
    let _held = target::take(target)?;
    let write = |rel: &str, bytes: &[u8]| -> Result<(), Error> {
        if !plain_path(rel) {
            return Err(fail(
                format!("refusing to write `{rel}` outside the new project"),
                "this is a bug of the importer",
            ));
        }
        let path = target.join(rel);
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).map_err(|e| {
                fail(
                    format!("cannot create `{}`: {e}", dir.display()),
                    "check the permissions of the target",
                )
                .with_source(e)
            })?;
        }
        std::fs::write(&path, bytes).map_err(|e| {
            fail(
                format!("cannot write `{}`: {e}", path.display()),
                "check the permissions of the target",
            )
            .with_source(e)
        })
    };
    // `.ai/`: every project file, and the space items used, byte for byte.
    let mut copied: BTreeSet<String> = BTreeSet::new();
    for f in per_space[0].iter().filter(|f| f.unread.is_none()) {
        if let Ok(bytes) = std::fs::read(&f.real) {
            write(&format!(".ai/{}", f.rel), &bytes)?;
            copied.insert(f.rel.clone());
        }
    }
    for (i, _) in &entries {
        let f = &items[*i].found;
        if f.space > 0 && copied.insert(f.rel.clone()) {
            write(&format!(".ai/{}", f.rel), items[*i].text.as_bytes())?;
        }
    }
    write("tools/runtimes/subprocess.yaml", SUBPROCESS.as_bytes())?;
    for (_, imp) in &entries {
        for w in &imp.written {
            write(&w.path, w.contents.as_bytes())?;
        }
    }

    let mut all: Vec<Entry> = Vec::new();
    // Signature comments: those of every project file, and of the space items used.
    let mut signatures = 0;
    for (i, imp) in entries {
        let item = &items[i];
        if item.found.space > 0 {
            signatures += count_signatures(&item.text);
        }
        all.push(Entry {
            space: item.found.space,
            era: era_of(item),
            kind: item.kind,
            import: imp,
            check_errors: 0,
        });
    }
    // Links leaving the tree and names that are no text: refused, never read.
    for (f, why) in unread {
        let (code, reason) = why.refusal();
        let imp = FileImport::imported(format!(".ai/{}", f.rel)).refuse(code, reason);
        all.push(Entry {
            space: 0,
            era: Era::Python,
            kind: ItemKind::Tool,
            import: imp,
            check_errors: 0,
        });
    }
    all.sort_by(|a, b| (a.space, &a.import.source).cmp(&(b.space, &b.import.source)));

    // Project-level notices.
    let mut notices = Vec::new();
    for f in per_space[0].iter().filter(|f| f.unread.is_none()) {
        if let Ok(text) = std::fs::read_to_string(&f.real) {
            signatures += count_signatures(&text);
        }
    }
    if signatures > 0 {
        notices.push(Notice {
            code: "IMP-signature".into(),
            message: format!("{signatures} signature comments (`# rye:signed:…`, `<!-- ryeos:signed:… -->`) dropped: strata does not verify RyeOS signatures"),
        });
    }
    if let Some(notice) = kept_kinds(&kept) {
        notices.push(notice);
    }
    let directives = all.iter().filter(|e| e.kind == ItemKind::Directive).count();
    if directives > 0 {
        notices.push(Notice {
            code: "IMP-llm".into(),
            message: format!("RyeOS directives are LLM-thread prompts; strata renders the prompt and runs declared actions, it never calls a model ({directives} directives)"),
        });
    }

    // The new project, checked by the application layer.
    let check = match strata_app::App::at(target).and_then(|app| app.check()) {
        Ok(report) => CheckSummary::of(&report),
        Err(e) => CheckSummary::failed(&e),
    };
    let errors = check.errors_by_file();
    for e in &mut all {
        e.check_errors = e
            .import
            .written
            .iter()
            .filter_map(|w| errors.get(w.path.as_str()))
            .sum();
    }
    let report = ImportReport {
        spaces: opts.spaces.len(),
        entries: all,
        kept: kept.iter().map(|f| format!(".ai/{}", f.rel)).collect(),
        notices,
        check,
    };
    write(
        "IMPORT-REPORT.json",
        (serde_json::to_string_pretty(&report.to_json()).unwrap_or_default() + "\n").as_bytes(),
    )?;
    write("IMPORT-REPORT.md", report.to_markdown().as_bytes())?;
    Ok(report)
}

/// The notice of the kept files that are RyeOS daemon items (a YAML map with a top-level
/// `kind:`, such as `kind: service`, `handler`, `node`): copied under `.ai/`, not imported.
fn kept_kinds(kept: &[Found]) -> Option<Notice> {
    let mut kinds: BTreeMap<String, usize> = BTreeMap::new();
    for f in kept {
        if !(f.rel.ends_with(".yaml") || f.rel.ends_with(".yml")) {
            continue;
        }
        let Some(Ok(v)) = std::fs::read_to_string(&f.real).ok().map(|t| read_yaml(&t)) else {
            continue;
        };
        if let Some(kind) = v.get("kind").and_then(Value::as_str) {
            *kinds.entry(strata_core::shown(kind)).or_default() += 1;
        }
    }
    let files: usize = kinds.values().sum();
    (files > 0).then(|| Notice {
        code: "IMP-kept".into(),
        message: format!(
            "{files} RyeOS daemon files ({}) are copied under .ai/ only, not imported: strata has no equivalent (see `kept` in the report)",
            crate::util::named_list(kinds.iter().map(|(k, n)| format!("`kind: {k}` ×{n}")))
        ),
    })
}

/// A path already written that `path` would have to be a directory of (`tools/x.yaml` for
/// `tools/x.yaml/y.yaml`), or that would have to be under `path` as a directory.
fn file_and_directory<T>(written: &BTreeMap<String, T>, path: &str) -> Option<String> {
    let above = path
        .match_indices('/')
        .map(|(i, _)| &path[..i])
        .find(|dir| written.contains_key(*dir));
    if let Some(file) = above {
        return Some(file.to_owned());
    }
    let dir = format!("{path}/");
    written
        .range(dir.clone()..)
        .next()
        .map(|(below, _)| below)
        .filter(|below| below.starts_with(&dir))
        .cloned()
}

/// `<dir>/.ai`, canonical; an error for people when it is missing.
fn space_root(dir: &Path, what: &str) -> Result<PathBuf, Error> {
    let ai = dir.join(".ai");
    if !ai.is_dir() {
        return Err(fail(
            format!("{what} `{}` has no .ai/ directory", dir.display()),
            "give the directory that holds RyeOS's `.ai/` (a project, or a space such as a bundle)",
        ));
    }
    std::fs::canonicalize(&ai).map_err(|e| {
        fail(
            format!("cannot read `{}`: {e}", ai.display()),
            "check the path",
        )
        .with_source(e)
    })
}

/// Every file under `dir` (inside `root`), sorted; a link is followed only when its canonical
/// target stays inside `root` (else it is marked unread, as is a name that is no text, shown
/// escaped); directories already seen (link loops) are skipped.
fn walk(
    root: &Path,
    dir: &Path,
    prefix: &str,
    space: usize,
    out: &mut Vec<Found>,
    seen: &mut BTreeSet<PathBuf>,
) -> std::io::Result<()> {
    let canonical = std::fs::canonicalize(dir)?;
    if !seen.insert(canonical) {
        return Ok(());
    }
    let mut names: Vec<_> = std::fs::read_dir(dir)?
        .filter_map(Result::ok)
        .map(|e| e.file_name())
        .collect();
    names.sort();
    for name in names {
        let path = dir.join(&name);
        let (name_text, unread) = match name.to_str() {
            Some(text) if text.chars().any(char::is_control) => (
                strata_core::escaped(text).into_owned(),
                Some(Unread::Control),
            ),
            Some(text) => (text.to_owned(), None),
            None => (escaped_name(&name), Some(Unread::NotUtf8)),
        };
        let rel = if prefix.is_empty() {
            name_text
        } else {
            format!("{prefix}/{name_text}")
        };
        if unread.is_some() {
            out.push(Found {
                space,
                rel,
                real: path,
                unread,
            });
            continue;
        }
        let Ok(meta) = std::fs::symlink_metadata(&path) else {
            continue;
        };
        let real = if meta.file_type().is_symlink() {
            match std::fs::canonicalize(&path) {
                Ok(r) if r.starts_with(root) => r,
                _ => {
                    out.push(Found {
                        space,
                        rel,
                        real: path,
                        unread: Some(Unread::Escapes),
                    });
                    continue;
                }
            }
        } else {
            path.clone()
        };
        if real.is_dir() {
            walk(root, &real, &rel, space, out, seen)?;
        } else if real.is_file() {
            out.push(Found {
                space,
                rel,
                real,
                unread: None,
            });
        }
    }
    Ok(())
}

/// A file name that is not UTF-8 as messages show it: its text, control characters escaped,
/// and each byte that is not UTF-8 written `\xNN`.
fn escaped_name(name: &std::ffi::OsStr) -> String {
    use std::os::unix::ffi::OsStrExt;
    let mut out = String::new();
    for chunk in name.as_bytes().utf8_chunks() {
        out.push_str(&strata_core::escaped(chunk.valid()));
        for byte in chunk.invalid() {
            out.push_str(&format!("\\x{byte:02x}"));
        }
    }
    out
}

/// The kind and id of a file under `.ai/`, `None` for files only kept there.
fn classify(rel: &str, text: &str) -> Option<(ItemKind, String)> {
    let strip_ext = |p: &str| match p.rfind('.') {
        Some(dot) if dot > p.rfind('/').map_or(0, |s| s + 1) => p[..dot].to_owned(),
        _ => p.to_owned(),
    };
    if let Some(t) = rel.strip_prefix("tools/") {
        if t.ends_with(".yaml") || t.ends_with(".yml") {
            let doc = read_yaml(text).ok();
            if is_data(doc.as_ref(), text) {
                return None;
            }
            let graph = doc
                .as_ref()
                .and_then(|v| {
                    v.get("tool_type")
                        .and_then(Value::as_str)
                        .map(|s| s == "graph")
                })
                .unwrap_or(false);
            return Some((
                if graph {
                    ItemKind::Graph
                } else {
                    ItemKind::Tool
                },
                strip_ext(t),
            ));
        }
        if code::executor_of(t, text).is_some() {
            return Some((ItemKind::Code, strip_ext(t)));
        }
        return None;
    }
    if let Some(d) = rel.strip_prefix("directives/") {
        return d
            .ends_with(".md")
            .then(|| (ItemKind::Directive, strip_ext(d)));
    }
    if rel == "config/agent/hook_conditions.yaml" {
        return Some((ItemKind::Hooks, String::new()));
    }
    if let Some(r) = rel.strip_prefix("runtimes/") {
        if r.ends_with(".yaml") || r.ends_with(".yml") {
            return Some((ItemKind::Runtime, strip_ext(r)));
        }
    }
    None
}

/// Whether a YAML file under `tools/` is data beside the tools, kept under `.ai/` only: a map
/// with neither `executor_id` nor `tool_type` (RyeOS items always declare one). A file
/// strata's reader refuses (`doc` is `None`) is told by its text: an item when a top-level
/// line names one of those keys, so that it is refused with the reader's reason.
fn is_data(doc: Option<&Value>, text: &str) -> bool {
    const ITEM_KEYS: [&str; 2] = ["executor_id", "tool_type"];
    match doc {
        Some(Value::Object(m)) => !ITEM_KEYS.iter().any(|k| m.contains_key(*k)),
        Some(_) => false,
        None => ITEM_KEYS
            .iter()
            .all(|k| yaml_key_position(text, 0, &[k]) == (0, 0)),
    }
}

/// The era of an item, from its own text.
fn era_of(item: &Item) -> Era {
    match item.kind {
        ItemKind::Runtime => Era::Head,
        ItemKind::Code if code::is_rust_era(&item.found.rel, &item.text) => Era::Head,
        ItemKind::Code | ItemKind::Hooks | ItemKind::Graph => Era::Python,
        ItemKind::Directive => {
            let body = item.text.trim_start();
            let body = match body.strip_prefix("<!--") {
                Some(rest) => rest
                    .find("-->")
                    .map_or(rest, |e| rest[e + 3..].trim_start()),
                None => body,
            };
            if body.starts_with("---") {
                Era::Head
            } else {
                Era::Python
            }
        }
        ItemKind::Tool => {
            let v = read_yaml(&item.text).unwrap_or(Value::Null);
            let executor = v.get("executor_id").and_then(Value::as_str).unwrap_or("");
            let head = executor.starts_with('@')
                || v.get("terminal_executor").is_some()
                || v.get("required_caps").is_some()
                || v.get("config")
                    .and_then(|c| c.get("timeout_secs"))
                    .is_some()
                || (v.get("tool_type").is_none() && !executor.starts_with("rye/"));
            if head {
                Era::Head
            } else {
                Era::Python
            }
        }
    }
}

/// The item that defines `item`'s id in `item`'s own space, when another file does (two
/// files of one id: a YAML definition wins over a code file, else the first in walk order).
fn shadowed_by<'a>(
    item: &Item,
    i: usize,
    items: &'a [Item],
    by_id: &BTreeMap<(bool, String), usize>,
) -> Option<&'a Item> {
    let is_tool = matches!(item.kind, ItemKind::Tool | ItemKind::Graph | ItemKind::Code);
    let &w = by_id.get(&(is_tool, item.id.clone()))?;
    (w != i && items[w].found.space == item.found.space).then(|| &items[w])
}

/// The report of a file another file of the same id shadows: refused (`IMP-shadowed`).
fn shadowed(item: &Item, winner: &Item) -> FileImport {
    let why = if item.kind == ItemKind::Code && winner.kind != ItemKind::Code {
        "a YAML definition beside a code file is the item RyeOS ran (its `{tool_path}` is this file), so this file is kept under `.ai/` as its code"
    } else {
        "RyeOS resolves one file per id, the first it finds: this file is kept under `.ai/` only"
    };
    FileImport::imported(format!(".ai/{}", item.found.rel)).refuse(
        "IMP-shadowed",
        format!(
            "`.ai/{}` defines the item `{}`: {why}",
            winner.found.rel,
            strata_core::shown(&item.id)
        ),
    )
}

/// Converts one item with its converter.
fn convert(item: &Item, catalog: &Catalog, ctx: &ToolContext) -> FileImport {
    let source = format!(".ai/{}", item.found.rel);
    match item.kind {
        ItemKind::Tool => tool::import_tool(&source, &item.id, &item.text, catalog, ctx),
        ItemKind::Graph => match read_yaml(&item.text) {
            Ok(v) => graph::import_graph(&source, &item.id, &v, &item.text, catalog),
            Err(why) => crate::yaml::refuse_unreadable(FileImport::imported(source), &why),
        },
        ItemKind::Code => code::import_code(&source, &item.id, &item.text, catalog),
        ItemKind::Directive => directive::import_directive(&source, &item.id, &item.text, catalog),
        ItemKind::Hooks => hook::import_hooks(&source, &item.text, catalog),
        ItemKind::Runtime => tool::import_runtime_descriptor(&source, &item.text),
    }
}

/// The tool ids a converted file refers to: `executor`, and every `tool:` of a graph,
/// directive front matter or hook file it writes.
fn references(imp: &FileImport) -> Vec<String> {
    let mut ids = Vec::new();
    for w in &imp.written {
        let yaml = if w.path.ends_with(".md") {
            front_matter(&w.contents)
        } else {
            Some(w.contents.as_str())
        };
        let Some(yaml) = yaml else { continue };
        let Ok(v) = read_yaml(yaml) else {
            continue;
        };
        if let Some(e) = v.get("executor").and_then(Value::as_str) {
            ids.push(e.to_owned());
        }
        collect_tools(&v, &mut ids);
    }
    ids.retain(|id| id != tool::PRIMITIVE);
    ids.sort();
    ids.dedup();
    ids
}

fn collect_tools(v: &Value, ids: &mut Vec<String>) {
    match v {
        Value::Object(m) => {
            for (k, x) in m {
                if k == "tool" {
                    if let Some(s) = x.as_str() {
                        ids.push(s.to_owned());
                    }
                }
                collect_tools(x, ids);
            }
        }
        Value::Array(items) => items.iter().for_each(|x| collect_tools(x, ids)),
        _ => {}
    }
}

/// The YAML front matter of a Markdown text (between the first two `---` lines).
fn front_matter(text: &str) -> Option<&str> {
    let rest = text.strip_prefix("---\n")?;
    let end = rest.find("\n---")?;
    Some(&rest[..end + 1])
}

/// How many RyeOS signature (or unsigned-marker) comments a file holds.
fn count_signatures(text: &str) -> usize {
    text.lines()
        .filter(|l| {
            let t = l.trim_start();
            (t.starts_with('#') || t.starts_with("//") || t.starts_with("<!--"))
                && [
                    "rye:signed:",
                    "ryeos:signed:",
                    "rye:unsigned",
                    "ryeos:unsigned",
                ]
                .iter()
                .any(|m| t.contains(m))
        })
        .count()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classifies_by_place_and_content() {
        assert_eq!(
            classify("tools/a/b.yaml", "tool_type: graph\n"),
            Some((ItemKind::Graph, "a/b".into()))
        );
        assert_eq!(
            classify("tools/a/b.py", "__executor_id__ = \"x/y\"\n"),
            Some((ItemKind::Code, "a/b".into()))
        );
        assert_eq!(classify("tools/a/lib.py", "import os\n"), None);
        assert_eq!(classify("tools/a/data.yaml", "servers: [a]\n"), None);
        // What strata's reader refuses is told by its text: data is kept, an item refused.
        assert_eq!(classify("tools/a/data.yaml", "servers: !list [a]\n"), None);
        assert_eq!(
            classify(
                "tools/a/t.yaml",
                "# rye:signed:x\nexecutor_id: x\nconfig: !env {}\n"
            ),
            Some((ItemKind::Tool, "a/t".into()))
        );
        assert_eq!(
            classify("tools/a/t.yaml", "executor_id: null\n"),
            Some((ItemKind::Tool, "a/t".into()))
        );
        assert_eq!(
            classify("directives/x/y.md", ""),
            Some((ItemKind::Directive, "x/y".into()))
        );
        assert_eq!(
            classify("config/agent/hook_conditions.yaml", ""),
            Some((ItemKind::Hooks, String::new()))
        );
        assert_eq!(classify("knowledge/k.md", ""), None);
    }

    #[test]
    fn a_path_cannot_be_both_a_file_and_a_directory() {
        let written: BTreeMap<String, ()> = [
            ("tools/x.yaml".to_owned(), ()),
            ("tools/d/e.yaml".to_owned(), ()),
        ]
        .into();
        let clash = |path| file_and_directory(&written, path);
        assert_eq!(
            clash("tools/x.yaml/y.yaml").as_deref(),
            Some("tools/x.yaml")
        );
        assert_eq!(clash("tools/d").as_deref(), Some("tools/d/e.yaml"));
        assert_eq!(clash("tools/d.yaml"), None);
        assert_eq!(clash("tools/x.yam/z.yaml"), None);
    }

    #[test]
    fn counts_signature_comments() {
        assert_eq!(
            count_signatures("# rye:signed:1:2\n# rye:unsigned\nx: 1\n<!-- ryeos:signed:a -->\n"),
            3
        );
    }
}
