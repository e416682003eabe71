//! Hooks (MAPPING §4): RyeOS's `.ai/config/agent/hook_conditions.yaml` (the lists
//! `builtin_hooks`, `infra_hooks`, `context_hooks`) becomes one list in `hooks/ryeos.yaml`
//! of the hooks strata can fire; every hook that cannot be is named in a warning, and the
//! file is refused (`IMP-H-none`) when none can.

use serde_json::{Map, Value};
use strata_core::shown;

use crate::model::{Catalog, FileImport};
use crate::position::yaml_key_position;
use crate::util::{string, text_of};

/// RyeOS thread events with a strata directive event.
const EVENTS: [(&str, &str); 5] = [
    ("thread_started", "directive_started"),
    ("after_step", "after_action"),
    ("after_complete", "directive_completed"),
    ("limit", "limit_reached"),
    ("error", "action_failed"),
];

/// The hook lists of the file.
const LISTS: [&str; 3] = ["builtin_hooks", "infra_hooks", "context_hooks"];

/// Keys of the file that describe it and are dropped without loss.
const FILE_KEYS: [&str; 7] = [
    "category",
    "tool_type",
    "version",
    "description",
    "schema_version",
    "action_primaries",
    "action_item_types",
];

/// RyeOS limit codes with a strata `limit_code`.
const LIMIT_CODES: [(&str, &str); 2] = [
    ("turns_exceeded", "turns"),
    ("duration_seconds_exceeded", "timeout"),
];

/// The names each strata event's context has (docs/directives.md "Events and their context").
fn context_names(event: &str) -> Vec<&'static str> {
    strata_app::DirectiveEvent::from_name(event).map_or_else(
        || strata_app::DIRECTIVE_CONTEXT.to_vec(),
        |e| e.context_names(),
    )
}

/// Converts the RyeOS hook file `text` (at `source`).
pub fn import_hooks(source: &str, text: &str, catalog: &Catalog) -> FileImport {
    let mut out = FileImport::imported(source);
    let value = match crate::yaml::read_yaml(text) {
        Ok(v) => v,
        Err(why) => {
            return out.refuse("IMP-H-yaml", format!("the hook file cannot be read: {why}"))
        }
    };
    let Value::Object(map) = value else {
        return out.refuse("IMP-H-yaml", "the hook file is not a YAML map");
    };
    let mut kept: Vec<(Map<String, Value>, Option<String>)> = Vec::new();
    let mut seen = 0usize;
    for (key, v) in &map {
        let key = key.as_str();
        if FILE_KEYS.contains(&key) {
            continue;
        }
        if !LISTS.contains(&key) {
            let here = || yaml_key_position(text, 0, &[key]);
            out.warn_with(
                "IMP-H-key",
                format!(
                    "`{}` of the hook file has no strata equivalent: dropped",
                    shown(key)
                ),
                here,
            );
            continue;
        }
        let Value::Array(list) = v else {
            let here = || yaml_key_position(text, 0, &[key]);
            out.warn_with(
                "IMP-H-key",
                format!("`{}` is not a list: dropped", shown(key)),
                here,
            );
            continue;
        };
        for (index, hook) in list.iter().enumerate() {
            seen += 1;
            let at = || hook_position(text, key, index);
            if let Some(h) = convert(&mut out, hook, at, catalog) {
                kept.push(h);
            }
        }
    }
    if kept.is_empty() {
        let message = if seen == 0 {
            "the file holds no hook".to_owned()
        } else {
            format!("no hook of this file can be imported ({seen} hooks; the warnings say why each is skipped)")
        };
        return out.refuse("IMP-H-none", message);
    }
    out.rewrite(format!(
        "{} hook list(s) → one list in hooks/ryeos.yaml; file keys (category, tool_type, schema_version, action_primaries, action_item_types) dropped",
        LISTS.iter().filter(|l| map.contains_key(**l)).count()
    ));
    let mut file = format!(
        "# Imported from RyeOS `{source}` by `strata import ryeos` (see IMPORT-REPORT.md).\n"
    );
    for (hook, description) in kept {
        if let Some(d) = description {
            for line in d.lines() {
                file.push_str(&format!("# {line}\n"));
            }
        }
        file.push_str(&strata_doc::to_yaml(&Value::Array(vec![Value::Object(
            hook,
        )])));
    }
    out.write("hooks/ryeos.yaml", file);
    out
}

/// The position of hook `index` of list `list`: its first key.
fn hook_position(text: &str, list: &str, index: usize) -> (usize, usize) {
    let (line, _) = yaml_key_position(text, 0, &[list]);
    if line == 0 {
        return (0, 0);
    }
    let mut count = 0usize;
    let mut indent: Option<usize> = None;
    for (i, l) in text.lines().enumerate().skip(line) {
        let stripped = l.trim_start();
        if stripped.is_empty() || stripped.starts_with('#') {
            continue;
        }
        let ind = l.len() - stripped.len();
        if ind == 0 && !stripped.starts_with('-') {
            break;
        }
        if stripped.starts_with("- ") || stripped == "-" {
            let first = *indent.get_or_insert(ind);
            if ind == first {
                if count == index {
                    return (i + 1, ind + 3);
                }
                count += 1;
            }
        }
    }
    (line, 1)
}

/// One hook, or `None` (with its warnings) when strata cannot fire it.
fn convert(
    out: &mut FileImport,
    hook: &Value,
    here: impl Fn() -> (usize, usize) + Copy,
    catalog: &Catalog,
) -> Option<(Map<String, Value>, Option<String>)> {
    let Value::Object(h) = hook else {
        out.warn_with("IMP-H-skip", "a hook entry is not a map: skipped", here);
        return None;
    };
    let id = h.get("id").map(text_of).unwrap_or_default();
    let event = h.get("event").map(text_of).unwrap_or_default();
    // How messages name the hook and its event.
    let (named, event_named) = (shown(&id), shown(&event));
    let mut reasons: Vec<(&'static str, String)> = Vec::new();
    let strata_event = EVENTS.iter().find(|(r, _)| *r == event).map(|(_, s)| *s);
    if strata_event.is_none() {
        reasons.push((
            "IMP-H-skip",
            format!("hook `{named}` skipped: event `{event_named}` has no strata equivalent"),
        ));
    }
    let action = match h.get("action") {
        Some(Value::Object(a)) => a.clone(),
        _ => Map::new(),
    };
    let primary = action.get("primary").map(text_of).unwrap_or_default();
    let item_type = action.get("item_type").map(text_of).unwrap_or_default();
    let item_id = action.get("item_id").map(text_of).unwrap_or_default();
    let (item_type, item_id) = match (item_type.as_str(), item_id.split_once(':')) {
        ("", Some((t, rest))) => (t.to_owned(), rest.to_owned()),
        ("", None) => ("tool".to_owned(), item_id),
        _ => (item_type, item_id),
    };
    if !primary.is_empty() && primary != "execute" {
        reasons.push((
            "IMP-H-skip",
            format!(
                "hook `{named}` skipped: its action is `{}`, strata hooks only run tools",
                shown(&primary)
            ),
        ));
    } else if item_type != "tool" {
        reasons.push((
            "IMP-H-skip",
            format!(
                "hook `{named}` skipped: its action runs a {} (`{}`), strata hooks only run tools",
                shown(&item_type),
                shown(&item_id)
            ),
        ));
    } else if item_id.starts_with("rye/agent/threads/internal/") {
        reasons.push((
            "IMP-H-skip",
            format!("hook `{named}` skipped: its action `{}` acts on RyeOS thread state; a strata hook's result cannot steer the directive (its failure is only reported)", shown(&item_id)),
        ));
    } else if item_id.is_empty() {
        reasons.push((
            "IMP-H-skip",
            format!("hook `{named}` skipped: its action names no tool"),
        ));
    } else if !catalog.has_tool(&item_id) {
        reasons.push((
            "IMP-H-skip",
            format!(
                "hook `{named}` skipped: its tool `{}` is in no space of the imported project",
                shown(&item_id)
            ),
        ));
    }
    // The condition.
    let mut condition = h.get("condition").cloned();
    let mut notes: Vec<(&'static str, String)> = Vec::new();
    if let Some(cond) = &mut condition {
        condition_problems(&named, cond, &mut reasons, &mut notes);
    }
    // The params: names the strata event's context lacks are dropped.
    let mut params = match action.get("params") {
        Some(Value::Object(p)) => p.clone(),
        _ => Map::new(),
    };
    let names = context_names(strata_event.unwrap_or("directive_started"));
    let mut dropped = Vec::new();
    let keys: Vec<String> = params.keys().cloned().collect();
    for key in keys {
        let v = params.get(&key).cloned().unwrap_or(Value::Null);
        let missing = roots(&v)
            .into_iter()
            .filter(|r| !names.contains(&r.as_str()))
            .collect::<Vec<_>>();
        if !missing.is_empty() {
            params.shift_remove(&key);
            dropped.push(format!(
                "`{}` (reads {})",
                shown(&key),
                missing
                    .iter()
                    .map(|m| format!("`{}`", shown(m)))
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
        }
    }
    if !reasons.is_empty() {
        for (code, message) in reasons {
            out.warn_with(code, message, here);
        }
        return None;
    }
    for (code, message) in notes {
        out.warn_with(code, message, here);
    }
    let strata_event = strata_event.unwrap_or_default();
    if !dropped.is_empty() {
        out.warn_with(
            "IMP-H-param",
            format!(
                "hook `{named}`: params {} dropped: `{strata_event}` has no such names",
                dropped.join(", ")
            ),
            here,
        );
    }
    out.warn_with(
        "IMP-H-event",
        format!("hook `{named}`: RyeOS event `{event_named}` → `{strata_event}`: it fires on directive actions, not LLM thread turns"),
        here,
    );
    if let Some(layer) = h.get("layer") {
        out.warn_with(
            "IMP-H-layer",
            format!("hook `{named}`: `layer: {}` dropped: strata fires a directive's hooks first, then the project's by file name, in declaration order", shown(&text_of(layer))),
            here,
        );
    }
    for key in h.keys() {
        if !matches!(
            key.as_str(),
            "id" | "event" | "layer" | "condition" | "action" | "description"
        ) {
            out.warn_with(
                "IMP-H-key",
                format!(
                    "hook `{named}`: `{}` has no strata equivalent: dropped",
                    shown(key)
                ),
                here,
            );
        }
    }
    let mut outh = Map::new();
    outh.insert("id".into(), string(&id));
    outh.insert("event".into(), string(strata_event));
    if let Some(cond) = condition {
        outh.insert("condition".into(), cond);
    }
    let mut a = Map::new();
    a.insert("tool".into(), string(&item_id));
    if !params.is_empty() {
        a.insert("params".into(), Value::Object(params));
    }
    outh.insert("action".into(), Value::Object(a));
    let tool = shown(&item_id);
    out.rewrite(format!(
        "hook `{named}`: action {{primary: execute, item_type: tool, item_id: {tool}}} → {{tool: {tool}}}"
    ));
    let description = h.get("description").map(text_of).filter(|d| !d.is_empty());
    Some((outh, description))
}

/// Checks (and rewrites) a hook condition: `classification.*` paths are impossible, limit
/// codes are renamed (`named`: the hook as messages name it).
fn condition_problems(
    named: &str,
    cond: &mut Value,
    reasons: &mut Vec<(&'static str, String)>,
    notes: &mut Vec<(&'static str, String)>,
) {
    match cond {
        Value::Object(m) => {
            for list in ["any", "all"] {
                if let Some(Value::Array(items)) = m.get_mut(list) {
                    for item in items {
                        condition_problems(named, item, reasons, notes);
                    }
                }
            }
            if let Some(inner) = m.get_mut("not") {
                condition_problems(named, inner, reasons, notes);
            }
            let path = m.get("path").map(text_of).unwrap_or_default();
            if path.starts_with("classification.") || path == "classification" {
                reasons.push((
                    "IMP-H-condition",
                    format!("hook `{named}` skipped: its condition reads `{}`, RyeOS's error classification; strata's `error` is `{{kind, message}}`", shown(&path)),
                ));
            }
            if path == "limit_code" {
                let mut lost = Vec::new();
                let mut renamed = Vec::new();
                let rename = |v: &Value,
                              lost: &mut Vec<String>,
                              renamed: &mut Vec<String>|
                 -> Option<Value> {
                    let code = text_of(v);
                    match LIMIT_CODES.iter().find(|(r, _)| *r == code) {
                        Some((r, s)) => {
                            renamed.push(format!("`{r}` → `{s}`"));
                            Some(string(s))
                        }
                        None => {
                            lost.push(format!("`{}`", shown(&code)));
                            None
                        }
                    }
                };
                if let Some(v) = m.get("value").cloned() {
                    let new = match v {
                        Value::Array(items) => Value::Array(
                            items
                                .iter()
                                .filter_map(|i| rename(i, &mut lost, &mut renamed))
                                .collect(),
                        ),
                        other => rename(&other, &mut lost, &mut renamed).unwrap_or(Value::Null),
                    };
                    m.insert("value".into(), new);
                }
                if !renamed.is_empty() || !lost.is_empty() {
                    let mut message = format!(
                        "hook `{named}`: limit codes renamed ({})",
                        renamed.join(", ")
                    );
                    if !lost.is_empty() {
                        message.push_str(&format!(
                            "; {} dropped: strata's limits are `turns` and `timeout` only",
                            lost.join(", ")
                        ));
                    }
                    notes.push(("IMP-H-limit-code", message));
                }
            }
        }
        Value::Array(items) => {
            for item in items {
                condition_problems(named, item, reasons, notes);
            }
        }
        _ => {}
    }
}

/// The context roots a value's `${…}` templates read (`${cost.turns}` → `cost`).
fn roots(v: &Value) -> Vec<String> {
    let mut found = Vec::new();
    let visit = |s: &str, found: &mut Vec<String>| {
        let mut rest = s;
        while let Some(i) = rest.find("${") {
            let inner = rest[i + 2..].trim_start();
            let n = inner
                .bytes()
                .take_while(|b| b.is_ascii_alphanumeric() || *b == b'_')
                .count();
            let root = &inner[..n];
            if n > 0
                && inner.as_bytes()[0].is_ascii_lowercase()
                && !found.iter().any(|f: &String| f == root)
            {
                found.push(root.to_owned());
            }
            rest = &rest[i + 2..];
        }
    };
    fn walk(v: &Value, f: &mut dyn FnMut(&str)) {
        match v {
            Value::String(s) => f(s),
            Value::Array(l) => l.iter().for_each(|x| walk(x, f)),
            Value::Object(m) => m.values().for_each(|x| walk(x, f)),
            _ => {}
        }
    }
    walk(v, &mut |s| visit(s, &mut found));
    found
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Outcome;

    /// A hook file with one hook of each kind the mapping names.
    pub(crate) const HOOKS: &str = r#"# rye:signed:2026-04-10T02:11:41Z:abc:def:0123
category: "agent"
tool_type: "config"
version: "1.0.0"
description: "Hooks"
schema_version: "1.0.0"
builtin_hooks:
  - id: "log_errors"
    event: "error"
    layer: 2
    condition:
      path: "error.kind"
      op: "eq"
      value: "tool_failed"
    action:
      primary: "execute"
      item_type: "tool"
      item_id: "ops/log"
      params:
        line: "${error.message}"
        thread: "${thread_id}"
    description: "Log every failure"
  - id: "on_limit"
    event: "limit"
    condition:
      path: "limit_code"
      op: "in"
      value: ["turns_exceeded", "spend_exceeded", "duration_seconds_exceeded"]
    action:
      primary: execute
      item_id: "tool:ops/log"
      params:
        line: "${limit_code} at ${current_value}"
infra_hooks:
  - id: start
    event: thread_started
    action: {primary: execute, item_type: tool, item_id: ops/log, params: {line: "start ${directive}"}}
  - id: step
    event: after_step
    action: {primary: execute, item_type: tool, item_id: ops/log}
  - id: done
    event: after_complete
    action: {primary: execute, item_type: tool, item_id: ops/log, params: {line: "${status}", payload: {cost: "${cost}"}}}
context_hooks:
  - id: pressure
    event: context_window_pressure
    action: {primary: execute, item_type: tool, item_id: ops/log}
  - id: know
    event: thread_started
    position: after
    action: {primary: execute, item_type: knowledge, item_id: x/y}
  - id: spawn
    event: error
    action: {primary: execute, item_type: directive, item_id: x/fix}
  - id: ctl
    event: error
    action: {primary: execute, item_type: tool, item_id: rye/agent/threads/internal/control}
  - id: missing
    event: error
    action: {primary: execute, item_type: tool, item_id: ops/none}
  - id: classified
    event: error
    condition: {path: classification.retryable, op: eq, value: true}
    action: {primary: execute, item_type: tool, item_id: ops/log}
action_primaries: ["execute"]
extra: 1
"#;

    fn catalog() -> Catalog {
        let mut c = Catalog::default();
        c.tools.insert("ops/log".into());
        c
    }

    // H-file, H-event (each), H-event-none, H-layer, H-action, H-internal, H-knowledge,
    // H-directive, H-condition, H-ns (limit codes), H-ns-none.
    #[test]
    fn hooks_strata_can_fire_are_written_and_the_rest_named() {
        let f = import_hooks(".ai/config/agent/hook_conditions.yaml", HOOKS, &catalog());
        assert_eq!(f.outcome, Outcome::Imported);
        assert_eq!(f.written.len(), 1);
        assert_eq!(f.written[0].path, "hooks/ryeos.yaml");
        assert_eq!(
            f.written[0].contents,
            r#"# Imported from RyeOS `.ai/config/agent/hook_conditions.yaml` by `strata import ryeos` (see IMPORT-REPORT.md).
# Log every failure
- id: log_errors
  event: action_failed
  condition:
    path: error.kind
    op: eq
    value: tool_failed
  action:
    tool: ops/log
    params:
      line: ${error.message}
- id: on_limit
  event: limit_reached
  condition:
    path: limit_code
    op: in
    value:
    - turns
    - timeout
  action:
    tool: ops/log
    params:
      line: ${limit_code} at ${current_value}
- id: start
  event: directive_started
  action:
    tool: ops/log
    params:
      line: start ${directive}
- id: step
  event: after_action
  action:
    tool: ops/log
- id: done
  event: directive_completed
  action:
    tool: ops/log
    params:
      line: ${status}
"#
        );
        assert_eq!(
            f.rewrites,
            [
                "hook `log_errors`: action {primary: execute, item_type: tool, item_id: ops/log} → {tool: ops/log}",
                "hook `on_limit`: action {primary: execute, item_type: tool, item_id: ops/log} → {tool: ops/log}",
                "hook `start`: action {primary: execute, item_type: tool, item_id: ops/log} → {tool: ops/log}",
                "hook `step`: action {primary: execute, item_type: tool, item_id: ops/log} → {tool: ops/log}",
                "hook `done`: action {primary: execute, item_type: tool, item_id: ops/log} → {tool: ops/log}",
                "3 hook list(s) → one list in hooks/ryeos.yaml; file keys (category, tool_type, schema_version, action_primaries, action_item_types) dropped",
            ]
        );
        let warnings: Vec<String> = f
            .warnings
            .iter()
            .map(|w| format!("{} {}:{} {}", w.code, w.line, w.column, w.message))
            .collect();
        assert_eq!(
            warnings,
            [
                "IMP-H-param 8:5 hook `log_errors`: params `thread` (reads `thread_id`) dropped: `action_failed` has no such names",
                "IMP-H-event 8:5 hook `log_errors`: RyeOS event `error` → `action_failed`: it fires on directive actions, not LLM thread turns",
                "IMP-H-layer 8:5 hook `log_errors`: `layer: 2` dropped: strata fires a directive's hooks first, then the project's by file name, in declaration order",
                "IMP-H-limit-code 23:5 hook `on_limit`: limit codes renamed (`turns_exceeded` → `turns`, `duration_seconds_exceeded` → `timeout`); `spend_exceeded` dropped: strata's limits are `turns` and `timeout` only",
                "IMP-H-event 23:5 hook `on_limit`: RyeOS event `limit` → `limit_reached`: it fires on directive actions, not LLM thread turns",
                "IMP-H-event 35:5 hook `start`: RyeOS event `thread_started` → `directive_started`: it fires on directive actions, not LLM thread turns",
                "IMP-H-event 38:5 hook `step`: RyeOS event `after_step` → `after_action`: it fires on directive actions, not LLM thread turns",
                "IMP-H-param 41:5 hook `done`: params `payload` (reads `cost`) dropped: `directive_completed` has no such names",
                "IMP-H-event 41:5 hook `done`: RyeOS event `after_complete` → `directive_completed`: it fires on directive actions, not LLM thread turns",
                "IMP-H-skip 45:5 hook `pressure` skipped: event `context_window_pressure` has no strata equivalent",
                "IMP-H-skip 48:5 hook `know` skipped: its action runs a knowledge (`x/y`), strata hooks only run tools",
                "IMP-H-skip 52:5 hook `spawn` skipped: its action runs a directive (`x/fix`), strata hooks only run tools",
                "IMP-H-skip 55:5 hook `ctl` skipped: its action `rye/agent/threads/internal/control` acts on RyeOS thread state; a strata hook's result cannot steer the directive (its failure is only reported)",
                "IMP-H-skip 58:5 hook `missing` skipped: its tool `ops/none` is in no space of the imported project",
                "IMP-H-condition 61:5 hook `classified` skipped: its condition reads `classification.retryable`, RyeOS's error classification; strata's `error` is `{kind, message}`",
                "IMP-H-key 66:1 `extra` of the hook file has no strata equivalent: dropped",
            ]
        );
    }

    // The corpus result: nothing survives, the file is refused and every hook is named.
    #[test]
    fn a_file_whose_hooks_all_fail_is_refused() {
        let text = "builtin_hooks:\n  - id: a\n    event: directive_return\n    action: {primary: execute, item_type: tool, item_id: ops/log}\n  - id: b\n    event: error\n    action: {primary: execute, item_type: tool, item_id: rye/agent/threads/internal/emitter, params: {t: \"${thread_id}\"}}\n";
        let f = import_hooks("h.yaml", text, &catalog());
        assert_eq!(f.outcome, Outcome::Refused);
        let r = f.reason.as_ref().expect("refused");
        assert_eq!(r.code, "IMP-H-none");
        assert_eq!(
            r.message,
            "no hook of this file can be imported (2 hooks; the warnings say why each is skipped)"
        );
        assert_eq!(f.warnings.len(), 2);
        assert!(f.warnings[0].message.starts_with("hook `a` skipped"));
        assert!(f.warnings[1].message.starts_with("hook `b` skipped"));
        assert!(f.written.is_empty());
        let f = import_hooks("h.yaml", "category: x\n", &catalog());
        assert_eq!(f.reason.expect("refused").message, "the file holds no hook");
        let f = import_hooks("h.yaml", "[1", &catalog());
        assert_eq!(f.reason.expect("refused").code, "IMP-H-yaml");
        let f = import_hooks("h.yaml", "builtin_hooks: !hooks []\n", &catalog());
        assert_eq!(
            f.reason.expect("refused"),
            crate::Refusal {
                code: "IMP-H-yaml".into(),
                message: "the hook file cannot be read: YAML syntax error: unsupported tag `!hooks` at line 1 column 23".into(),
            }
        );
    }
}
