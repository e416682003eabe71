//! Post-dispatch stages 3–6 over the merged config (`${NAME}`, `{param}`, `${NAME}`,
//! `{param}`), `{literal: …}` values kept out of every stage, and small helpers that render
//! one authored string through a chain.

use serde_json::Value;
use strata_core::{
    Error, ErrorKind, FieldPath, Layer, Limits, Origin, PathSeg, RenderOptions, Rendered, Scope,
    Text, Warning,
};
use strata_pipeline::{explain, Chain, StageOutput, Template};

/// The post-dispatch chain: stage 3 env, 4 params, 5 env, 6 params.
pub fn stage_chain() -> Chain {
    Chain::of(&[Layer::ENV, Layer::PARAMS, Layer::ENV, Layer::PARAMS])
}

/// The number of the first post-dispatch stage (SPEC §2).
pub const FIRST_STAGE: usize = 3;

/// A `{literal: "…"}` value: copied byte for byte, never templated.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Literal {
    /// Where it stands in the config.
    pub path: FieldPath,
    /// The exact text.
    pub text: String,
}

/// The `literal` of a `{literal: …}` map (a map with that one key), `None` for any other
/// value: the one rule for what a literal is, for the stages, the check and `explain`.
pub fn as_literal(value: &Value) -> Option<&Value> {
    match value {
        Value::Object(map) if map.len() == 1 => map.get("literal"),
        _ => None,
    }
}

/// Replaces every `{literal: "…"}` map in `value` by null and returns them, so that no stage
/// ever sees their text. A `literal` that is not a string is an error.
pub fn take_literals(value: &mut Value) -> Result<Vec<Literal>, Error> {
    let mut out = Vec::new();
    walk_literals(value, &FieldPath::root(), &mut out)?;
    Ok(out)
}

fn walk_literals(value: &mut Value, path: &FieldPath, out: &mut Vec<Literal>) -> Result<(), Error> {
    if let Some(literal) = as_literal(value) {
        let Value::String(text) = literal else {
            return Err(Error::new(
                Layer::REQUEST,
                ErrorKind::Invalid,
                "`literal` takes a string",
            )
            .with_hint("write {literal: \"…\"} with the exact text")
            .at_path(&path.child(PathSeg::Key("literal".into()))));
        };
        let text = text.clone();
        out.push(Literal {
            path: path.clone(),
            text,
        });
        *value = Value::Null;
        return Ok(());
    }
    match value {
        Value::Object(map) => {
            for (k, v) in map.iter_mut() {
                walk_literals(v, &path.child(PathSeg::Key(k.clone())), out)?;
            }
        }
        Value::Array(items) => {
            for (i, v) in items.iter_mut().enumerate() {
                walk_literals(v, &path.child(PathSeg::Index(i)), out)?;
            }
        }
        _ => {}
    }
    Ok(())
}

/// Puts the literals back into a rendered tree, as authored text.
pub fn restore_literals(rendered: &mut Rendered, literals: &[Literal]) {
    for lit in literals {
        set_at(rendered, &lit.path.0, &lit.text);
    }
}

fn set_at(rendered: &mut Rendered, path: &[PathSeg], text: &str) {
    let Some((first, rest)) = path.split_first() else {
        let mut t = Text::default();
        t.push(text, Origin::Authored);
        *rendered = Rendered::Text(t);
        return;
    };
    match (rendered, first) {
        (Rendered::Object(entries), PathSeg::Key(k)) => {
            if let Some((_, child)) = entries.iter_mut().find(|(key, _)| **key == **k) {
                set_at(child, rest, text);
            }
        }
        (Rendered::Array(items), PathSeg::Index(i)) => {
            if let Some(child) = items.get_mut(*i) {
                set_at(child, rest, text);
            }
        }
        (Rendered::Value(v, _), _) => {
            let target = path.iter().try_fold(v.to_mut(), |cur, seg| match seg {
                PathSeg::Key(k) => cur.get_mut(k.as_str()),
                PathSeg::Index(i) => cur.get_mut(*i),
            });
            if let Some(target) = target {
                *target = Value::String(text.to_string());
            }
        }
        _ => {}
    }
}

/// The config after each of stages 3–6 (`stage` numbered 3 to 6), literals restored.
pub fn explain_config(
    config: &Value,
    literals: &[Literal],
    scope: &Scope<'_>,
    limits: &Limits,
    options: &RenderOptions,
) -> Result<Vec<StageOutput>, Error> {
    let mut stages = explain(config, &stage_chain(), limits, scope, options)?;
    for s in &mut stages {
        s.stage += FIRST_STAGE - 1;
        restore_literals(&mut s.value, literals);
    }
    Ok(stages)
}

/// Any rendered value as text with origins: text as is, values in their text form.
pub fn to_text(r: &Rendered) -> Text {
    let mut out = Text::default();
    r.push_text(&mut out);
    out
}

/// Renders one authored string through `chain`: the text and the warnings.
pub fn render_string(
    s: &str,
    chain: &Chain,
    scope: &Scope<'_>,
    limits: &Limits,
    options: &RenderOptions,
) -> Result<(Text, Vec<Warning>), Error> {
    let template = Template::compile(&Value::String(s.to_string()), chain, limits)?;
    let out = template.render(scope, options)?;
    Ok((to_text(&out.value), out.warnings))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{json, Map};
    use strata_core::EnvMap;

    #[test]
    fn literals_skip_every_stage() {
        let mut config = json!({
            "command": "awk",
            "args": ["-f", {"literal": "BEGIN { print \"${HOME} {x}\" }"}, "{x}"],
            "plain": [{"literal": "{x}"}]
        });
        let lits = take_literals(&mut config).unwrap();
        assert_eq!(lits.len(), 2);
        let env: EnvMap = [("HOME", "/h")].into_iter().collect();
        let params: Map<String, Value> = json!({"x": "X"}).as_object().unwrap().clone();
        let scope = Scope {
            env: &env,
            caller_params: &params,
            ..Scope::default()
        };
        let template = Template::compile(&config, &stage_chain(), &Limits::default()).unwrap();
        let mut value = template
            .render(&scope, &RenderOptions::default())
            .unwrap()
            .value
            .into_owned();
        restore_literals(&mut value, &lits);
        assert_eq!(
            value.into_json(),
            json!({
                "command": "awk",
                "args": ["-f", "BEGIN { print \"${HOME} {x}\" }", "X"],
                "plain": ["{x}"]
            })
        );
    }

    #[test]
    fn a_literal_must_be_a_string() {
        let mut config = json!({"args": [{"literal": 3}]});
        let e = take_literals(&mut config).unwrap_err();
        assert_eq!(e.message(), "`literal` takes a string");
        assert_eq!(e.path().to_string(), "args[0].literal");
    }

    #[test]
    fn explain_numbers_stages_three_to_six() {
        let config = json!({"a": "${X:-{y}}"});
        let stages = explain_config(
            &config,
            &[],
            &Scope::default(),
            &Limits::default(),
            &RenderOptions::default(),
        )
        .unwrap();
        let nums: Vec<usize> = stages.iter().map(|s| s.stage).collect();
        assert_eq!(nums, [3, 4, 5, 6]);
    }
}
