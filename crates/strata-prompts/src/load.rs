//! Reading `prompts/`: template files (`<namespace>/…/<name>[.<version>].<ext>`) and YAML/JSON
//! dict files, mixed in one tree. Nothing outside the tree is read: a symbolic link that
//! leads out is refused, and so is a file past the size limit (before it is read whole).

use std::collections::HashSet;
use std::io::Read;
use std::path::{Path, PathBuf};

use serde_json::Value;
use strata_core::{Error, ErrorKind, FieldPath, Layer, Limits, Location, PathSeg};
use strata_doc::{Document, Format};

use crate::names::{is_segment, is_stem, is_version, split_stem};
use crate::place::Place;
use crate::LAYER;

/// The extensions of template files.
pub const TEMPLATE_EXTENSIONS: [&str; 5] = ["j2", "jinja", "txt", "md", "prompt"];

/// The extensions of dict files.
pub const DICT_EXTENSIONS: [&str; 3] = ["yaml", "yml", "json"];

/// The name of a namespace's components map (a key of a dict, or a directory).
pub const COMPONENTS: &str = "components";

/// The deepest nesting of directories read.
const MAX_DEPTH: usize = 32;

/// What a definition defines.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum What {
    /// A template, by its stem (`BrowseLink.enterprise`).
    Template(String),
    /// A component, plain or one version of a versioned one.
    Component {
        name: String,
        version: Option<String>,
    },
}

/// One template or component found in the tree.
#[derive(Debug, Clone)]
pub(crate) struct Def {
    /// The namespace it belongs to (`["action_agent", "main"]`).
    pub space: Vec<String>,
    pub what: What,
    pub source: String,
    pub place: Place,
}

/// Everything read from a tree: the definitions, the problems met, the files read.
#[derive(Debug, Default)]
pub(crate) struct Found {
    pub defs: Vec<Def>,
    pub errors: Vec<Error>,
    pub files: usize,
    /// Bytes of all the templates found, aliases counted.
    pub bytes: usize,
}

/// An error about `file`. Errors about a file that must not be read (a link out of the
/// tree, a file past the limit, one that cannot be read) name it in the message only: a
/// location would have it shown in a snippet.
fn err(kind: ErrorKind, file: &str, message: String, hint: &str) -> Error {
    let e = Error::new(LAYER, kind, message).with_hint(hint);
    if matches!(
        kind,
        ErrorKind::Forbidden | ErrorKind::Limit | ErrorKind::Io
    ) {
        return e;
    }
    e.at_location(Location {
        file: file.to_string(),
        line: 1,
        column: 1,
    })
}

struct Walk<'l> {
    /// The tree's root, canonical.
    root: PathBuf,
    limits: &'l Limits,
    found: Found,
    seen: HashSet<PathBuf>,
    /// Bytes of the templates of the dict file being read, aliases counted, and whether they
    /// passed the template limit already (the rest of the file is then skipped).
    file_bytes: usize,
    file_over: bool,
    /// Whether the tree's templates passed the document template limit (nothing more is read).
    tree_over: bool,
    /// Where each line of the dict file being read starts.
    line_starts: Vec<usize>,
}

/// Reads the tree at `dir`, shown in messages as `shown` (`prompts`).
pub(crate) fn read_tree(dir: &Path, shown: &str, limits: &Limits) -> Found {
    let mut walk = Walk {
        root: dir.canonicalize().unwrap_or_else(|_| dir.to_path_buf()),
        limits,
        found: Found::default(),
        seen: HashSet::new(),
        file_bytes: 0,
        file_over: false,
        tree_over: false,
        line_starts: Vec::new(),
    };
    let root = walk.root.clone();
    walk.dir(&root, shown, &[], 0);
    walk.found
}

/// Reads a dict given as a value (no file): its templates are placed at `name`.
pub(crate) fn read_value(value: &Value, name: &str, limits: &Limits) -> Found {
    let mut doc = Document::unparsed(name, String::new());
    doc.value = value.clone();
    let mut walk = Walk {
        root: PathBuf::new(),
        limits,
        found: Found::default(),
        seen: HashSet::new(),
        file_bytes: 0,
        file_over: false,
        tree_over: false,
        line_starts: Vec::new(),
    };
    walk.dict(&doc, &doc.value, &FieldPath::root(), &[]);
    walk.found
}

fn extension(name: &str) -> Option<(&str, &str)> {
    name.rsplit_once('.')
}

impl Walk<'_> {
    fn fail(&mut self, e: Error) {
        self.found.errors.push(e);
    }

    /// Counts a template of `bytes` against the tree's limit; false (and an error, once) when
    /// the tree passes it.
    fn count_tree(&mut self, bytes: usize) -> bool {
        if self.tree_over {
            return false;
        }
        self.found.bytes = self.found.bytes.saturating_add(bytes);
        let most = self.limits.template_bytes_per_document;
        if self.found.bytes > most {
            self.tree_over = true;
            self.fail(tree_too_big(most));
            return false;
        }
        true
    }

    /// Follows `path` when it is a link: its target when that stays inside the tree.
    fn follow(&mut self, path: &Path, shown: &str) -> Option<PathBuf> {
        let meta = std::fs::symlink_metadata(path).ok()?;
        if !meta.file_type().is_symlink() {
            return Some(path.to_path_buf());
        }
        match path.canonicalize() {
            Ok(target) if target.starts_with(&self.root) => Some(target),
            Ok(_) => {
                self.fail(err(
                    ErrorKind::Forbidden,
                    shown,
                    format!("`{shown}` is a symbolic link to a path outside prompts/"),
                    "templates are read only from inside prompts/",
                ));
                None
            }
            Err(e) => {
                self.fail(
                    err(
                        ErrorKind::Io,
                        shown,
                        format!("cannot follow the link `{shown}`: {e}"),
                        "remove the broken link",
                    )
                    .with_source(e),
                );
                None
            }
        }
    }

    fn entries(&mut self, dir: &Path, shown: &str) -> Vec<(String, PathBuf)> {
        let read = match std::fs::read_dir(dir) {
            Ok(r) => r,
            Err(e) => {
                self.fail(
                    err(
                        ErrorKind::Io,
                        shown,
                        format!("cannot read `{shown}`: {e}"),
                        "check the directory's permissions",
                    )
                    .with_source(e),
                );
                return Vec::new();
            }
        };
        let mut out: Vec<(String, PathBuf)> = Vec::new();
        for entry in read.flatten() {
            match entry.file_name().into_string() {
                Ok(name) if name.starts_with('.') => {}
                Ok(name) => out.push((name, entry.path())),
                Err(raw) => self.fail(err(
                    ErrorKind::Invalid,
                    shown,
                    format!("`{shown}` holds a name that is not UTF-8: {raw:?}"),
                    "rename it",
                )),
            }
        }
        out.sort();
        out
    }

    fn dir(&mut self, dir: &Path, shown: &str, space: &[String], depth: usize) {
        if depth > MAX_DEPTH {
            self.fail(err(
                ErrorKind::Limit,
                shown,
                format!("`{shown}` is nested more than {MAX_DEPTH} directories deep"),
                "flatten the tree",
            ));
            return;
        }
        if !self.seen.insert(dir.to_path_buf()) {
            return;
        }
        for (name, path) in self.entries(dir, shown) {
            let shown = format!("{shown}/{name}");
            let Some(path) = self.follow(&path, &shown) else {
                continue;
            };
            if path.is_dir() {
                if name == COMPONENTS {
                    self.components_dir(&path, &shown, space);
                } else if is_segment(&name) {
                    let mut inner = space.to_vec();
                    inner.push(name);
                    self.dir(&path, &shown, &inner, depth + 1);
                } else {
                    self.fail(err(
                        ErrorKind::Invalid,
                        &shown,
                        format!("directory `{shown}` cannot name a namespace"),
                        "names are letters, digits, `_` and `-`",
                    ));
                }
                continue;
            }
            let Some((stem, ext)) = extension(&name) else {
                continue;
            };
            if TEMPLATE_EXTENSIONS.contains(&ext) {
                if !is_stem(stem) {
                    self.fail(bad_file_name(&shown));
                    continue;
                }
                if self.tree_over {
                    return;
                }
                if let Some(source) = self.read(&path, &shown) {
                    if !self.count_tree(source.len()) {
                        return;
                    }
                    self.found.defs.push(Def {
                        space: space.to_vec(),
                        what: What::Template(stem.to_string()),
                        source,
                        place: Place::file(&shown),
                    });
                }
            } else if DICT_EXTENSIONS.contains(&ext) {
                self.dict_file(&path, &shown, space);
            }
        }
    }

    fn components_dir(&mut self, dir: &Path, shown: &str, space: &[String]) {
        for (name, path) in self.entries(dir, shown) {
            let shown = format!("{shown}/{name}");
            let Some(path) = self.follow(&path, &shown) else {
                continue;
            };
            let stem = extension(&name)
                .filter(|(_, ext)| TEMPLATE_EXTENSIONS.contains(ext))
                .map(|(stem, _)| stem);
            let Some(stem) = stem.filter(|_| path.is_file()) else {
                self.fail(err(
                    ErrorKind::Invalid,
                    &shown,
                    format!("`{shown}` is not a component file"),
                    "a components directory holds `<name>[.<version>].<ext>` template files only",
                ));
                continue;
            };
            if !is_stem(stem) {
                self.fail(bad_file_name(&shown));
                continue;
            }
            let (component, version) = split_stem(stem);
            if let Some(source) = self.read(&path, &shown) {
                self.found.defs.push(Def {
                    space: space.to_vec(),
                    what: What::Component {
                        name: component.to_string(),
                        version: version.map(str::to_string),
                    },
                    source,
                    place: Place::file(&shown),
                });
            }
        }
    }

    /// Reads a file of at most the template limit.
    fn read(&mut self, path: &Path, shown: &str) -> Option<String> {
        self.found.files += 1;
        let limit = self.limits.template_bytes;
        let mut bytes = Vec::new();
        let read = std::fs::File::open(path)
            .and_then(|f| f.take(limit as u64 + 1).read_to_end(&mut bytes));
        if let Err(e) = read {
            self.fail(
                err(
                    ErrorKind::Io,
                    shown,
                    format!("cannot read `{shown}`: {e}"),
                    "check the file's permissions",
                )
                .with_source(e),
            );
            return None;
        }
        if bytes.len() > limit {
            self.fail(too_big(shown, limit));
            return None;
        }
        match String::from_utf8(bytes) {
            Ok(text) => Some(text),
            Err(e) => {
                self.fail(err(
                    ErrorKind::Syntax,
                    shown,
                    format!(
                        "`{shown}` is not valid UTF-8 (byte {})",
                        e.utf8_error().valid_up_to()
                    ),
                    "save the file as UTF-8",
                ));
                None
            }
        }
    }

    fn dict_file(&mut self, path: &Path, shown: &str, space: &[String]) {
        if self.tree_over {
            return;
        }
        let Some(text) = self.read(path, shown) else {
            return;
        };
        self.file_bytes = 0;
        self.file_over = false;
        // The file's templates may hold at most `template_bytes`, aliases counted: it may not
        // expand past that plus its own text (its keys), which stops an alias bomb while it
        // is parsed instead of after.
        let expands = self
            .limits
            .template_bytes
            .saturating_add(text.len())
            .min(self.limits.document_bytes);
        let limits = Limits {
            document_bytes: expands,
            ..self.limits.clone()
        };
        match Document::parse(shown, text.into_bytes(), Format::from_name(shown), &limits) {
            Ok(doc) => {
                self.line_starts = std::iter::once(0)
                    .chain(doc.text.match_indices('\n').map(|(i, _)| i + 1))
                    .collect();
                self.dict(&doc, &doc.value, &FieldPath::root(), space);
            }
            Err(e) if expands < self.limits.document_bytes && is_bytes_limit(&e) => {
                self.fail(expands_too_big(shown, self.limits.template_bytes));
            }
            Err(e) => self.fail(relayer(e)),
        }
    }

    /// Reads a dict (a map of namespaces, templates and `components`) found at `path`.
    fn dict(&mut self, doc: &Document, value: &Value, path: &FieldPath, space: &[String]) {
        let Some(map) = value.as_object() else {
            self.fail(located(
                doc,
                path,
                ErrorKind::Invalid,
                "a prompts dict is a map of namespaces (maps) and templates (strings)".into(),
            ));
            return;
        };
        for (k, v) in map {
            let at = path.child(PathSeg::Key(k.clone()));
            match v {
                _ if k == COMPONENTS => self.components(doc, v, &at, space),
                Value::String(source) if is_stem(k) => {
                    if let Some(place) = self.string_place(doc, &at, source) {
                        self.found.defs.push(Def {
                            space: space.to_vec(),
                            what: What::Template(k.clone()),
                            source: source.clone(),
                            place,
                        });
                    }
                }
                Value::Object(_) if is_segment(k) => {
                    let mut inner = space.to_vec();
                    inner.push(k.clone());
                    self.dict(doc, v, &at, &inner);
                }
                Value::String(_) | Value::Object(_) => self.fail(located(
                    doc,
                    &at,
                    ErrorKind::Invalid,
                    format!("`{k}` cannot name a template or namespace"),
                )),
                _ => self.fail(located(
                    doc,
                    &at,
                    ErrorKind::Invalid,
                    format!("`{k}` must be a template (a string) or a namespace (a map)"),
                )),
            }
        }
    }

    /// Where the string at `path` is; `None` (and an error) when it is too long.
    fn string_place(&mut self, doc: &Document, path: &FieldPath, source: &str) -> Option<Place> {
        if self.file_over || self.tree_over {
            return None;
        }
        let (line, column) = doc.locate(path, None).unwrap_or((1, 1));
        self.file_bytes = self.file_bytes.saturating_add(source.len());
        if self.file_bytes > self.limits.template_bytes
            && source.len() <= self.limits.template_bytes
        {
            // Aliases repeat one template without repeating its text: the file holds what it
            // expands to.
            self.file_over = true;
            self.fail(expands_too_big(&doc.name, self.limits.template_bytes));
            return None;
        }
        if !self.count_tree(source.len()) {
            return None;
        }
        if source.len() > self.limits.template_bytes {
            let e = too_big(&doc.name, self.limits.template_bytes).at_location(Location {
                file: doc.name.clone(),
                line,
                column,
            });
            self.fail(e.at_path(path));
            return None;
        }
        if doc.text.is_empty() {
            return Some(Place::given(&doc.name));
        }
        Some(Place::in_dict_indexed(
            &doc.name,
            &doc.text,
            &self.line_starts,
            line,
            column,
            source,
        ))
    }

    fn components(&mut self, doc: &Document, value: &Value, path: &FieldPath, space: &[String]) {
        let Some(map) = value.as_object() else {
            self.fail(located(
                doc,
                path,
                ErrorKind::Invalid,
                "`components` must be a map of component names to templates".into(),
            ));
            return;
        };
        for (name, v) in map {
            let at = path.child(PathSeg::Key(name.clone()));
            if !is_segment(name) {
                self.fail(located(
                    doc,
                    &at,
                    ErrorKind::Invalid,
                    format!("`{name}` cannot name a component"),
                ));
                continue;
            }
            match v {
                Value::String(source) => {
                    if let Some(place) = self.string_place(doc, &at, source) {
                        self.push_component(space, name, None, source, place);
                    }
                }
                Value::Array(items) if !items.is_empty() => {
                    for (i, item) in items.iter().enumerate() {
                        self.version_item(doc, item, &at.child(PathSeg::Index(i)), space, name);
                    }
                }
                _ => self.fail(located(
                    doc,
                    &at,
                    ErrorKind::Invalid,
                    format!("component `{name}` must be a template (a string) or a non-empty list of {{version, content}}"),
                )),
            }
        }
    }

    fn version_item(
        &mut self,
        doc: &Document,
        item: &Value,
        at: &FieldPath,
        space: &[String],
        name: &str,
    ) {
        let fields = item.as_object().filter(|m| {
            m.len() == 2
                && m.get("version")
                    .and_then(Value::as_str)
                    .is_some_and(is_version)
                && m.get("content").is_some_and(Value::is_string)
        });
        let Some(fields) = fields else {
            self.fail(located(
                doc,
                at,
                ErrorKind::Invalid,
                format!(
                    "a version of component `{name}` is {{version: <name>, content: <template>}}"
                ),
            ));
            return;
        };
        let version = fields["version"].as_str().unwrap_or_default();
        let source = fields["content"].as_str().unwrap_or_default();
        let content = at.child(PathSeg::Key("content".into()));
        if let Some(place) = self.string_place(doc, &content, source) {
            self.push_component(space, name, Some(version), source, place);
        }
    }

    fn push_component(
        &mut self,
        space: &[String],
        name: &str,
        version: Option<&str>,
        source: &str,
        place: Place,
    ) {
        self.found.defs.push(Def {
            space: space.to_vec(),
            what: What::Component {
                name: name.to_string(),
                version: version.map(str::to_string),
            },
            source: source.to_string(),
            place,
        });
    }
}

fn bad_file_name(shown: &str) -> Error {
    err(
        ErrorKind::Invalid,
        shown,
        format!("`{shown}` cannot name a template"),
        "template files are `<name>[.<version>].<ext>`; names are letters, digits, `_` and `-`",
    )
}

fn too_big(shown: &str, limit: usize) -> Error {
    Error::new(
        LAYER,
        ErrorKind::Limit,
        format!("`{shown}` is larger than the template limit of {limit} bytes"),
    )
    .with_limit("template_bytes", limit, "split the template, or")
}

fn expands_too_big(shown: &str, limit: usize) -> Error {
    Error::new(
        LAYER,
        ErrorKind::Limit,
        format!("`{shown}` holds more than the template limit of {limit} bytes (aliases counted)"),
    )
    .with_limit("template_bytes", limit, "split the template, or")
}

/// True when `e` is a document that expands past `limits.document_bytes`.
fn is_bytes_limit(e: &Error) -> bool {
    matches!(e.data(), Some(strata_core::ErrorData::Limit { setting, .. }) if setting == "limits.document_bytes")
}

pub(crate) fn tree_too_big(limit: usize) -> Error {
    Error::new(
        LAYER,
        ErrorKind::Limit,
        format!("the prompt tree holds more than {limit} bytes of templates (aliases counted)"),
    )
    .with_limit("template_bytes_per_document", limit, "split the tree, or")
}

/// A document error re-labelled as a prompt error.
fn relayer(mut e: Error) -> Error {
    if e.layer() == Layer::REQUEST {
        e = e.with_layer(LAYER);
    }
    e
}

fn located(doc: &Document, path: &FieldPath, kind: ErrorKind, message: String) -> Error {
    let e = Error::new(LAYER, kind, message).at_path(path);
    if doc.text.is_empty() {
        return e;
    }
    doc.locate_error(e)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(root: &Path, rel: &str, text: &str) {
        let p = root.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }

    fn ids(found: &Found) -> Vec<String> {
        found
            .defs
            .iter()
            .map(|d| {
                let what = match &d.what {
                    What::Template(s) => s.clone(),
                    What::Component { name, version } => match version {
                        Some(v) => format!("components/{name}@{v}"),
                        None => format!("components/{name}"),
                    },
                };
                format!("{}|{what}|{}", d.space.join("/"), d.place)
            })
            .collect()
    }

    #[test]
    fn files_and_dicts_mix_and_dicts_start_at_their_own_directory() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path();
        write(p, "main/BrowseLink.enterprise.j2", "x");
        write(p, "main/components/tone.formal.txt", "f");
        write(p, "main/components/tone.casual.txt", "c");
        write(
            p,
            "agent/t.yaml",
            "main:\n  Search: s\n  components:\n    pre: p\n",
        );
        write(p, "default.md", "d");
        write(p, "notes.rst", "ignored");
        write(p, ".hidden.j2", "ignored");
        let found = read_tree(p, "prompts", &Limits::default());
        assert!(found.errors.is_empty(), "{:?}", found.errors);
        assert_eq!(
            ids(&found),
            [
                "agent/main|Search|prompts/agent/t.yaml:2:11",
                "agent/main|components/pre|prompts/agent/t.yaml:4:10",
                "|default|prompts/default.md",
                "main|BrowseLink.enterprise|prompts/main/BrowseLink.enterprise.j2",
                "main|components/tone@casual|prompts/main/components/tone.casual.txt",
                "main|components/tone@formal|prompts/main/components/tone.formal.txt",
            ]
        );
        assert_eq!(found.files, 5);
    }

    #[test]
    fn links_out_of_the_tree_and_big_files_are_refused_unread() {
        let outside = tempfile::tempdir().unwrap();
        write(outside.path(), "secret.j2", "top secret");
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path();
        write(p, "main/inside.j2", "in");
        std::os::unix::fs::symlink(outside.path().join("secret.j2"), p.join("main/out.j2"))
            .unwrap();
        std::os::unix::fs::symlink(outside.path(), p.join("escape")).unwrap();
        std::os::unix::fs::symlink(p.join("main/inside.j2"), p.join("main/alias.j2")).unwrap();
        write(p, "main/big.j2", &"x".repeat(2000));
        let limits = Limits {
            template_bytes: 1000,
            ..Limits::default()
        };
        let found = read_tree(p, "prompts", &limits);
        let messages: Vec<(ErrorKind, String)> = found
            .errors
            .iter()
            .map(|e| (e.kind(), e.message().to_string()))
            .collect();
        assert_eq!(
            messages,
            [
                (
                    ErrorKind::Forbidden,
                    "`prompts/escape` is a symbolic link to a path outside prompts/".into()
                ),
                (
                    ErrorKind::Limit,
                    "`prompts/main/big.j2` is larger than the template limit of 1000 bytes".into()
                ),
                (
                    ErrorKind::Forbidden,
                    "`prompts/main/out.j2` is a symbolic link to a path outside prompts/".into()
                ),
            ]
        );
        assert_eq!(
            ids(&found),
            [
                "main|alias|prompts/main/alias.j2",
                "main|inside|prompts/main/inside.j2"
            ]
        );
        assert!(found.defs.iter().all(|d| d.source == "in"));
    }

    #[test]
    fn bad_dict_shapes_are_located() {
        let dir = tempfile::tempdir().unwrap();
        write(
            dir.path(),
            "t.yaml",
            "main:\n  a: 3\n  components:\n    c: [{version: v}]\n  \"b c\": x\n",
        );
        let found = read_tree(dir.path(), "prompts", &Limits::default());
        let shown: Vec<String> = found
            .errors
            .iter()
            .map(|e| {
                let l = e.location().unwrap();
                format!("{}:{}:{} {}", l.file, l.line, l.column, e.message())
            })
            .collect();
        assert_eq!(
            shown,
            [
                "prompts/t.yaml:2:6 `a` must be a template (a string) or a namespace (a map)",
                "prompts/t.yaml:4:9 a version of component `c` is {version: <name>, content: <template>}",
                "prompts/t.yaml:5:10 `b c` cannot name a template or namespace",
            ]
        );
    }
}
