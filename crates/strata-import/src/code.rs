//! RyeOS code tools (`.py` / `.ts` / `.js` files with a module-level `__executor_id__`) →
//! a strata wrapper `tools/<id>.yaml` on the imported runtime, the code staying under `.ai/`
//! (MAPPING.md §5). The code is read, never run: metadata and `CONFIG_SCHEMA` are taken only
//! when they are literals.

use serde_json::{Map, Value};
use strata_core::shown;

use crate::header::{tool_header, Header};
use crate::model::{Catalog, FileImport};
use crate::position::position;
use crate::pylit::{assignment, literal_at, literal_at_partly, python_layout, Lang};
use crate::schema;
use crate::tool::{is_primitive, tools_rel};
use crate::util::{parent, yaml_file};

/// Module-level names RyeOS read that strata has no use for (`IMP-exec-misc`).
const MISC: [&str; 6] = [
    "__execution__",
    "__allowed_threads__",
    "__allowed_targets__",
    "__native_async__",
    "__native_resume__",
    "__execution_owner__",
];

/// The language of a code file, by extension; `None` for other files.
pub(crate) fn lang_of(path: &str) -> Option<Lang> {
    let ext = path.rsplit('.').next().unwrap_or("");
    match ext {
        "py" => Some(Lang::Python),
        "ts" | "js" | "mjs" | "cjs" | "mts" | "cts" => Some(Lang::Script),
        _ => None,
    }
}

/// The executor a code file names, when it is a RyeOS code tool: a Rust-era `# ryeos-tool:`
/// header's `executor_id` (its `tool:` prefix removed; empty when the header names none), or
/// a literal module-level `__executor_id__` (empty when it is not a literal).
pub fn executor_of(path: &str, text: &str) -> Option<String> {
    let lang = lang_of(path)?;
    if lang == Lang::Python {
        if let Some(h) = tool_header(text) {
            return Some(h.executor().unwrap_or_default());
        }
    }
    let at = assignment(text, "__executor_id__", lang)?;
    match literal_at(text, at, lang) {
        Ok(Value::String(s)) => Some(s),
        _ => Some(String::new()),
    }
}

/// Whether a code tool is of the Rust era: a `# ryeos-tool:` header, or an executor named
/// with its kind prefix (`tool:…`).
pub(crate) fn is_rust_era(path: &str, text: &str) -> bool {
    let header = lang_of(path) == Some(Lang::Python) && tool_header(text).is_some();
    header
        || lang_of(path).is_some_and(|lang| {
            assignment(text, "__executor_id__", lang).is_some_and(|at| {
                matches!(literal_at(text, at, lang), Ok(Value::String(s)) if s.starts_with("tool:"))
            })
        })
}

/// Converts one RyeOS code tool: `source` is its path from the RyeOS root
/// (`.ai/tools/rye/bash/bash.py`), `id` its path under `.ai/tools/` without extension.
pub fn import_code(source: &str, id: &str, text: &str, catalog: &Catalog) -> FileImport {
    let mut out = FileImport::imported(source);
    let Some(lang) = lang_of(source) else {
        return out.refuse("IMP-code-executor", "not a Python or TypeScript file");
    };
    if lang == Lang::Python {
        if let Err((line, msg)) = python_layout(text) {
            return out.refuse(
                "IMP-code-syntax",
                format!(
                    "the file does not parse ({msg}, line {line}): RyeOS could not load it either"
                ),
            );
        }
    }
    let read = |name: &str| -> Option<(Result<Value, String>, (usize, usize))> {
        let at = assignment(text, name, lang)?;
        let line_start = text[..at].rfind('\n').map_or(0, |p| p + 1);
        Some((literal_at(text, at, lang), position(text, line_start)))
    };
    let header = (lang == Lang::Python).then(|| tool_header(text)).flatten();
    let mut tool = Map::new();
    let executor = match &header {
        Some(h) => match header_metadata(h, &mut tool, &mut out, id) {
            Ok(e) => e,
            Err((code, why)) => return out.refuse(code, why),
        },
        None => match read("__executor_id__") {
            // The Rust era's dunder parser (`.js`, `.ts`) reads the kind prefix too.
            Some((Ok(Value::String(s)), _)) => match s.strip_prefix("tool:") {
                Some(bare) => bare.to_owned(),
                None => s,
            },
            _ => {
                return out.refuse(
                    "IMP-code-executor",
                    "`__executor_id__` is not a literal string: the runtime cannot be known without running the code",
                )
            }
        },
    };
    let named = if header.is_some() {
        format!(
            "`executor_id: \"{}\"` of the `# ryeos-tool:` header",
            shown(&executor)
        )
    } else {
        format!("`__executor_id__ = \"{}\"`", shown(&executor))
    };
    if is_primitive(&executor) || executor.starts_with('@') {
        return out.refuse(
            "IMP-code-executor",
            format!("{named} names a RyeOS primitive, which runs a `config.command` a code file does not have (RyeOS runs code files through a runtime): nothing can run this file"),
        );
    }
    if !executor.contains('/') || !catalog.has_tool(&executor) {
        return out.refuse(
            "IMP-code-executor",
            format!("{named} names no runtime in any space (broken in RyeOS too): nothing can run this file"),
        );
    }
    if header.is_none() {
        python_era_metadata(&read, &mut tool, &mut out, id);
    }
    tool.insert("executor".into(), Value::String(executor.clone()));
    if header.is_some() {
        out.rewrite(format!(
            "# ryeos-tool: executor_id → executor: {}",
            shown(&executor)
        ));
    } else {
        out.rewrite(format!("__executor_id__ → executor: {}", shown(&executor)));
    }

    let config_schema = assignment(text, "CONFIG_SCHEMA", lang).map(|at| {
        let line_start = text[..at].rfind('\n').map_or(0, |p| p + 1);
        let read = literal_at_partly(text, at, lang).and_then(|(v, computed)| {
            match computed.iter().find(|(path, _)| !in_a_property(path)) {
                Some((_, why)) => Err(why.clone()),
                None => Ok((v, computed)),
            }
        });
        (read, position(text, line_start))
    });
    let parameters = match (tool.remove("parameters"), config_schema) {
        (Some(from_header), _) => from_header,
        (None, None) if header.is_some() => {
            out.rewrite("no config_schema → parameters: {type: object, additionalProperties: true} (RyeOS validated nothing)");
            schema::permissive()
        }
        (None, None) => {
            out.rewrite("no CONFIG_SCHEMA → parameters: {type: object, additionalProperties: true} (RyeOS validated nothing)");
            schema::permissive()
        }
        (None, Some((Err(why), (line, col)))) => {
            out.warn(
                "IMP-code-schema",
                format!("`CONFIG_SCHEMA` is computed by code ({why}); the importer never runs user code, so the parameters are permissive (`type: object, additionalProperties: true`)"),
                line,
                col,
            );
            schema::permissive()
        }
        (None, Some((Ok((json, computed)), (line, col)))) => {
            out.rewrite("CONFIG_SCHEMA → parameters");
            for (path, why) in &computed {
                out.warn(
                    "IMP-code-schema",
                    format!("`CONFIG_SCHEMA` `{}` is computed by code ({why}): left out, so parameter `{}` is checked by the rest of its schema only (the rest of the schema is kept)", shown(&path.join(".")), shown(&path[1])),
                    line,
                    col,
                );
            }
            parameters_of(&json, &mut out, (line, col))
        }
    };
    tool.insert("parameters".into(), parameters);

    if let Some((_, (line, col))) = read("CONFIG_RESOLVE") {
        out.warn(
            "IMP-config_resolve",
            "`CONFIG_RESOLVE`: `execution/execution.yaml` overrides are not merged by strata (dropped)",
            line,
            col,
        );
    }
    for name in MISC {
        if let Some((_, (line, col))) = read(name) {
            out.warn(
                "IMP-exec-misc",
                format!("`{name}` dropped: strata has no equivalent (it runs each tool as one subprocess)"),
                line,
                col,
            );
        }
    }

    let rel = tools_rel(source);
    let dir = parent(&rel);
    let mut config = Map::new();
    config.insert(
        "code_path".into(),
        Value::String(format!("{{project_path}}/.ai/tools/{rel}")),
    );
    config.insert(
        "code_dir".into(),
        Value::String(if dir.is_empty() {
            "{project_path}/.ai/tools".into()
        } else {
            format!("{{project_path}}/.ai/tools/{dir}")
        }),
    );
    tool.insert("config".into(), Value::Object(config));
    out.rewrite(format!(
        "code stays at .ai/tools/{rel}; the wrapper sets code_path and code_dir"
    ));
    out.write(
        format!("tools/{id}.yaml"),
        yaml_file(source, &Value::Object(tool)),
    );
    out
}

/// Whether a computed entry of a schema lies inside one parameter's schema
/// (`properties.<name>.…`), so that leaving it out loosens that parameter only.
fn in_a_property(path: &[String]) -> bool {
    path.len() >= 3 && path[0] == "properties"
}

/// A literal schema as strata's parameters, keywords outside strata's subset dropped with a
/// warning at `at`.
fn parameters_of(json: &Value, out: &mut FileImport, at: (usize, usize)) -> Value {
    let c = schema::convert(json);
    if c.dollar_schema {
        out.rewrite("$schema dropped from the parameters");
    }
    for d in &c.dropped {
        out.warn(
            "IMP-schema-keyword",
            format!(
                "schema keyword `{}` at {} dropped: strata's parameters have no such keyword, the constraint is lost",
                shown(&d.keyword),
                shown(&d.at)
            ),
            at.0,
            at.1,
        );
    }
    c.schema
}

/// A Python-era code tool's metadata (`__tool_description__`, `__version__`; `__tool_type__`
/// and `__category__` dropped), read by `read`.
fn python_era_metadata(
    read: &impl Fn(&str) -> Option<(Result<Value, String>, (usize, usize))>,
    tool: &mut Map<String, Value>,
    out: &mut FileImport,
    id: &str,
) {
    for (name, key) in [
        ("__tool_description__", "description"),
        ("__version__", "version"),
    ] {
        if let Some((Ok(v), _)) = read(name) {
            if let Some(s) = scalar(&v) {
                tool.insert(key.into(), Value::String(s));
                out.rewrite(format!("{name} → {key}"));
            }
        }
    }
    for dropped in ["__tool_type__", "__category__"] {
        if read(dropped).is_some() {
            out.rewrite(format!("{dropped} dropped (the id is the path `{id}`)"));
        }
    }
}

/// A Rust-era `# ryeos-tool:` header's metadata into `tool` (`version`, `description`,
/// `required_secrets` → `secrets`, `config_schema` → `parameters`; the rest dropped, with a
/// warning where it meant something): its executor, or the refusal when it has none.
fn header_metadata(
    h: &Header,
    tool: &mut Map<String, Value>,
    out: &mut FileImport,
    id: &str,
) -> Result<String, (&'static str, String)> {
    let fields = h.fields.as_ref().map_err(|why| {
        (
            "IMP-code-header",
            format!(
                "the `# ryeos-tool:` header (line {}) cannot be read: {why}",
                h.line
            ),
        )
    })?;
    let Some(executor) = h.executor() else {
        return Err((
            "IMP-code-executor",
            format!("the `# ryeos-tool:` header (line {}) names no `executor_id` (RyeOS requires one): nothing can run this file", h.line),
        ));
    };
    let at = (h.line, 1);
    for (k, v) in fields {
        match k.as_str() {
            "version" | "description" => {
                if let Some(s) = scalar(v) {
                    tool.insert(k.clone(), Value::String(s));
                }
            }
            "executor_id" => {}
            "category" | "tool_type" | "name" => out.rewrite(format!(
                "# ryeos-tool: {k} dropped (the id is the path `{id}`)"
            )),
            "config_schema" | "input_schema" | "parameters" if !tool.contains_key("parameters") => {
                out.rewrite(format!("# ryeos-tool: {k} → parameters"));
                let p = parameters_of(v, out, at);
                tool.insert("parameters".into(), p);
            }
            "required_secrets" => {
                tool.insert("secrets".into(), v.clone());
                out.rewrite("# ryeos-tool: required_secrets → secrets");
            }
            "required_caps" | "requires" | "permissions" => out.warn(
                "IMP-permissions",
                format!("`{k}` dropped: strata enforces no capabilities"),
                at.0,
                at.1,
            ),
            other => out.warn(
                "IMP-dropped",
                format!(
                    "`{}` of the `# ryeos-tool:` header has no strata equivalent: dropped",
                    shown(other)
                ),
                at.0,
                at.1,
            ),
        }
    }
    Ok(executor)
}

/// A literal scalar as text (`"1.0.0"`, `2` → "2").
fn scalar(v: &Value) -> Option<String> {
    match v {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn catalog() -> Catalog {
        Catalog {
            tools: ["rye/core/runtimes/python/function".to_owned()].into(),
            ..Catalog::default()
        }
    }

    #[test]
    fn a_python_code_tool_gets_a_wrapper() {
        let text = "# rye:signed:x\n__version__ = \"1.2\"\n__executor_id__ = \"rye/core/runtimes/python/function\"\n__tool_description__ = (\n    \"a \"\n    \"b\"\n)\nCONFIG_SCHEMA = {\"type\": \"object\", \"properties\": {\"p\": {\"type\": \"string\", \"format\": \"uri\"}}}\n";
        let imp = import_code(".ai/tools/a/b.py", "a/b", text, &catalog());
        assert_eq!(imp.outcome, crate::Outcome::Imported);
        let v = crate::yaml::read_yaml(&imp.written[0].contents).unwrap();
        assert_eq!(
            v,
            crate::yaml::read_yaml(
                "description: a b\nversion: '1.2'\nexecutor: rye/core/runtimes/python/function\nparameters: {type: object, properties: {p: {type: string}}}\nconfig: {code_path: '{project_path}/.ai/tools/a/b.py', code_dir: '{project_path}/.ai/tools/a'}\n"
            )
            .unwrap()
        );
        assert_eq!(imp.warnings.len(), 1);
        assert_eq!(imp.warnings[0].code, "IMP-schema-keyword");
        assert_eq!((imp.warnings[0].line, imp.warnings[0].column), (8, 1));
    }

    #[test]
    fn executors_and_syntax_are_checked() {
        let bad = import_code(
            ".ai/tools/s.py",
            "s",
            "__executor_id__ = \"python\"\n",
            &catalog(),
        );
        assert_eq!(bad.reason.unwrap().code, "IMP-code-executor");
        let broken = import_code(
            ".ai/tools/s.py",
            "s",
            "__executor_id__ = \"rye/core/runtimes/python/function\"\ndef f():\n    x = 1\n        y = 2\n",
            &catalog(),
        );
        assert_eq!(
            broken.reason.unwrap().message,
            "the file does not parse (unexpected indent, line 4): RyeOS could not load it either"
        );
        assert_eq!(
            executor_of("x.ts", "export const __executor_id__ = \"a/b\";\n").as_deref(),
            Some("a/b")
        );
        assert_eq!(executor_of("x.py", "import os\n"), None);
        assert_eq!(executor_of("x.md", "__executor_id__ = \"a\"\n"), None);
    }
}
