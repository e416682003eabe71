//! RyeOS YAML tools and runtimes (both eras) → strata tool files (MAPPING.md §2), and HEAD
//! `.ai/runtimes/*.yaml` daemon descriptors (refused). Graph files (`tool_type: graph`) are
//! the graph converter's.

use std::collections::BTreeSet;

use serde_json::{Map, Value};
use strata_core::shown;

use crate::model::{Catalog, FileImport};
use crate::position::yaml_key_position;
use crate::schema;
use crate::util::{compact, mentions, parent, replace_in, scalar_text, string, yaml_file};

/// The executor every chain ends at.
pub(crate) const PRIMITIVE: &str = "runtimes/subprocess";

/// Config keys strata reserves (docs/tools.md "`config`").
const RESERVED: [&str; 8] = [
    "command",
    "args",
    "cwd",
    "env",
    "input_data",
    "timeout",
    "max_output_bytes",
    "params_env_prefix",
];

/// The interpreter types strata resolves (docs/tools.md "Interpreters").
const INTERPRETER_TYPES: [&str; 4] = ["venv_python", "local_binary", "system_binary", "command"];

/// What a tool converter may know besides the catalog: the snapshot of RyeOS's
/// `.ai/config/execution/execution.yaml` (for `config_resolve`), when one exists.
#[derive(Clone, Debug, Default)]
pub struct ToolContext {
    /// `(source, parsed map)` of the execution config found, project space first.
    pub execution: Option<(String, Map<String, Value>)>,
}

/// Whether a RyeOS executor id names a primitive (every chain now ends at strata's).
pub(crate) fn is_primitive(executor: &str) -> bool {
    matches!(
        executor,
        "@subprocess" | "rye/core/primitives/execute" | "rye/core/primitives/subprocess"
    )
}

/// Converts one RyeOS YAML tool or runtime (`source`: its path from the RyeOS root, `id`: its
/// path under `.ai/tools/` without extension).
pub fn import_tool(
    source: &str,
    id: &str,
    text: &str,
    catalog: &Catalog,
    ctx: &ToolContext,
) -> FileImport {
    let mut out = FileImport::imported(source);
    let doc = match crate::yaml::read_yaml(text) {
        Ok(v) => v,
        Err(why) => return crate::yaml::refuse_unreadable(out, &why),
    };
    let Value::Object(doc) = doc else {
        return out.refuse("IMP-yaml", "the file is not a YAML map");
    };
    if let Some(reason) = refusal(id, &doc) {
        return out.refuse(reason.0, reason.1);
    }
    let pos = |path: &[&str]| yaml_key_position(text, 0, path);
    let tool_type = doc.get("tool_type").and_then(Value::as_str).unwrap_or("");
    let runtime = tool_type == "runtime" || id.split('/').any(|s| s == "runtimes");

    let mut tool = Map::new();
    let mut config = match doc.get("config") {
        Some(Value::Object(m)) => m.clone(),
        _ => Map::new(),
    };
    let mut env_config = Map::new();
    let mut secrets: Vec<Value> = Vec::new();
    let mut parameters: Option<Value> = None;
    let mut interp_var: Option<String> = None;

    for (k, v) in &doc {
        let name = k.as_str();
        let here = || pos(&[name]);
        match name {
            "tool_type" => out.rewrite(format!(
                "tool_type: {} dropped (kind defaults to tool)",
                shown(&scalar_text(v).unwrap_or_default())
            )),
            "category" | "name" => out.rewrite(format!("{name}: dropped (the id is the path `{id}`)")),
            "tool_id" => {
                let stem = id.rsplit('/').next().unwrap_or(id);
                let given = scalar_text(v).unwrap_or_default();
                if given == stem {
                    out.rewrite("tool_id: dropped (the id is the path)");
                } else {
                    out.warn_with(
                        "IMP-tool_id",
                        format!("`tool_id: {}` differs from the file name: the strata id is the path `{id}`", shown(&given)),
                        here,
                    );
                }
            }
            "version" => {
                if let Some(s) = scalar_text(v) {
                    tool.insert("version".into(), Value::String(s));
                }
            }
            "description" => {
                if let Some(s) = scalar_text(v) {
                    tool.insert("description".into(), Value::String(s));
                }
            }
            "executor_id" => {}
            "config_schema" | "input_schema" => {
                if parameters.is_some() {
                    continue;
                }
                let c = schema::convert(v);
                out.rewrite(format!("{name} → parameters"));
                if c.dollar_schema {
                    out.rewrite("$schema dropped from the parameters");
                }
                for d in &c.dropped {
                    let here = || locate_keyword(text, name, d);
                    out.warn_with(
                        "IMP-schema-keyword",
                        format!(
                            "schema keyword `{}` at {} dropped: strata's parameters have no such keyword, the constraint is lost",
                            shown(&d.keyword),
                            shown(&d.at)
                        ),
                        here,
                    );
                }
                parameters = Some(c.schema);
            }
            "env_config" => {
                if let Value::Object(ec) = v {
                    env_config = convert_env_config(text, ec, &mut out, &mut interp_var);
                    if let Some(Value::Object(paths)) = ec.get("env_paths") {
                        let sub = |p: &str| p.replace("{runtime_lib}", "{runtime_dir}/lib");
                        for key in env_prepends(paths, &mut config, sub) {
                            out.rewrite(format!("env_config.env_paths → {key} (prepended)"));
                        }
                    }
                }
            }
            "anchor" => {
                if let Value::Object(a) = v {
                    convert_anchor(a, &mut config, &mut out, here);
                }
            }
            "verify_deps" => out.warn_with(
                "IMP-verify_deps",
                "`verify_deps` dropped: strata does not verify the integrity of a tool's sibling files",
                here,
            ),
            "config_resolve" => match &ctx.execution {
                Some((src, exec)) => {
                    merge(&mut config, exec);
                    out.warn_with(
                        "IMP-config_resolve",
                        format!("`execution/execution.yaml` overrides are not merged by strata: the snapshot of `{src}` was merged into `config` at import"),
                        here,
                    );
                }
                None => out.warn_with(
                    "IMP-config_resolve",
                    "`execution/execution.yaml` overrides are not merged by strata (none found at import: dropped)",
                    here,
                ),
            },
            "execution_params" | "execution_owner" | "native_async" | "native_resume" => out.warn_with(
                "IMP-exec-misc",
                format!("`{name}` dropped: strata has no equivalent (it runs each tool as one subprocess)"),
                here,
            ),
            "permissions" | "requires" | "required_caps" => out.warn_with(
                "IMP-permissions",
                format!("`{name}` dropped: strata enforces no capabilities"),
                here,
            ),
            "required_secrets" => {
                if let Value::Array(names) = v {
                    secrets.extend(names.iter().cloned());
                    out.rewrite("required_secrets → secrets");
                }
            }
            "config" => {}
            other => out.warn_with(
                "IMP-dropped",
                format!("`{}` has no strata equivalent: dropped", shown(other)),
                here,
            ),
        }
    }

    // The executor.
    let executor = doc.get("executor_id").and_then(Value::as_str).unwrap_or("");
    let executor_here = || pos(&["executor_id"]);
    let quoted = shown(executor);
    if is_primitive(executor) {
        out.rewrite(format!("executor_id: {quoted} → executor: {PRIMITIVE}"));
        tool.insert("executor".into(), string(PRIMITIVE));
    } else {
        tool.insert("executor".into(), string(executor));
        out.rewrite(format!("executor_id: {quoted} → executor: {quoted}"));
        if !catalog.has_tool(executor) {
            out.warn_with(
                "IMP-executor-missing",
                format!("executor `{quoted}` is in no space (the project or a --space): the chain stays broken until a tool with that id exists"),
                executor_here,
            );
        }
    }

    // A YAML beside a code file of its id runs that file (its `{tool_path}`).
    let code_source = match catalog.code_beside.get(id) {
        Some(rel) if text.contains("tool_path") => {
            out.rewrite(format!(
                "{{tool_path}} is the code file beside: .ai/tools/{rel}"
            ));
            format!(".ai/tools/{rel}")
        }
        _ => source.to_owned(),
    };
    convert_config(
        text,
        &code_source,
        runtime,
        &doc,
        &mut config,
        &mut out,
        interp_var.as_deref(),
        parameters.as_ref(),
    );
    for name in caller_keys(&config, parameters.as_ref()) {
        let here = || crate::util::find(text, &format!("{{{name}}}"));
        out.warn_with(
            "IMP-caller-key",
            format!("`{{{}}}` is no parameter, config key or runtime parameter of this file: RyeOS's executor supplied it; strata takes it from the `config` of the tool that runs on this one (`strata check` reports R001 while none sets it)", shown(&name)),
            here,
        );
    }

    let mut sealed = Value::Object(std::mem::take(&mut config));
    match crate::sealed::unseal_config(&mut sealed) {
        Ok(true) => {
            let here = || crate::util::find(text, crate::sealed::MARKER);
            out.warn_with(
                "IMP-sealed",
                "the program read the tool's code through the RyeOS daemon's sealed hand-off (`RYEOS_VERIFIED_CODE_MAP`, digest-checked); it now reads the code file it is given (`{code_path}`) directly: strata verifies no digests",
                here,
            );
        }
        Ok(false) => {}
        Err(()) => return out.refuse(
            "IMP-sealed",
            "the program reads the tool's code through the RyeOS daemon's sealed hand-off (`RYEOS_VERIFIED_CODE_MAP`) in a shape the importer does not know: it would stop with \"missing sealed tool identity\" under strata",
        ),
    }
    if let Value::Object(m) = sealed {
        config = m;
    }
    if !secrets.is_empty() {
        tool.insert("secrets".into(), Value::Array(secrets));
    }
    tool.insert(
        "parameters".into(),
        parameters.unwrap_or_else(|| {
            if !runtime {
                out.rewrite("no schema → parameters: {type: object, additionalProperties: true} (RyeOS validated nothing)");
            }
            schema::permissive()
        }),
    );
    if !env_config.is_empty() {
        tool.insert("env_config".into(), Value::Object(env_config));
    }
    if !config.is_empty() {
        tool.insert("config".into(), Value::Object(config));
    }
    out.write(
        format!("tools/{id}.yaml"),
        yaml_file(source, &Value::Object(tool)),
    );
    out
}

/// The reason a tool file cannot be imported at all, when it cannot.
fn refusal(id: &str, doc: &Map<String, Value>) -> Option<(&'static str, String)> {
    let tool_type = doc.get("tool_type").and_then(Value::as_str).unwrap_or("");
    let executor = doc.get("executor_id");
    match tool_type {
        "primitive" => return Some(("IMP-primitive", "RyeOS primitive: every chain now ends at strata's `runtimes/subprocess`; `executor_id` references to it are rewritten".into())),
        "http" => return Some(("IMP-http", format!("HTTP provider `{id}` (config.url, method, headers, body, auth, retry): strata runs subprocesses only, it has no HTTP primitive"))),
        "extractor" | "mcp_server" | "email_provider" => {
            return Some(("IMP-nonrunnable", format!("`tool_type: {tool_type}` configures RyeOS itself and is not a runnable tool (the file stays under .ai/)")))
        }
        _ => {}
    }
    if doc.get("kind").and_then(Value::as_str) == Some("streaming_tool") {
        return Some(("IMP-streaming", "`kind: streaming_tool`: a RyeOS bundle binary speaking the daemon's framed streaming protocol (length-prefixed JSON frames on stdout); strata has no such protocol".into()));
    }
    if let Some(t) = doc
        .get("env_config")
        .and_then(|e| e.get("interpreter"))
        .and_then(|i| i.get("type"))
        .and_then(Value::as_str)
    {
        if !INTERPRETER_TYPES.contains(&t) && t != "node_modules" {
            return Some((
                "IMP-interpreter",
                format!(
                    "interpreter `type: {}` has no strata equivalent (strata resolves {})",
                    shown(t),
                    INTERPRETER_TYPES.join(", ")
                ),
            ));
        }
    }
    if let Some(Value::Object(t)) = doc.get("terminal_executor") {
        let kind = t.get("kind").and_then(scalar_text).unwrap_or_default();
        return Some(("IMP-terminal", format!("terminal executor `{}` (executor_id: null) is RyeOS's own dispatch and has no strata equivalent", shown(&kind))));
    }
    if id.ends_with("state-graph/runtime") || id.ends_with("state_graph_runtime") {
        return Some(("IMP-graph-runtime", "the RyeOS state-graph walker: graphs are `kind: graph` files run by strata's own walker".into()));
    }
    match executor.and_then(Value::as_str) {
        None => Some(("IMP-nonrunnable", format!(
            "`executor_id: null`{}: the file configures RyeOS itself and is not a runnable tool",
            if tool_type.is_empty() { String::new() } else { format!(" (tool_type: {})", shown(tool_type)) }
        ))),
        Some("@method_dispatch") => Some(("IMP-executor", "executor `@method_dispatch` has no strata equivalent (method dispatch into the RyeOS daemon)".into())),
        Some(e) if e.starts_with('@') && e != "@subprocess" => {
            Some(("IMP-executor", format!("executor `{}` has no strata equivalent", shown(e))))
        }
        Some("") => Some(("IMP-nonrunnable", "empty `executor_id`: not a runnable tool".into())),
        Some(_) => None,
    }
}

/// Converts a HEAD `.ai/runtimes/*.yaml` daemon descriptor: always refused.
pub fn import_runtime_descriptor(source: &str, text: &str) -> FileImport {
    let out = FileImport::imported(source);
    let serves = crate::yaml::read_yaml(text)
        .ok()
        .and_then(|v| v.get("serves").and_then(scalar_text))
        .unwrap_or_else(|| "?".into());
    out.refuse(
        "IMP-runtime-descriptor",
        format!("`kind: runtime` daemon descriptor (serves: {}): strata's directive and graph runners are built in", shown(&serves)),
    )
}

fn locate_keyword(text: &str, field: &str, d: &schema::Dropped) -> (usize, usize) {
    let mut path: Vec<&str> = vec![field];
    path.extend(d.at.split('.').skip(1));
    path.push(&d.keyword);
    yaml_key_position(text, 0, &path)
}

/// `env_config` → strata's: the interpreter's RyeOS fields mapped (`binary` → `candidates`,
/// `path_candidates` → `fallback`, `search_roots` → `search_paths` under the code's
/// directory), `env` kept (HEAD `${interpreter}` → `${<var>}`).
fn convert_env_config(
    text: &str,
    ec: &Map<String, Value>,
    out: &mut FileImport,
    interp_var: &mut Option<String>,
) -> Map<String, Value> {
    let mut result = Map::new();
    if let Some(Value::Object(i)) = ec.get("interpreter") {
        let var = i.get("var").and_then(scalar_text);
        *interp_var = var.clone();
        let mut ni = Map::new();
        let mut candidates: Vec<Value> = Vec::new();
        if let Some(b) = i.get("binary").and_then(scalar_text) {
            candidates.push(Value::String(b.clone()));
            out.rewrite(format!(
                "env_config.interpreter.binary: {} → candidates",
                shown(&b)
            ));
        }
        if let Some(Value::Array(cs)) = i.get("candidates") {
            candidates.extend(cs.iter().cloned());
            let mut seen = BTreeSet::new();
            candidates.retain(|c| seen.insert(c.to_string()));
        }
        let mut search_paths: Vec<Value> = match i.get("search_paths") {
            Some(Value::Array(s)) => s.clone(),
            _ => Vec::new(),
        };
        if let Some(Value::Array(roots)) = i.get("search_roots") {
            let here =
                || yaml_key_position(text, 0, &["env_config", "interpreter", "search_roots"]);
            let subs: Vec<String> = search_paths.iter().filter_map(scalar_text).collect();
            let mut rooted = Vec::new();
            for root in roots.iter().filter_map(scalar_text) {
                let root = root.replace("{anchor_path}", "{code_dir}");
                for s in &subs {
                    rooted.push(Value::String(format!("{root}/{s}")));
                }
            }
            rooted.extend(search_paths);
            search_paths = rooted;
            out.warn_with(
                "IMP-anchor",
                "interpreter `search_roots: [{anchor_path}]` approximated: its search paths are also tried under `{code_dir}` (the code file's directory; RyeOS searched upward for marker files)",
                here,
            );
        }
        if i.get("type").and_then(Value::as_str) == Some("node_modules") {
            // RyeOS's older resolver: `node` in each search path (default
            // `node_modules/.bin`), relative to the project.
            ni.insert("type".into(), string("local_binary"));
            if search_paths.is_empty() {
                search_paths.push(string("node_modules/.bin"));
            }
            candidates.push(string("node"));
            out.rewrite("env_config.interpreter.type: node_modules → local_binary with candidates: [node] (what RyeOS searched its search_paths for)");
        }
        for (k, v) in i {
            let name = k.as_str();
            match name {
                "type" if ni.contains_key("type") => {}
                "type" | "var" | "venv" | "fallback" | "command" => {
                    ni.insert(k.clone(), v.clone());
                }
                "binary" | "candidates" | "search_paths" | "search_roots" => {}
                "path_candidates" => {
                    let list: Vec<String> = match v {
                        Value::Array(s) => s.iter().filter_map(scalar_text).collect(),
                        other => scalar_text(other).into_iter().collect(),
                    };
                    if let Some(first) = list.first() {
                        if !i.contains_key("fallback") {
                            ni.insert("fallback".into(), string(first));
                        }
                        let first = shown(first);
                        out.rewrite(format!(
                            "env_config.interpreter.path_candidates: [{first}] → fallback: {first}"
                        ));
                        if list.len() > 1 {
                            let here = || {
                                yaml_key_position(
                                    text,
                                    0,
                                    &["env_config", "interpreter", "path_candidates"],
                                )
                            };
                            out.warn_with(
                                "IMP-path_candidates",
                                format!("interpreter `path_candidates` {}: only `{first}` is kept, as the fallback", shown(&format!("{list:?}"))),
                                here,
                            );
                        }
                    }
                }
                other => {
                    let here = || yaml_key_position(text, 0, &["env_config", "interpreter", other]);
                    out.warn_with(
                        "IMP-dropped",
                        format!(
                            "interpreter field `{}` has no strata equivalent: dropped",
                            shown(other)
                        ),
                        here,
                    );
                }
            }
        }
        if !candidates.is_empty() {
            ni.insert("candidates".into(), Value::Array(candidates));
        }
        if !search_paths.is_empty() {
            ni.insert("search_paths".into(), Value::Array(search_paths));
        }
        result.insert("interpreter".into(), Value::Object(ni));
    }
    if let Some(Value::Object(env)) = ec.get("env") {
        let mut env = Value::Object(env.clone());
        if let Some(var) = interp_var.as_deref() {
            let mut hits = Vec::new();
            let pairs = interpreter_pairs(var);
            replace_in(&mut env, &pairs, &mut hits);
            for (from, to) in &pairs {
                if hits.iter().any(|h| h == from) {
                    out.rewrite(format!("{from} → {}", shown(to)));
                }
            }
        }
        result.insert("env".into(), env);
    }
    for name in ec.keys() {
        if !["interpreter", "env", "env_paths"].contains(&name.as_str()) {
            let here = || yaml_key_position(text, 0, &["env_config", name]);
            out.warn_with(
                "IMP-dropped",
                format!(
                    "`env_config.{}` has no strata equivalent: dropped",
                    shown(name)
                ),
                here,
            );
        }
    }
    result
}

/// `anchor:` → `config.env.<VAR>` prepends and `config.cwd` (approximated: the anchor is the
/// code file's directory).
fn convert_anchor(
    a: &Map<String, Value>,
    config: &mut Map<String, Value>,
    out: &mut FileImport,
    at: impl FnOnce() -> (usize, usize),
) {
    let sub = |s: &str| {
        s.replace("{anchor_path}", "{code_dir}")
            .replace("{runtime_lib}", "{runtime_dir}/lib")
    };
    let mut done = Vec::new();
    if let Some(Value::Object(paths)) = a.get("env_paths") {
        done = env_prepends(paths, config, sub);
    }
    if let Some(cwd) = a.get("cwd").and_then(scalar_text) {
        if !config.contains_key("cwd") {
            config.insert("cwd".into(), Value::String(sub(&cwd)));
            done.push("config.cwd".into());
        }
    }
    let markers = a.get("markers_any").map_or_else(|| "[]".into(), compact);
    out.warn_with(
        "IMP-anchor",
        format!(
            "anchor approximated: anchor_path = the code file's directory (RyeOS searched upward for the markers {markers}); written as {}",
            if done.is_empty() { "nothing".into() } else { done.join(", ") }
        ),
        at,
    );
}

/// `env_paths: {VAR: {prepend: [a, b]}}` → `config.env.VAR: "a:b:${VAR:-}"` (each path
/// through `sub`); the keys written.
fn env_prepends(
    paths: &Map<String, Value>,
    config: &mut Map<String, Value>,
    sub: impl Fn(&str) -> String,
) -> Vec<String> {
    let mut done = Vec::new();
    for (var, spec) in paths {
        let prepend: Vec<String> = match spec.get("prepend") {
            Some(Value::Array(s)) => s.iter().filter_map(scalar_text).map(|p| sub(&p)).collect(),
            _ => continue,
        };
        let value = format!("{}:${{{var}:-}}", prepend.join(":"));
        let env = config
            .entry("env")
            .or_insert_with(|| Value::Object(Map::new()));
        if let Value::Object(env) = env {
            env.insert(var.clone(), Value::String(value));
        }
        done.push(format!("config.env.{}", shown(var)));
    }
    done
}

/// Deep-merges `over` into `base` (maps key by key, everything else replaced).
fn merge(base: &mut Map<String, Value>, over: &Map<String, Value>) {
    for (k, v) in over {
        match (base.get_mut(k), v) {
            (Some(Value::Object(b)), Value::Object(o)) => merge(b, o),
            _ => {
                base.insert(k.clone(), v.clone());
            }
        }
    }
}

/// The config: keys renamed (`timeout_secs`), templates rewritten, `bin:` commands, the
/// `code_path`/`code_dir` keys every imported tool sets, `{system_space}` keys.
#[allow(clippy::too_many_arguments)]
fn convert_config(
    text: &str,
    source: &str,
    runtime: bool,
    doc: &Map<String, Value>,
    config: &mut Map<String, Value>,
    out: &mut FileImport,
    interp_var: Option<&str>,
    parameters: Option<&Value>,
) {
    if let Some(t) = config.swap_remove("timeout_secs") {
        if !config.contains_key("timeout") {
            config.insert("timeout".into(), t);
        }
        out.rewrite("config.timeout_secs → config.timeout");
    }
    // HEAD rye-expr roots, then Python-era runtime parameters (in this order: `{tool_path}`
    // is inside `${tool_path}`).
    let mut pairs: Vec<(&str, String)> = vec![
        ("${tool_path}", "{code_path}".into()),
        ("${tool_dir}", "{code_dir}".into()),
        ("${tool_parent}", "{code_dir}/..".into()),
        ("${params_json}", "{params_json}".into()),
        ("${project_path}", "{project_path}".into()),
        ("${runtime_dir}", "{runtime_dir}".into()),
    ];
    if let Some(var) = interp_var {
        pairs.extend(interpreter_pairs(var));
    }
    pairs.extend([
        ("{tool_path}", "{code_path}".into()),
        ("{tool_dir}", "{code_dir}".into()),
        ("{tool_parent}", "{code_dir}/..".into()),
    ]);
    let mut cfg = Value::Object(std::mem::take(config));
    let mut hits = Vec::new();
    replace_in(&mut cfg, &pairs, &mut hits);
    for (from, to) in &pairs {
        if hits.iter().any(|h| h == from) {
            out.rewrite(format!("{from} → {}", shown(to)));
        }
    }
    let Value::Object(mut cfg) = cfg else {
        return;
    };

    // `bin:` bundle binaries.
    if let Some(cmd) = cfg
        .get("command")
        .and_then(Value::as_str)
        .map(str::to_owned)
    {
        if let Some(bin) = cmd.strip_prefix("bin:") {
            let name = bin.rsplit('/').next().unwrap_or(bin).to_owned();
            let here = || yaml_key_position(text, 0, &["config", "command"]);
            out.warn_with(
                "IMP-bin",
                format!("`command: {}` is a signed RyeOS bundle binary; strata looks `{}` up on the child's PATH (install it there)", shown(&cmd), shown(&name)),
                here,
            );
            cfg.insert("command".into(), Value::String(name));
        }
    }

    // Host variables and `{system_space}` / `{user_space}`.
    let declared: BTreeSet<String> = match doc.get("env_config") {
        Some(Value::Object(ec)) => {
            let mut names: BTreeSet<String> = match ec.get("env") {
                Some(Value::Object(env)) => env.keys().cloned().collect(),
                _ => BTreeSet::new(),
            };
            names.extend(interp_var.map(str::to_owned));
            names
        }
        _ => BTreeSet::new(),
    };
    for var in host_vars(&Value::Object(cfg.clone())) {
        if !declared.contains(&var) {
            let here = || crate::util::find(text, &format!("${{{var}}}"));
            out.warn_with(
                "IMP-host-var",
                format!("`${{{}}}` was set by the RyeOS host; strata reads it from the environment (set it, or `strata check` warns R002)", shown(&var)),
                here,
            );
        }
    }
    for (space, var) in [
        ("system_space", "RYEOS_SYSTEM_SPACE"),
        ("user_space", "RYEOS_USER_SPACE"),
    ] {
        let needle = format!("{{{space}}}");
        if mentions(&Value::Object(cfg.clone()), &needle) {
            let here = || crate::util::find(text, &needle);
            cfg.insert(space.into(), Value::String(format!("${{{var}}}")));
            out.warn_with(
                "IMP-space",
                format!("`{needle}` has no strata equivalent (no RyeOS spaces): it now reads the config key `{space}: \"${{{var}}}\"`; set {var}"),
                here,
            );
        }
    }

    // A parameter named like a reserved config key that `{name}` reads.
    if let Some(props) = parameters
        .and_then(|p| p.get("properties"))
        .and_then(Value::as_object)
    {
        if let Some(Value::Array(args)) = cfg.get("args") {
            for name in RESERVED {
                let needle = format!("{{{name}}}");
                if props.contains_key(name) && args.iter().any(|a| mentions(a, &needle)) {
                    let value = cfg.get(name).and_then(scalar_text).unwrap_or_default();
                    let here = || crate::util::find(text, &format!("\"{needle}\""));
                    out.warn_with(
                        "IMP-param-shadow",
                        format!("`{needle}` in config.args resolves to the config key `{name}` ('{}'), never to the caller's `{name}` (RyeOS behaved the same)", shown(&value)),
                        here,
                    );
                }
            }
        }
    }

    // `{code_path}` / `{code_dir}`: a runtime defaults them to its tool's file; a tool sets
    // them to its file under `.ai/` when its chain may read them.
    let refers = mentions(&Value::Object(cfg.clone()), "{code_");
    let on_runtime = doc
        .get("executor_id")
        .and_then(Value::as_str)
        .is_some_and(|e| !is_primitive(e));
    if runtime {
        if refers {
            cfg.insert("code_path".into(), string("{tool_path}"));
            cfg.insert("code_dir".into(), string("{tool_dir}"));
        }
    } else if refers || on_runtime {
        let file = tools_rel(source);
        cfg.insert(
            "code_path".into(),
            Value::String(format!("{{project_path}}/.ai/tools/{file}")),
        );
        let dir = parent(&file);
        cfg.insert(
            "code_dir".into(),
            Value::String(if dir.is_empty() {
                "{project_path}/.ai/tools".into()
            } else {
                format!("{{project_path}}/.ai/tools/{dir}")
            }),
        );
    }
    *config = cfg;
}

/// The interpreter's references, both forms (HEAD `${interpreter}`, the intermediate
/// era's `{interpreter}`; in this order, the second being inside the first), to the
/// variable strata sets.
fn interpreter_pairs(var: &str) -> [(&'static str, String); 2] {
    [
        ("${interpreter}", format!("${{{var}}}")),
        ("{interpreter}", format!("${{{var}}}")),
    ]
}

/// strata's runtime parameters (docs/tools.md "Runtime parameters").
const RUNTIME_PARAMS: [&str; 6] = [
    "tool_path",
    "tool_dir",
    "tool_parent",
    "project_path",
    "runtime_dir",
    "params_json",
];

/// The `{name}` references of a config (outside `{literal: …}`) that name no runtime
/// parameter, config key or declared parameter: keys RyeOS's executor computed for a runtime
/// (`{server_config_path}`), which strata expects from the caller's `config`.
fn caller_keys(config: &Map<String, Value>, parameters: Option<&Value>) -> Vec<String> {
    let props = parameters
        .and_then(|p| p.get("properties"))
        .and_then(Value::as_object);
    let known = |name: &str| {
        RUNTIME_PARAMS.contains(&name)
            || config.contains_key(name)
            || props.is_some_and(|p| p.contains_key(name))
    };
    let mut found = Vec::new();
    let mut strings = Vec::new();
    config
        .values()
        .for_each(|v| collect_templates(v, &mut strings));
    for s in strings {
        let bytes = s.as_bytes();
        for (at, _) in s.match_indices('{') {
            if at > 0 && matches!(bytes[at - 1], b'$' | b'{') {
                continue;
            }
            let rest = &s[at + 1..];
            let n = rest
                .bytes()
                .take_while(|b| b.is_ascii_alphanumeric() || *b == b'_')
                .count();
            let name = &rest[..n];
            if n > 0
                && rest[n..].starts_with('}')
                && !known(name)
                && !found.iter().any(|f| f == name)
            {
                found.push(name.to_owned());
            }
        }
    }
    found
}

/// The strings of a config that templates are read in (not `{literal: …}`).
fn collect_templates<'a>(v: &'a Value, out: &mut Vec<&'a str>) {
    match v {
        Value::String(s) => out.push(s),
        Value::Array(items) => items.iter().for_each(|i| collect_templates(i, out)),
        Value::Object(m) if m.len() == 1 && m.contains_key("literal") => {}
        Value::Object(m) => m.values().for_each(|i| collect_templates(i, out)),
        _ => {}
    }
}

/// A RyeOS file's path under `.ai/tools/` (its source without that prefix).
pub(crate) fn tools_rel(source: &str) -> String {
    match source.find(".ai/tools/") {
        Some(at) => source[at + ".ai/tools/".len()..].to_owned(),
        None => source.to_owned(),
    }
}

/// Every `${RYE…}` variable (set by the RyeOS host) named in a value, once each, in the
/// order first named.
fn host_vars(v: &Value) -> Vec<String> {
    let mut found = Vec::new();
    collect_host_vars(v, &mut found);
    let mut seen = BTreeSet::new();
    found.retain(|name| seen.insert(name.clone()));
    found
}

fn collect_host_vars(v: &Value, found: &mut Vec<String>) {
    match v {
        Value::String(s) => {
            let mut rest = s.as_str();
            while let Some(at) = rest.find("${RYE") {
                let tail = &rest[at + 2..];
                let end = tail
                    .find(|c: char| !(c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_'))
                    .unwrap_or(tail.len());
                found.push(tail[..end].to_owned());
                rest = &tail[end..];
            }
        }
        Value::Array(items) => items.iter().for_each(|i| collect_host_vars(i, found)),
        Value::Object(m) => m.iter().for_each(|(_, i)| collect_host_vars(i, found)),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn catalog(ids: &[&str]) -> Catalog {
        Catalog {
            tools: ids.iter().map(|s| s.to_string()).collect(),
            ..Catalog::default()
        }
    }

    fn written(imp: &FileImport) -> Value {
        crate::yaml::read_yaml(&imp.written[0].contents).unwrap()
    }

    #[test]
    fn a_head_tool_becomes_a_subprocess_tool() {
        let text = "version: \"1.0.0\"\nexecutor_id: \"@subprocess\"\nname: \"x\"\nrequired_caps: [a]\nconfig:\n  command: \"bin:ryeos-core-tools\"\n  args: [\"${tool_dir}\"]\n  input_data: \"${params_json}\"\n  timeout_secs: 20\n";
        let imp = import_tool(
            ".ai/tools/c/x.yaml",
            "c/x",
            text,
            &catalog(&[]),
            &ToolContext::default(),
        );
        assert_eq!(imp.outcome, crate::Outcome::Imported);
        assert_eq!(imp.written[0].path, "tools/c/x.yaml");
        assert_eq!(
            written(&imp),
            crate::yaml::read_yaml(
                "version: '1.0.0'\nexecutor: runtimes/subprocess\nparameters: {type: object, additionalProperties: true}\nconfig:\n  command: ryeos-core-tools\n  args: ['{code_dir}']\n  input_data: '{params_json}'\n  timeout: 20\n  code_path: '{project_path}/.ai/tools/c/x.yaml'\n  code_dir: '{project_path}/.ai/tools/c'\n"
            )
            .unwrap()
        );
        let codes: Vec<&str> = imp.warnings.iter().map(|w| w.code.as_str()).collect();
        assert_eq!(codes, ["IMP-permissions", "IMP-bin"]);
        assert_eq!((imp.warnings[1].line, imp.warnings[1].column), (6, 3));
    }

    #[test]
    fn refusals_name_their_reason() {
        let ctx = ToolContext::default();
        let refused = |text: &str, id: &str| {
            let imp = import_tool(".ai/tools/x.yaml", id, text, &catalog(&[]), &ctx);
            imp.reason.map(|r| r.code)
        };
        assert_eq!(
            refused("tool_type: primitive\nexecutor_id: null\n", "p").as_deref(),
            Some("IMP-primitive")
        );
        assert_eq!(
            refused("tool_type: http\nexecutor_id: null\n", "h").as_deref(),
            Some("IMP-http")
        );
        assert_eq!(
            refused("tool_type: extractor\nexecutor_id: null\n", "e").as_deref(),
            Some("IMP-nonrunnable")
        );
        assert_eq!(
            refused(
                "executor_id: null\nterminal_executor: {kind: subprocess}\n",
                "t"
            )
            .as_deref(),
            Some("IMP-terminal")
        );
        assert_eq!(
            refused("executor_id: \"@method_dispatch\"\n", "m").as_deref(),
            Some("IMP-executor")
        );
        assert_eq!(
            refused(
                "tool_type: runtime\nexecutor_id: rye/core/primitives/execute\n",
                "rye/core/runtimes/state-graph/runtime"
            )
            .as_deref(),
            Some("IMP-graph-runtime")
        );
        assert_eq!(refused("[1, 2]\n", "l").as_deref(), Some("IMP-yaml"));
        assert_eq!(
            refused(
                "executor_id: \"@subprocess\"\nconfig: {command: echo}\n",
                "ok"
            ),
            None
        );
    }

    // What serde_yaml read and strata's reader refuses is refused with the reader's reason.
    #[test]
    fn files_the_reader_refuses_are_refused_with_its_reason() {
        let reason = |text: &str| {
            import_tool(
                ".ai/tools/x.yaml",
                "x",
                text,
                &catalog(&[]),
                &ToolContext::default(),
            )
            .reason
            .expect("refused")
        };
        assert_eq!(
            reason("executor_id: \"@subprocess\"\nconfig: {command: echo}\nconfig: {}\n"),
            crate::Refusal {
                code: "IMP-yaml".into(),
                message: "the file cannot be read: duplicate key `config` at line 3 column 1 (each key may appear once in a map)".into(),
            }
        );
        assert_eq!(
            reason("executor_id: \"@subprocess\"\nconfig: !env {command: echo}\n").message,
            "the file cannot be read: YAML syntax error: unsupported tag `!env` at line 2 column 14"
        );
    }

    // Keys that serde_yaml read as numbers or booleans are text, written as they were.
    #[test]
    fn keys_are_written_as_the_text_they_were() {
        let text = "executor_id: \"@subprocess\"\nconfig:\n  command: echo\n  1: one\n  true: two\n  <<: three\n";
        let imp = import_tool(
            ".ai/tools/k.yaml",
            "k",
            text,
            &catalog(&[]),
            &ToolContext::default(),
        );
        assert_eq!(
            imp.written[0].contents,
            "# Imported from RyeOS `.ai/tools/k.yaml` by `strata import ryeos` (see IMPORT-REPORT.md).\n\
             executor: runtimes/subprocess\nparameters:\n  type: object\n  additionalProperties: true\n\
             config:\n  command: echo\n  '1': one\n  'true': two\n  '<<': three\n"
        );
    }

    #[test]
    fn a_runtime_defaults_the_code_keys_to_its_own_file() {
        let text = "tool_type: runtime\nexecutor_id: rye/core/primitives/execute\nconfig:\n  command: x\n  args: [\"{tool_path}\", \"{tool_parent}\"]\n";
        let imp = import_tool(
            ".ai/tools/rye/core/runtimes/r.yaml",
            "rye/core/runtimes/r",
            text,
            &catalog(&[]),
            &ToolContext::default(),
        );
        let cfg = written(&imp)["config"].clone();
        assert_eq!(
            cfg["args"],
            crate::yaml::read_yaml("['{code_path}', '{code_dir}/..']").unwrap()
        );
        assert_eq!(cfg["code_path"], Value::String("{tool_path}".into()));
        assert_eq!(cfg["code_dir"], Value::String("{tool_dir}".into()));
    }

    #[test]
    fn runtime_descriptors_are_refused() {
        let imp =
            import_runtime_descriptor(".ai/runtimes/x.yaml", "kind: runtime\nserves: knowledge\n");
        assert_eq!(
            imp.reason.unwrap().message,
            "`kind: runtime` daemon descriptor (serves: knowledge): strata's directive and graph runners are built in"
        );
    }
}
