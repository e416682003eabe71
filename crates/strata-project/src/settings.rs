//! Project settings a team shares: `strata.yaml` at the project root, and `STRATA_*`
//! environment variables over it — strict mode, the limits, the default number of plan jobs,
//! how often graph runs checkpoint, and names of environment variables that are secret
//! everywhere. A command-line flag wins
//! over the environment, which wins over the file, which wins over the defaults.

use std::fmt;
use std::path::Path;

use serde_json::Value;
use strata_core::{did_you_mean, Error, ErrorKind, FieldPath, Layer, Limits, Location, PathSeg};
use strata_doc::{Document, Format};
use strata_runs::{CheckpointEvery, CHECKPOINT_EVERY_FORMS};

/// The settings file, at the project root.
pub const FILE: &str = "strata.yaml";

/// Plan steps running at once unless a setting or `--jobs` says otherwise.
pub const DEFAULT_JOBS: usize = 4;

/// The most plan steps running at once (`jobs`, `--jobs`, `STRATA_JOBS`, Python's `jobs=`):
/// each running step holds a worker thread (with its stack, `strata_core::STACK_BYTES`) and a
/// child process.
pub const MAX_JOBS: usize = 256;

/// The layer settings errors belong to.
pub const SETTINGS: Layer = Layer::new("settings");

/// The keys of `strata.yaml`.
const KEYS: [&str; 5] = ["strict", "jobs", "checkpoint_every", "secrets", "limits"];

/// The keys of `limits:` (the fields of [`Limits`]), each with what it bounds.
pub const LIMIT_KEYS: [(&str, &str); 10] = [
    ("template_bytes", "bytes of one authored string"),
    ("placeholders_per_string", "placeholders in one string"),
    (
        "template_bytes_per_document",
        "bytes of all the strings of one document",
    ),
    ("placeholders_per_document", "placeholders in one document"),
    ("default_depth", "nesting of defaults (`${A:-${B:-x}}`)"),
    ("output_bytes_per_string", "bytes of one rendered string"),
    ("output_bytes_per_config", "bytes of one rendered document"),
    (
        "param_links",
        "parameter links followed (`a -> b -> c -> d` is 3)",
    ),
    ("yaml_nodes", "YAML nodes after alias expansion"),
    (
        "document_bytes",
        "bytes of one document read, and after alias expansion",
    ),
];

/// The field of `limits` named `key`.
fn limit_mut<'l>(limits: &'l mut Limits, key: &str) -> Option<&'l mut usize> {
    Some(match key {
        "template_bytes" => &mut limits.template_bytes,
        "placeholders_per_string" => &mut limits.placeholders_per_string,
        "template_bytes_per_document" => &mut limits.template_bytes_per_document,
        "placeholders_per_document" => &mut limits.placeholders_per_document,
        "default_depth" => &mut limits.default_depth,
        "output_bytes_per_string" => &mut limits.output_bytes_per_string,
        "output_bytes_per_config" => &mut limits.output_bytes_per_config,
        "param_links" => &mut limits.param_links,
        "yaml_nodes" => &mut limits.yaml_nodes,
        "document_bytes" => &mut limits.document_bytes,
        _ => return None,
    })
}

/// The value of limit `key` (one of [`LIMIT_KEYS`]).
pub fn limit(limits: &Limits, key: &str) -> Option<usize> {
    limit_mut(&mut limits.clone(), key).map(|v| *v)
}

/// How many times its default `strata.yaml` may raise a limit of size or count: a project
/// file comes with the project (a repository cloned, a directory shared), and what it allows
/// one small request to make must stay within what a small machine holds (docs/settings.md).
/// Going higher takes the `STRATA_LIMITS_*` variable of whoever runs strata.
pub const FILE_RAISES: usize = 4;

/// The most `strata.yaml` may set limit `key` (one of [`LIMIT_KEYS`]) to: [`FILE_RAISES`]
/// times its default for a size or a count; the cap for the two bounds of a recursion
/// (`default_depth`, `param_links`), which are held to the stack whoever sets them.
pub fn file_bound(key: &str) -> usize {
    let cap = strata_core::limit_cap(key).unwrap_or(usize::MAX);
    match key {
        "default_depth" | "param_links" => cap,
        _ => limit(&Limits::default(), key)
            .map_or(cap, |default| default.saturating_mul(FILE_RAISES).min(cap)),
    }
}

/// Where a setting's value came from.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum Source {
    /// Nothing set it.
    #[default]
    Default,
    /// `strata.yaml`, at this line and column.
    File(usize, usize),
    /// This environment variable.
    Env(String),
    /// A command-line option.
    Flag(String),
}

impl fmt::Display for Source {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Source::Default => write!(f, "default"),
            Source::File(line, column) => write!(f, "{FILE}:{line}:{column}"),
            Source::Env(name) => write!(f, "env {name}"),
            Source::Flag(flag) => write!(f, "flag {flag}"),
        }
    }
}

/// A setting's value and where it came from.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Setting<T> {
    /// The value in force.
    pub value: T,
    /// Where it came from.
    pub source: Source,
}

impl<T> Setting<T> {
    fn set(&mut self, value: T, source: Source) {
        self.value = value;
        self.source = source;
    }
}

/// The settings in force for a project.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Settings {
    /// Missing variables, paths and inputs are errors (`--strict`).
    pub strict: Setting<bool>,
    /// Plan steps running at once (`--jobs`).
    pub jobs: Setting<usize>,
    /// How often a graph run writes its (synced) checkpoint (`--checkpoint-every`).
    pub checkpoint_every: Setting<CheckpointEvery>,
    /// Environment variables whose values are secret in every tool run.
    pub secrets: Setting<Vec<String>>,
    /// The limits.
    pub limits: Limits,
    /// Where each limit came from, in the order of [`LIMIT_KEYS`].
    pub limit_sources: Vec<Source>,
}

impl Default for Settings {
    fn default() -> Settings {
        Settings {
            strict: Setting::default(),
            jobs: Setting {
                value: DEFAULT_JOBS,
                source: Source::Default,
            },
            checkpoint_every: Setting::default(),
            secrets: Setting::default(),
            limits: Limits::default(),
            limit_sources: vec![Source::Default; LIMIT_KEYS.len()],
        }
    }
}

/// A settings error about a field of `strata.yaml`, located in it.
fn file_error(doc: &Document, path: &FieldPath, kind: ErrorKind, message: String) -> Error {
    doc.locate_error(Error::new(SETTINGS, kind, message).at_path(path))
}

fn key(k: &str) -> PathSeg {
    PathSeg::Key(k.to_string())
}

/// True for an environment variable name (`[A-Z_][A-Z0-9_]*`).
fn env_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_uppercase() || c == '_')
        && chars.all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_')
}

fn unknown_key(doc: &Document, path: &FieldPath, name: &str, known: &[&str]) -> Error {
    let hint = match did_you_mean(name, known.iter().copied()) {
        Some(s) => format!("did you mean `{s}`?"),
        None => format!("the keys are {}", known.join(", ")),
    };
    let err = file_error(
        doc,
        path,
        ErrorKind::UnknownField,
        format!("unknown setting `{path}`"),
    )
    .with_hint(hint);
    // The error is about the key: the caret goes under it, not under its value.
    let Some(loc) = err.location() else {
        return err;
    };
    let line = doc
        .text
        .lines()
        .nth(loc.line.saturating_sub(1))
        .unwrap_or("");
    let before: String = line.chars().take(loc.column.saturating_sub(1)).collect();
    match before.rfind(name) {
        Some(at) => {
            let loc = Location {
                column: before[..at].chars().count() + 1,
                ..loc.clone()
            };
            err.at_location(loc)
        }
        None => err,
    }
}

/// The error of a setting out of its range, the same whichever source gave it:
/// "`jobs` must be an integer from 1 to 256, not 0". `shown` is the value as given (an
/// integer, a quoted text, or the kind of a YAML value).
pub fn out_of_range(setting: &str, max: usize, shown: &str) -> Error {
    Error::new(
        SETTINGS,
        ErrorKind::Invalid,
        format!("`{setting}` must be an integer from 1 to {max}, not {shown}"),
    )
}

/// `n` if it is from 1 to `max`.
fn within(n: u64, max: usize) -> Option<usize> {
    usize::try_from(n).ok().filter(|n| (1..=max).contains(n))
}

/// A YAML value as an integer from 1 to `max`, or how to show it in the error.
fn int_in_range(value: &Value, max: usize) -> Result<usize, String> {
    match value {
        Value::Number(n) if n.is_u64() || n.is_i64() => {
            n.as_u64().and_then(|n| within(n, max)).ok_or(n.to_string())
        }
        other => Err(kind_of(other).to_string()),
    }
}

/// An environment variable's text as an integer from 1 to `max`, or how to show it.
fn text_in_range(text: &str, max: usize) -> Result<usize, String> {
    match text.trim().parse::<i128>() {
        Ok(n) => u64::try_from(n)
            .ok()
            .and_then(|n| within(n, max))
            .ok_or(n.to_string()),
        Err(_) => Err(format!("`{text}`")),
    }
}

/// The number of jobs given by `source` (`--jobs`), checked against [`MAX_JOBS`] with the
/// message every source of `jobs` gives.
pub fn jobs_from(n: u64, source: &str) -> Result<usize, Error> {
    within(n, MAX_JOBS)
        .ok_or_else(|| out_of_range("jobs", MAX_JOBS, &n.to_string()).with_hint(set_by(source)))
}

/// The number of jobs shown as `shown` (an integer as written) checked against
/// [`MAX_JOBS`], for callers holding an integer of any size (Python's `jobs=`): the message
/// every source of `jobs` gives, without a hint.
pub fn jobs_shown(n: Option<u64>, shown: &str) -> Result<usize, Error> {
    n.and_then(|n| within(n, MAX_JOBS))
        .ok_or_else(|| out_of_range("jobs", MAX_JOBS, shown))
}

fn set_by(source: &str) -> String {
    format!("set by {source}")
}

/// The known `STRATA_*` variables.
fn env_vars() -> Vec<String> {
    let mut vars: Vec<String> = ["STRATA_STRICT", "STRATA_JOBS", "STRATA_CHECKPOINT_EVERY"]
        .into_iter()
        .chain(["STRATA_SECRETS"])
        .map(str::to_string)
        .collect();
    vars.extend(
        LIMIT_KEYS
            .iter()
            .map(|(k, _)| format!("STRATA_LIMITS_{}", k.to_ascii_uppercase())),
    );
    vars
}

/// A warning for each of `names` that looks like a misspelt setting variable
/// (`STRATA_JOSB`): a `STRATA_` name that is not a setting but close to one. Other
/// `STRATA_` names (another program's) are left alone.
pub fn misspelt_vars<'n>(names: impl IntoIterator<Item = &'n str>) -> Vec<String> {
    let known = env_vars();
    let tails: Vec<&str> = known.iter().map(|k| &k["STRATA_".len()..]).collect();
    let mut warnings = Vec::new();
    for name in names {
        let Some(tail) = name.strip_prefix("STRATA_") else {
            continue;
        };
        if known.iter().any(|k| k == name) {
            continue;
        }
        if let Some(close) = did_you_mean(tail, tails.iter().copied()) {
            warnings.push(format!(
                "warning[settings]: `{name}` is not a setting and is ignored: did you mean `STRATA_{close}`?"
            ));
        }
    }
    warnings
}

/// Prints the warnings of [`misspelt_vars`] about the process's environment on standard
/// error, once per process.
fn warn_misspelt_vars() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let names: Vec<String> = std::env::vars_os()
            .filter_map(|(k, _)| k.into_string().ok())
            .filter(|k| k.starts_with("STRATA_"))
            .collect();
        for warning in misspelt_vars(names.iter().map(String::as_str)) {
            eprintln!("{warning}");
        }
    });
}

impl Settings {
    /// The settings of the project at `root`: `strata.yaml` if there is one, then the
    /// `STRATA_*` variables `env` returns.
    ///
    /// A `STRATA_` variable of the process close to a setting's (`STRATA_JOSB`) is warned
    /// about on standard error, once per process.
    pub fn load(root: &Path, env: &dyn Fn(&str) -> Option<String>) -> Result<Settings, Error> {
        warn_misspelt_vars();
        let mut settings = Settings::default();
        let path = root.join(FILE);
        if path.is_file() {
            // Confined like every other read of the project (`.env` included).
            let path = strata_doc::confine(&path, root, FILE, "the project")
                .map_err(|e| e.with_layer(SETTINGS))?;
            let limits = Limits::default();
            let doc = strata_doc::read_file(&path, FILE, &limits)
                .and_then(|bytes| Document::parse(FILE, bytes, Format::Yaml, &limits))
                .map_err(|e| e.with_layer(SETTINGS))?;
            settings.read_file(&doc)?;
        }
        settings.read_env(env)?;
        Ok(settings)
    }

    /// The settings outside any project: the defaults under the `STRATA_*` variables `env`
    /// returns.
    pub fn from_env(env: &dyn Fn(&str) -> Option<String>) -> Result<Settings, Error> {
        warn_misspelt_vars();
        let mut settings = Settings::default();
        settings.read_env(env)?;
        Ok(settings)
    }

    fn read_file(&mut self, doc: &Document) -> Result<(), Error> {
        let map = match &doc.value {
            Value::Null => return Ok(()),
            Value::Object(map) => map,
            other => {
                return Err(Error::new(
                    SETTINGS,
                    ErrorKind::Invalid,
                    format!("`{FILE}` must be a map of settings, not {}", kind_of(other)),
                )
                .with_hint(format!("the keys are {}", KEYS.join(", ")))
                .at_location(Location {
                    file: FILE.into(),
                    line: 1,
                    column: 1,
                }))
            }
        };
        let at = |path: &FieldPath| {
            let (line, column) = doc.locate(path, None).unwrap_or((1, 1));
            Source::File(line, column)
        };
        for (name, value) in map {
            let path = FieldPath(vec![key(name)]);
            let wrong = |what: &str| {
                file_error(
                    doc,
                    &path,
                    ErrorKind::Type,
                    format!("`{name}` must be {what}, not {}", kind_of(value)),
                )
            };
            match name.as_str() {
                "strict" => {
                    let v = value.as_bool().ok_or_else(|| wrong("true or false"))?;
                    self.strict.set(v, at(&path));
                }
                "jobs" => {
                    let v = int_in_range(value, MAX_JOBS).map_err(|shown| {
                        doc.locate_error(out_of_range("jobs", MAX_JOBS, &shown).at_path(&path))
                    })?;
                    self.jobs.set(v, at(&path));
                }
                "checkpoint_every" => {
                    // A bare number is a number of steps, a text a number of steps or a
                    // duration (the one grammar, `strata_core::parse_duration`).
                    let text = match value {
                        Value::Number(n) => n.to_string(),
                        Value::String(text) => text.clone(),
                        _ => return Err(wrong("a number of steps or a duration")),
                    };
                    let v = CheckpointEvery::parse(&text).map_err(|why| {
                        file_error(
                            doc,
                            &path,
                            ErrorKind::Invalid,
                            format!("`checkpoint_every`: {why}"),
                        )
                        .with_hint(format!("write {CHECKPOINT_EVERY_FORMS}"))
                    })?;
                    self.checkpoint_every.set(v, at(&path));
                }
                "secrets" => {
                    let list = value
                        .as_array()
                        .ok_or_else(|| wrong("a list of variable names"))?;
                    let mut names = Vec::new();
                    for (i, item) in list.iter().enumerate() {
                        let item_path = path.child(PathSeg::Index(i));
                        match item.as_str().filter(|n| env_name(n)) {
                            Some(n) => names.push(n.to_string()),
                            None => {
                                return Err(file_error(
                                    doc,
                                    &item_path,
                                    ErrorKind::Invalid,
                                    format!("`secrets[{i}]` is not an environment variable name"),
                                )
                                .with_hint("names such as API_TOKEN: capitals, digits and `_`"))
                            }
                        }
                    }
                    self.secrets.set(names, at(&path));
                }
                "limits" => self.read_limits(doc, &path, value)?,
                other => return Err(unknown_key(doc, &path, other, &KEYS)),
            }
        }
        Ok(())
    }

    fn read_limits(
        &mut self,
        doc: &Document,
        path: &FieldPath,
        value: &Value,
    ) -> Result<(), Error> {
        let Value::Object(map) = value else {
            return Err(file_error(
                doc,
                path,
                ErrorKind::Type,
                format!("`limits` must be a map of limits, not {}", kind_of(value)),
            ));
        };
        let names: Vec<&str> = LIMIT_KEYS.iter().map(|(k, _)| *k).collect();
        for (name, v) in map {
            let here = path.child(key(name));
            let Some(index) = names.iter().position(|k| k == name) else {
                return Err(unknown_key(doc, &here, name, &names));
            };
            let bound = file_bound(name);
            let n = int_in_range(v, bound).map_err(|shown| {
                let err = out_of_range(&format!("limits.{name}"), bound, &shown);
                doc.locate_error(over_file_bound(err, name, v).at_path(&here))
            })?;
            if let Some(slot) = limit_mut(&mut self.limits, name) {
                *slot = n;
            }
            let (line, column) = doc.locate(&here, None).unwrap_or((1, 1));
            self.limit_sources[index] = Source::File(line, column);
        }
        Ok(())
    }

    fn read_env(&mut self, env: &dyn Fn(&str) -> Option<String>) -> Result<(), Error> {
        let bad = |var: &str, text: &str, what: &str| {
            Error::new(
                SETTINGS,
                ErrorKind::Invalid,
                format!("{var} must be {what}, not `{text}`"),
            )
        };
        let var = "STRATA_STRICT";
        if let Some(text) = env(var) {
            let v = match text.as_str() {
                "1" | "true" | "yes" => true,
                "0" | "false" | "no" | "" => false,
                _ => return Err(bad(var, &text, "true or false (1 or 0)")),
            };
            self.strict.set(v, Source::Env(var.into()));
        }
        let var = "STRATA_JOBS";
        if let Some(text) = env(var) {
            let v = text_in_range(&text, MAX_JOBS)
                .map_err(|shown| out_of_range("jobs", MAX_JOBS, &shown).with_hint(set_by(var)))?;
            self.jobs.set(v, Source::Env(var.into()));
        }
        let var = "STRATA_CHECKPOINT_EVERY";
        if let Some(text) = env(var) {
            let v = CheckpointEvery::parse(&text).map_err(|why| {
                Error::new(SETTINGS, ErrorKind::Invalid, format!("{var}: {why}"))
                    .with_hint(format!("write {CHECKPOINT_EVERY_FORMS}"))
            })?;
            self.checkpoint_every.set(v, Source::Env(var.into()));
        }
        let var = "STRATA_SECRETS";
        if let Some(text) = env(var) {
            let names: Vec<String> = text
                .split(',')
                .map(str::trim)
                .filter(|n| !n.is_empty())
                .map(str::to_string)
                .collect();
            if let Some(n) = names.iter().find(|n| !env_name(n)) {
                return Err(bad(var, n, "a comma-separated list of variable names"));
            }
            self.secrets.set(names, Source::Env(var.into()));
        }
        for (index, (name, _)) in LIMIT_KEYS.iter().enumerate() {
            let var = format!("STRATA_LIMITS_{}", name.to_ascii_uppercase());
            if let Some(text) = env(&var) {
                let max = strata_core::limit_cap(name).unwrap_or(usize::MAX);
                let n = text_in_range(&text, max).map_err(|shown| {
                    out_of_range(&format!("limits.{name}"), max, &shown).with_hint(set_by(&var))
                })?;
                if let Some(slot) = limit_mut(&mut self.limits, name) {
                    *slot = n;
                }
                self.limit_sources[index] = Source::Env(var);
            }
        }
        Ok(())
    }

    /// Strict mode with the command's `--strict` over the settings.
    pub fn strict_with(&self, flag: bool) -> bool {
        flag || self.strict.value
    }

    /// Strict mode with the command's `--strict` (`Some(true)`) or `--no-strict`
    /// (`Some(false)`) over the settings (`None`: the settings decide).
    pub fn strict_over(&self, flag: Option<bool>) -> bool {
        flag.unwrap_or(self.strict.value)
    }

    /// The checkpoint cadence with the command's `--checkpoint-every` over the settings.
    pub fn checkpoint_every_with(&self, flag: Option<CheckpointEvery>) -> CheckpointEvery {
        flag.unwrap_or(self.checkpoint_every.value)
    }
}

/// `err` (a limit of `strata.yaml` out of its range) with, when `value` is over the file's
/// bound but a variable may go higher, how to: "… set STRATA_LIMITS_<KEY> (at most <cap>)".
fn over_file_bound(err: Error, key: &str, value: &Value) -> Error {
    let cap = strata_core::limit_cap(key).unwrap_or(usize::MAX);
    let bound = file_bound(key);
    let over = value
        .as_u64()
        .is_some_and(|n| usize::try_from(n).map_or(true, |n| n > bound));
    if !over || bound >= cap {
        return err;
    }
    err.with_hint(format!(
        "{FILE} may raise a size or a count to {FILE_RAISES} times its default; to go higher, set STRATA_LIMITS_{} (at most {cap})",
        key.to_ascii_uppercase()
    ))
}

/// `a string`, `a list`, … for messages.
fn kind_of(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(n) if n.is_u64() || n.is_i64() => "an integer",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "a map",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn load(file: &str, vars: &[(&str, &str)]) -> Result<Settings, Error> {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join(FILE), file).unwrap();
        let vars: Vec<(String, String)> = vars
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        Settings::load(dir.path(), &|name| {
            vars.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone())
        })
    }

    #[test]
    fn the_environment_wins_over_the_file_which_wins_over_the_defaults() {
        let s = load(
            "jobs: 2\nstrict: true\nlimits:\n  param_links: 5\n",
            &[("STRATA_JOBS", "8")],
        )
        .unwrap();
        assert_eq!(s.jobs.value, 8);
        assert_eq!(s.jobs.source, Source::Env("STRATA_JOBS".into()));
        assert!(s.strict.value);
        assert_eq!(s.strict.source.to_string(), "strata.yaml:2:9");
        assert_eq!(s.limits.param_links, 5);
        let at = LIMIT_KEYS.iter().position(|(k, _)| *k == "param_links");
        assert_eq!(s.limit_sources[at.unwrap()].to_string(), "strata.yaml:4:16");
        assert_eq!(s.limits.yaml_nodes, Limits::default().yaml_nodes);
        assert_eq!(s.secrets.source, Source::Default);
        assert_eq!(s.checkpoint_every.value, CheckpointEvery::Steps(1));
        assert_eq!(s.checkpoint_every.source, Source::Default);
    }

    #[test]
    fn a_project_file_raises_a_size_or_a_count_to_four_times_its_default_at_most() {
        let defaults = Limits::default();
        for (key, _) in LIMIT_KEYS {
            let bound = file_bound(key);
            let cap = strata_core::limit_cap(key).unwrap();
            match key {
                "default_depth" | "param_links" => assert_eq!(bound, cap, "{key}"),
                _ => assert_eq!(bound, 4 * limit(&defaults, key).unwrap(), "{key}"),
            }
            let s = load(&format!("limits:\n  {key}: {bound}\n"), &[]).unwrap();
            assert_eq!(limit(&s.limits, key), Some(bound), "{key}");
        }
        let e = load("limits:\n  output_bytes_per_config: 1073741824\n", &[]).unwrap_err();
        assert_eq!(
            e.message(),
            "`limits.output_bytes_per_config` must be an integer from 1 to 268435456, not 1073741824"
        );
        assert_eq!(
            e.hint(),
            Some("strata.yaml may raise a size or a count to 4 times its default; to go higher, set STRATA_LIMITS_OUTPUT_BYTES_PER_CONFIG (at most 1073741824)")
        );
        let loc = e.location().unwrap();
        assert_eq!((loc.file.as_str(), loc.line, loc.column), (FILE, 2, 28));
        let e = load("limits: {yaml_nodes: 4000001}\n", &[]).unwrap_err();
        assert_eq!(
            e.message(),
            "`limits.yaml_nodes` must be an integer from 1 to 4000000, not 4000001"
        );
        assert_eq!(
            e.hint(),
            Some("strata.yaml may raise a size or a count to 4 times its default; to go higher, set STRATA_LIMITS_YAML_NODES (at most 100000000)")
        );
        // What is wrong whatever the bound gets no advice on going higher.
        for (file, message) in [
            (
                "limits: {template_bytes: 0}\n",
                "`limits.template_bytes` must be an integer from 1 to 16777216, not 0",
            ),
            (
                "limits: {template_bytes: big}\n",
                "`limits.template_bytes` must be an integer from 1 to 16777216, not a string",
            ),
            (
                "limits: {default_depth: 101}\n",
                "`limits.default_depth` must be an integer from 1 to 100, not 101",
            ),
        ] {
            let e = load(file, &[]).unwrap_err();
            assert_eq!((e.message(), e.hint()), (message, None), "{file}");
        }
    }

    #[test]
    fn a_variable_raises_a_limit_past_the_project_files_bound_up_to_its_cap() {
        let var = "STRATA_LIMITS_OUTPUT_BYTES_PER_CONFIG";
        let s = load(
            "limits: {output_bytes_per_config: 268435456}\n",
            &[(var, "1073741824")],
        )
        .unwrap();
        assert_eq!(s.limits.output_bytes_per_config, 1 << 30);
        let at = LIMIT_KEYS
            .iter()
            .position(|(k, _)| *k == "output_bytes_per_config");
        assert_eq!(s.limit_sources[at.unwrap()], Source::Env(var.into()));
        let e = load("", &[(var, "1073741825")]).unwrap_err();
        assert_eq!(
            e.message(),
            "`limits.output_bytes_per_config` must be an integer from 1 to 1073741824, not 1073741825"
        );
        assert_eq!(
            e.hint(),
            Some("set by STRATA_LIMITS_OUTPUT_BYTES_PER_CONFIG")
        );
        // The file's bound holds even where a variable sets the same limit.
        let e = load(
            "limits: {output_bytes_per_config: 268435457}\n",
            &[(var, "1073741824")],
        )
        .unwrap_err();
        assert_eq!(
            e.message(),
            "`limits.output_bytes_per_config` must be an integer from 1 to 268435456, not 268435457"
        );
        let s =
            Settings::from_env(&|name| (name == var).then(|| "1073741824".to_string())).unwrap();
        assert_eq!(s.limits.output_bytes_per_config, 1 << 30);
    }

    #[test]
    fn checkpoints_every_n_steps_or_every_interval() {
        let s = load("checkpoint_every: 500\n", &[]).unwrap();
        assert_eq!(s.checkpoint_every.value, CheckpointEvery::Steps(500));
        assert_eq!(s.checkpoint_every.source.to_string(), "strata.yaml:1:19");
        let s = load("checkpoint_every: 2s\n", &[]).unwrap();
        assert_eq!(s.checkpoint_every.value.to_string(), "2s");
        let e = load("checkpoint_every: 1m\n", &[("STRATA_CHECKPOINT_EVERY", "")]).unwrap_err();
        assert_eq!(
            e.message(),
            "STRATA_CHECKPOINT_EVERY: `` is not a duration: write a number and a unit, ms, s, m, h, d or w (500ms, 30s, 1.5s, 5m, 2h, 7d, 1w)"
        );
        for (text, shown) in [
            ("1m", "1m"),
            ("1.5h", "90m"),
            ("1w", "1w"),
            ("\" 5m \"", "5m"),
        ] {
            let s = load(&format!("checkpoint_every: {text}\n"), &[]).unwrap();
            assert_eq!(s.checkpoint_every.value.to_string(), shown, "{text}");
            let s = load("", &[("STRATA_CHECKPOINT_EVERY", text.trim_matches('"'))]).unwrap();
            assert_eq!(s.checkpoint_every.value.to_string(), shown, "{text}");
        }
        let s = load(
            "checkpoint_every: 2s\n",
            &[("STRATA_CHECKPOINT_EVERY", "250ms")],
        )
        .unwrap();
        assert_eq!(s.checkpoint_every.value.to_string(), "250ms");
        assert_eq!(
            s.checkpoint_every.source.to_string(),
            "env STRATA_CHECKPOINT_EVERY"
        );
        assert_eq!(
            s.checkpoint_every_with(Some(CheckpointEvery::Steps(7))),
            CheckpointEvery::Steps(7)
        );
        assert_eq!(s.checkpoint_every_with(None).to_string(), "250ms");
    }

    #[test]
    fn mistakes_are_located_with_a_hint() {
        let e = load("strict: true\nlimts: {}\n", &[]).unwrap_err();
        assert_eq!(e.message(), "unknown setting `limts`");
        assert_eq!(e.hint(), Some("did you mean `limits`?"));
        let loc = e.location().unwrap();
        assert_eq!(
            (loc.file.as_str(), loc.line, loc.column),
            ("strata.yaml", 2, 1)
        );
        let e = load("limits: {param_link: 4}\n", &[]).unwrap_err();
        assert_eq!(e.message(), "unknown setting `limits.param_link`");
        assert_eq!(e.location().unwrap().column, 10);
        assert_eq!(e.hint(), Some("did you mean `param_links`?"));
        let e = load("jobs: many\n", &[]).unwrap_err();
        assert_eq!(
            e.message(),
            "`jobs` must be an integer from 1 to 256, not a string"
        );
        let e = load("jobs: 0\n", &[]).unwrap_err();
        assert_eq!(
            e.message(),
            "`jobs` must be an integer from 1 to 256, not 0"
        );
        let e = load("", &[("STRATA_JOBS", "0")]).unwrap_err();
        assert_eq!(
            e.message(),
            "`jobs` must be an integer from 1 to 256, not 0"
        );
        assert_eq!(e.hint(), Some("set by STRATA_JOBS"));
        let e = load("limits: {default_depth: 501}\n", &[]).unwrap_err();
        assert_eq!(
            e.message(),
            "`limits.default_depth` must be an integer from 1 to 100, not 501"
        );
        assert_eq!(
            misspelt_vars(["STRATA_JOSB", "STRATA_JOBS", "STRATA_BIN", "PATH"]),
            ["warning[settings]: `STRATA_JOSB` is not a setting and is ignored: did you mean `STRATA_JOBS`?"]
        );
        let e = load("", &[("STRATA_STRICT", "maybe")]).unwrap_err();
        assert_eq!(
            e.message(),
            "STRATA_STRICT must be true or false (1 or 0), not `maybe`"
        );
        let forms = "write a number of steps greater than 0 (100), or a duration greater than 0 and at most a week: a number and a unit, ms, s, m, h, d or w (500ms, 30s, 1.5s, 5m, 2h, 7d, 1w)";
        let e = load("checkpoint_every: 0\n", &[]).unwrap_err();
        assert_eq!(
            e.message(),
            "`checkpoint_every`: `0` is not a number of steps: it must be greater than 0"
        );
        assert_eq!(e.hint(), Some(forms));
        let e = load("checkpoint_every: -1\n", &[]).unwrap_err();
        assert_eq!(
            e.message(),
            "`checkpoint_every`: `-1` is not a duration: write a number and a unit, ms, s, m, h, d or w (500ms, 30s, 1.5s, 5m, 2h, 7d, 1w)"
        );
        let e = load("checkpoint_every: 8d\n", &[]).unwrap_err();
        assert_eq!(
            e.message(),
            "`checkpoint_every`: `8d` is not a checkpoint interval: it must be at most a week (1w)"
        );
        let loc = e.location().unwrap();
        assert_eq!((loc.line, loc.column), (1, 19));
        let e = load("checkpoint_every: [1]\n", &[]).unwrap_err();
        assert_eq!(
            e.message(),
            "`checkpoint_every` must be a number of steps or a duration, not a list"
        );
        let e = load("", &[("STRATA_CHECKPOINT_EVERY", "soon")]).unwrap_err();
        assert_eq!(
            e.message(),
            "STRATA_CHECKPOINT_EVERY: `soon` is not a duration: write a number and a unit, ms, s, m, h, d or w (500ms, 30s, 1.5s, 5m, 2h, 7d, 1w)"
        );
        assert_eq!(e.hint(), Some(forms));
        let e = load("", &[("STRATA_CHECKPOINT_EVERY", "0ms")]).unwrap_err();
        assert_eq!(
            e.message(),
            "STRATA_CHECKPOINT_EVERY: `0ms` is not a checkpoint interval: it must be greater than 0"
        );
        let e = load("secrets: [api_token]\n", &[]).unwrap_err();
        assert_eq!(
            e.message(),
            "`secrets[0]` is not an environment variable name"
        );
    }
}
