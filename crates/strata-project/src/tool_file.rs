//! The serde types of a tool file (`tools/**/*.yaml`), and reading one with located errors.

use serde::Deserialize;
use serde_json::{Map, Value};
use strata_core::{is_env_name, Error, ErrorKind, FieldPath, Layer, Limits, Location, PathSeg};
use strata_doc::{Document, Format};

/// A tool, runtime or primitive as written in a YAML file under `tools/`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ToolFile {
    /// The kind of file: `tool` (the default). Other kinds (`graph`) are run by other engines.
    #[serde(default)]
    pub kind: Option<String>,
    /// One line saying what the tool does (shown by `strata tools`).
    #[serde(default)]
    pub description: Option<String>,
    /// The tool's own version string.
    #[serde(default)]
    pub version: Option<String>,
    /// The id of the runtime this tool runs on; absent only on the `subprocess` primitive.
    #[serde(default)]
    pub executor: Option<String>,
    /// A JSON Schema (subset, see `docs/tools.md`) for the caller's parameters.
    #[serde(default)]
    pub parameters: Option<Value>,
    /// A JSON Schema (the subset of `parameters`) of what the tool returns (its stdout
    /// parsed as JSON): `strata check` reads `${result.x}` against its `properties`.
    #[serde(default)]
    pub outputs: Option<Value>,
    /// How this link contributes to the child's environment.
    #[serde(default)]
    pub env_config: Option<EnvConfig>,
    /// The execution config, merged over the executor chain (primitive first, tool last).
    #[serde(default)]
    pub config: Option<Map<String, Value>>,
    /// Names of environment variables whose values are secret (shown as `***`).
    #[serde(default)]
    pub secrets: Vec<String>,
    /// The response fields its results can provide in `canned_response_fields` (dotted
    /// names such as `account.balance`), for `strata check` and `strata explain`.
    #[serde(default)]
    pub response_fields: Vec<String>,
    /// The tool only reads: running it changes nothing (no file written, no request that
    /// changes a remote state). `strata mcp` tells agents so, and `--read-only` exposes only
    /// such tools, and the directives, graphs and plans that call nothing else.
    #[serde(default)]
    pub read_only: bool,
    /// What a step running the tool needs (`cpus`, `gpus`, `memory`, `custom`), as written;
    /// read into [`ToolFile::scale`].
    #[serde(default)]
    pub resources: Option<Value>,
    /// How a step whose tool fails is run again (`limit`, `delay`), as written; read into
    /// [`ToolFile::scale`].
    #[serde(default)]
    pub retries: Option<Value>,
    /// `resources` and `retries`, read and checked when the file loads.
    #[serde(skip)]
    pub scale: strata_tools::Scale,
}

/// The `env_config` section of a tool file.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EnvConfig {
    /// Finds an interpreter and sets a variable to its path.
    #[serde(default)]
    pub interpreter: Option<Interpreter>,
    /// Variables set in declaration order; each value is a layer-E template.
    #[serde(default)]
    pub env: Map<String, Value>,
}

/// How an interpreter is found.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum InterpreterKind {
    /// `<project>/<venv>/bin/python3` (or `python`).
    VenvPython,
    /// The first of `search_paths` × `candidates` that is an executable file.
    LocalBinary,
    /// The first of `candidates` found on `PATH`.
    SystemBinary,
    /// The first line of the output of `command` (an argv list).
    Command,
}

impl InterpreterKind {
    /// The name as written in tool files.
    pub fn name(self) -> &'static str {
        match self {
            InterpreterKind::VenvPython => "venv_python",
            InterpreterKind::LocalBinary => "local_binary",
            InterpreterKind::SystemBinary => "system_binary",
            InterpreterKind::Command => "command",
        }
    }
}

/// The `env_config.interpreter` section.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Interpreter {
    /// How to find it.
    #[serde(rename = "type")]
    pub kind: InterpreterKind,
    /// The environment variable set to the interpreter's path (e.g. `PYTHON`).
    pub var: String,
    /// `venv_python`: the virtual environment's directory, relative to the project (`.venv`).
    #[serde(default)]
    pub venv: Option<String>,
    /// `local_binary`: directories searched, relative to the project; `{tool_dir}`,
    /// `{project_path}` and the other runtime parameters may be used.
    #[serde(default)]
    pub search_paths: Vec<String>,
    /// `local_binary` and `system_binary`: file names tried in order.
    #[serde(default)]
    pub candidates: Vec<String>,
    /// `command`: the argv whose first output line is the interpreter's path.
    #[serde(default)]
    pub command: Vec<String>,
    /// Used when nothing is found: a program name (looked up on `PATH`) or a path.
    #[serde(default)]
    pub fallback: Option<String>,
}

/// A located request-layer error in `doc_name` at `line:column`.
pub(crate) fn file_error(doc_name: &str, line: usize, column: usize, message: String) -> Error {
    Error::new(Layer::REQUEST, ErrorKind::Invalid, message).at_location(Location {
        file: doc_name.to_string(),
        line,
        column,
    })
}

/// A field path from keys.
pub(crate) fn path_of(keys: &[&str]) -> FieldPath {
    FieldPath(keys.iter().map(|k| PathSeg::Key(k.to_string())).collect())
}

/// Reads a tool file: UTF-8, YAML syntax and alias limits, then the typed fields.
pub fn read_tool_file(
    name: &str,
    bytes: Vec<u8>,
    limits: &Limits,
) -> Result<(Document, ToolFile), Error> {
    let doc = Document::parse(name, bytes, Format::Yaml, limits)?;
    if !doc.value.is_object() {
        return Err(file_error(
            name,
            1,
            1,
            "a tool file must be a YAML map (description, executor, config, …)".into(),
        ));
    }
    check_kind(&doc)?;
    let mut file = parse_fields(&doc)?;
    validate(&doc, &file)?;
    file.scale = strata_tools::Scale::read(
        file.resources.as_ref(),
        file.retries.as_ref(),
        Layer::REQUEST,
    )
    .map_err(|e| doc.locate_error(e))?;
    Ok((doc, file))
}

fn parse_fields(doc: &Document) -> Result<ToolFile, Error> {
    doc.typed::<ToolFile>().map_err(|e| {
        let (line, column) = e.at;
        let err = file_error(
            &doc.name,
            line,
            column,
            format!("invalid tool file: {}", e.message),
        );
        match unknown_field_hint(&e.message) {
            Some(hint) => err.with_hint(hint),
            None => err.with_hint("the fields are described in docs/tools.md"),
        }
    })
}

/// Refuses files of another kind (graphs) before their fields are read as a tool's.
fn check_kind(doc: &Document) -> Result<(), Error> {
    match doc.value.get("kind") {
        None => Ok(()),
        Some(Value::String(kind)) if kind == "tool" => Ok(()),
        Some(kind) => {
            let kind = strata_core::value_to_text(kind);
            let err = Error::new(
                Layer::REQUEST,
                ErrorKind::Invalid,
                format!(
                    "`{}` is a tool of kind `{kind}`, which the executor chain cannot run",
                    doc.name
                ),
            )
            .with_hint("only tools of kind `tool` (the default) run on an executor")
            .with_path(path_of(&["kind"]));
            Err(doc.locate_error(err))
        }
    }
}

/// A did-you-mean for serde's "unknown field `x`, expected one of `a`, `b`" messages.
fn unknown_field_hint(message: &str) -> Option<String> {
    let (_, rest) = message.split_once("unknown field `")?;
    let (field, rest) = rest.split_once('`')?;
    let expected: Vec<String> = rest
        .split('`')
        .skip(1)
        .step_by(2)
        .map(str::to_string)
        .collect();
    strata_core::did_you_mean(field, &expected).map(|best| format!("did you mean `{best}`?"))
}

/// Checks what serde cannot: names, interpreter fields that fit the type.
fn validate(doc: &Document, file: &ToolFile) -> Result<(), Error> {
    let fail = |keys: &[&str], message: String, hint: &str| {
        let err = Error::new(Layer::REQUEST, ErrorKind::Invalid, message)
            .with_hint(hint)
            .with_path(path_of(keys));
        doc.locate_error(err)
    };
    for (i, name) in file.secrets.iter().enumerate() {
        if !is_env_name(name) {
            let err = Error::new(
                Layer::REQUEST,
                ErrorKind::Invalid,
                format!("`{name}` is not a valid environment variable name"),
            )
            .with_hint("secrets lists variable names such as API_TOKEN")
            .with_path(path_of(&["secrets"]).child(PathSeg::Index(i)));
            return Err(doc.locate_error(err));
        }
    }
    if let Some(schema) = &file.outputs {
        strata_tools::check_schema_of(schema, "outputs").map_err(|e| {
            let err = Error::new(Layer::REQUEST, ErrorKind::Invalid, e.message)
                .with_hint("see docs/tools.md for the supported schema subset")
                .with_path(e.path.under(&path_of(&["outputs"])));
            doc.locate_error(err)
        })?;
    }
    for (i, name) in file.response_fields.iter().enumerate() {
        if let Some(problem) = strata_tools::response_fields::name_problem(name) {
            let err = Error::new(Layer::REQUEST, ErrorKind::Invalid, problem)
                .with_hint("response fields are dotted names such as `account.balance`")
                .with_path(path_of(&["response_fields"]).child(PathSeg::Index(i)));
            return Err(doc.locate_error(err));
        }
    }
    let Some(env_config) = &file.env_config else {
        return Ok(());
    };
    for name in env_config.env.keys() {
        if !is_env_name(name) {
            return Err(fail(
                &["env_config", "env", name],
                format!("`{name}` is not a valid environment variable name"),
                "names are letters, digits and `_`, not starting with a digit",
            ));
        }
    }
    for (name, value) in &env_config.env {
        if value.is_array() || value.is_object() {
            return Err(fail(
                &["env_config", "env", name],
                format!("the value of `{name}` must be a string, number or boolean"),
                "environment values are text",
            ));
        }
    }
    if let Some(interp) = &env_config.interpreter {
        let at = |k: &str| ["env_config", "interpreter", k].map(str::to_string);
        let fail_at = |k: &str, message: String, hint: &str| {
            let keys = at(k);
            let keys: Vec<&str> = keys.iter().map(String::as_str).collect();
            fail(&keys, message, hint)
        };
        if !is_env_name(&interp.var) {
            return Err(fail_at(
                "var",
                format!("`{}` is not a valid environment variable name", interp.var),
                "var names the variable the interpreter's path is stored in, e.g. PYTHON",
            ));
        }
        let kind = interp.kind.name();
        match interp.kind {
            InterpreterKind::LocalBinary if interp.search_paths.is_empty() => {
                return Err(fail_at(
                    "type",
                    format!("interpreter type `{kind}` needs `search_paths`"),
                    "list the directories to search, relative to the project",
                ));
            }
            InterpreterKind::LocalBinary | InterpreterKind::SystemBinary
                if interp.candidates.is_empty() =>
            {
                return Err(fail_at(
                    "type",
                    format!("interpreter type `{kind}` needs `candidates`"),
                    "list the file names to try, e.g. [python3, python]",
                ));
            }
            InterpreterKind::Command if interp.command.is_empty() => {
                return Err(fail_at(
                    "type",
                    format!("interpreter type `{kind}` needs `command` (an argv list)"),
                    "e.g. command: [pyenv, which, python]",
                ));
            }
            _ => {}
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(text: &str) -> Result<ToolFile, Error> {
        read_tool_file("t.yaml", text.as_bytes().to_vec(), &Limits::default()).map(|(_, f)| f)
    }

    #[test]
    fn reads_every_field() {
        let f = read(
            "description: d\nversion: \"1\"\nexecutor: runtimes/python\nparameters: {type: object}\n\
             env_config:\n  interpreter: {type: system_binary, var: PY, candidates: [python3]}\n  env: {A: x, B: 1}\n\
             config: {command: c, args: [a]}\nsecrets: [TOKEN]\nresponse_fields: [account.balance, transactions]\n",
        )
        .unwrap();
        assert_eq!(f.description.as_deref(), Some("d"));
        assert_eq!(f.executor.as_deref(), Some("runtimes/python"));
        let ec = f.env_config.unwrap();
        assert_eq!(ec.interpreter.unwrap().kind, InterpreterKind::SystemBinary);
        assert_eq!(ec.env.keys().collect::<Vec<_>>(), ["A", "B"]);
        assert_eq!(f.secrets, ["TOKEN"]);
        assert_eq!(f.response_fields, ["account.balance", "transactions"]);
    }

    #[test]
    fn response_fields_are_dotted_names_that_are_not_keywords() {
        let e = read("response_fields:\n  - account.balance\n  - account.in\n").unwrap_err();
        assert_eq!(
            e.to_string(),
            "t.yaml:3:5: request error at response_fields[1]: `account.in`: `in` is a Jinja keyword, not a field name (hint: response fields are dotted names such as `account.balance`)"
        );
        let e = read("response_fields: [\"a b\"]\n").unwrap_err();
        assert_eq!(
            e.message(),
            "`a b` is not a field name: each dotted part is letters, digits and `_`, not starting with a digit"
        );
    }

    #[test]
    fn unknown_fields_are_located() {
        let e = read("description: d\nconfg: {}\n").unwrap_err();
        assert!(
            e.message()
                .starts_with("invalid tool file: unknown field `confg`"),
            "{}",
            e.message()
        );
        let loc = e.location().unwrap();
        assert_eq!((loc.line, loc.column), (2, 1));
        assert_eq!(e.hint(), Some("did you mean `config`?"));
    }

    #[test]
    fn resources_and_retries_are_read_and_located() {
        let f =
            read("resources: {cpus: 2, memory: 512Mi}\nretries: {limit: 3, delay: 2s}\n").unwrap();
        assert_eq!(f.scale.resources.cpus, Some(2.0));
        assert_eq!(f.scale.resources.memory, Some(512 << 20));
        assert_eq!(f.scale.retries.map(|r| r.limit), Some(3));
        let e = read("description: d\nresources:\n  cpus: -1\n").unwrap_err();
        assert_eq!(
            e.to_string(),
            "t.yaml:3:9: request error at resources.cpus: `cpus` must be at least 0, not -1"
        );
        let e = read("resources:\n  memory: 2GB\n").unwrap_err();
        assert_eq!(
            e.to_string(),
            "t.yaml:2:11: request error at resources.memory: unknown size unit `GB` in `2GB` (hint: a size is a number of bytes, or a number and a unit: k, M, G, T (powers of 1000) or Ki, Mi, Gi, Ti (powers of 1024), e.g. 512Mi, 2Gi)"
        );
        let e = read("retries:\n  limt: 2\n").unwrap_err();
        assert_eq!(
            e.to_string(),
            "t.yaml:2:9: request error at retries.limt: unknown key `limt` in `retries` (hint: did you mean `limit`?)"
        );
    }

    #[test]
    fn interpreter_fields_must_fit_the_type() {
        let e = read("env_config:\n  interpreter: {type: system_binary, var: PY}\n").unwrap_err();
        assert_eq!(
            e.message(),
            "interpreter type `system_binary` needs `candidates`"
        );
        assert_eq!(e.path().to_string(), "env_config.interpreter.type");
        let e = read("env_config:\n  env: {\"A B\": x}\n").unwrap_err();
        assert_eq!(
            e.message(),
            "`A B` is not a valid environment variable name"
        );
    }

    #[test]
    fn the_editor_schema_names_exactly_these_fields() {
        let schema: Value =
            serde_json::from_str(include_str!("../../../docs/schemas/tool.schema.json")).unwrap();
        let keys = |v: &Value| -> Vec<String> {
            let mut k: Vec<String> = v.as_object().unwrap().keys().cloned().collect();
            k.sort();
            k
        };
        assert_eq!(
            keys(&schema["properties"]),
            [
                "config",
                "description",
                "env_config",
                "executor",
                "kind",
                "outputs",
                "parameters",
                "read_only",
                "resources",
                "response_fields",
                "retries",
                "secrets",
                "version"
            ]
        );
        assert_eq!(
            keys(&schema["properties"]["config"]["properties"]),
            [
                "args",
                "command",
                "cwd",
                "env",
                "input_data",
                "max_output_bytes",
                "params_env_prefix",
                "timeout"
            ]
        );
        let kinds = schema["$defs"]["interpreter"]["properties"]["type"]["enum"].clone();
        assert_eq!(
            kinds,
            serde_json::json!(["venv_python", "local_binary", "system_binary", "command"])
        );
        let subset = keys(&schema["$defs"]["paramSchema"]["properties"]);
        let mut ours: Vec<String> = strata_tools::params::KEYWORDS
            .iter()
            .map(|k| k.to_string())
            .collect();
        ours.push("$schema".into());
        ours.sort();
        assert_eq!(subset, ours);
    }

    #[test]
    fn other_kinds_are_refused() {
        let e = read("kind: graph\nnodes: {}\n").unwrap_err();
        assert_eq!(
            e.message(),
            "`t.yaml` is a tool of kind `graph`, which the executor chain cannot run"
        );
    }
}
