//! minijinja as strata uses it, shared by prompt templates and canned responses.
//!
//! * Values print as layer C prints them ([`strata_core::push_value_text`]): null and
//!   undefined as nothing (never `None`), `true`/`false`, numbers exactly, lists and maps as
//!   compact JSON — not minijinja's defaults.
//! * No auto-escaping, whatever a template's name ends with (minijinja escapes `.html` and
//!   JSON-quotes `.json`/`.yaml` names by default).
//! * Fuel and a recursion limit are always on, so a loop over a huge list or a recursive
//!   macro ends with a [`strata_core::ErrorKind::Limit`] error instead of running away.
//! * Undefined values follow [`strata_core::Undefined`]: empty (`Lenient`, `Warn`) or an
//!   error except in tests such as `{% if x is defined %}` (`Strict`, minijinja's
//!   semi-strict mode).
//! * Errors become strata [`Error`]s with a kind, the template's file and line ([`to_error`]).
//! * [`fields`] lists what a template reads, by full dotted name, found statically.
//!
//! Values given to a render are data: they are printed, never rendered again (nothing here
//! calls `render_str` on a value).

use std::collections::BTreeSet;
use std::sync::OnceLock;

use minijinja::value::Value as JinjaValue;
use minijinja::{AutoEscape, Environment, Output, State, UndefinedBehavior};
use strata_core::{push_value_text, Error, ErrorKind, Layer, Location, Undefined};

/// Bounds on one render.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct JinjaLimits {
    /// Instructions one render may execute (minijinja fuel).
    pub fuel: u64,
    /// Deepest nesting of includes, macros and blocks.
    pub recursion: usize,
}

impl Default for JinjaLimits {
    fn default() -> Self {
        JinjaLimits {
            fuel: 5_000_000,
            recursion: 100,
        }
    }
}

/// A minijinja environment configured the strata way (see the crate documentation).
pub fn environment<'s>(undefined: Undefined, limits: JinjaLimits) -> Environment<'s> {
    let mut env = Environment::new();
    env.set_auto_escape_callback(|_| AutoEscape::None);
    env.set_formatter(format_value);
    set_undefined(&mut env, undefined);
    env.set_keep_trailing_newline(true);
    env.set_fuel(Some(limits.fuel));
    env.set_recursion_limit(limits.recursion);
    env.set_debug(false);
    env
}

/// Makes `env` treat undefined values as `undefined` says: minijinja's semi-strict mode for
/// [`Undefined::Strict`], lenient otherwise. A clone of an environment shares its compiled
/// templates, so one set of templates can serve a strict and a lenient environment.
pub fn set_undefined(env: &mut Environment<'_>, undefined: Undefined) {
    env.set_undefined_behavior(match undefined {
        Undefined::Strict => UndefinedBehavior::SemiStrict,
        Undefined::Warn | Undefined::Lenient => UndefinedBehavior::Lenient,
    });
}

/// The 1-based line and column, inside the template's own `source`, where `err` points
/// (the offending token of a syntax error, the failing expression of a render error), when
/// minijinja knows it.
pub fn error_position(err: &minijinja::Error, source: &str) -> Option<(usize, usize)> {
    let start = err.range()?.start;
    let before = source.get(..start)?;
    let line = 1 + before.matches('\n').count();
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    Some((line, 1 + before[line_start..].chars().count()))
}

/// Prints a value as layer C does.
fn format_value(
    out: &mut Output,
    _state: &State,
    value: &JinjaValue,
) -> Result<(), minijinja::Error> {
    if value.is_undefined() || value.is_none() {
        return Ok(());
    }
    if let Some(s) = value.as_str() {
        return out.write_str(s).map_err(write_failure);
    }
    let json = serde_json::to_value(value).map_err(|e| {
        minijinja::Error::new(
            minijinja::ErrorKind::BadSerialization,
            format!("cannot print a value: {e}"),
        )
    })?;
    let mut text = String::new();
    push_value_text(&json, &mut text);
    out.write_str(&text).map_err(write_failure)
}

fn write_failure(_: std::fmt::Error) -> minijinja::Error {
    minijinja::Error::new(
        minijinja::ErrorKind::WriteFailure,
        "cannot write the output",
    )
}

/// A minijinja error as a strata [`Error`] of `layer`: its kind, message and hint, and, when
/// the error names a template, `file` with the template's line (plus `line_offset`, for
/// templates that start inside a larger file).
pub fn to_error(
    err: &minijinja::Error,
    layer: Layer,
    file: Option<&str>,
    line_offset: usize,
) -> Error {
    use minijinja::ErrorKind as J;
    let (kind, hint) = match err.kind() {
        J::SyntaxError | J::BadEscape | J::UnknownBlock => (
            ErrorKind::Syntax,
            "see the Jinja syntax: {{ value }}, {% if %}…{% endif %}, {% for x in xs %}…{% endfor %}",
        ),
        J::UndefinedError => (
            ErrorKind::Undefined,
            "strict mode turns undefined values into errors; guard optional ones with `is defined`",
        ),
        J::OutOfFuel => (
            ErrorKind::Limit,
            "the template did too much work: a loop over a huge list, or runaway recursion",
        ),
        J::TemplateNotFound | J::BadInclude => (
            ErrorKind::TemplateNotFound,
            "templates may include only other templates of the same project",
        ),
        J::UnknownFilter | J::UnknownTest | J::UnknownFunction | J::UnknownMethod => {
            (ErrorKind::UnknownName, "see minijinja's built-in filters, tests and functions")
        }
        J::InvalidOperation if is_recursion(err) => (
            ErrorKind::Limit,
            "templates, includes or macros nest too deeply",
        ),
        _ => (ErrorKind::Type, "check the types of the values the template uses"),
    };
    let message = err
        .detail()
        .map(str::to_string)
        .unwrap_or_else(|| err.kind().to_string());
    let mut out = Error::new(layer, kind, message).with_hint(hint);
    if let (Some(file), Some(line)) = (file, err.line()) {
        out.location = Some(Location {
            file: file.to_string(),
            line: line + line_offset,
            column: 1,
        });
    }
    out
}

fn is_recursion(err: &minijinja::Error) -> bool {
    err.detail().is_some_and(|d| d.contains("recursion"))
}

/// The names [`environment`] defines itself (`range`, `dict`, `namespace`, …): a template
/// that calls them does not read them from its context.
fn globals() -> &'static [String] {
    static NAMES: OnceLock<Vec<String>> = OnceLock::new();
    NAMES.get_or_init(|| {
        environment(Undefined::Lenient, JinjaLimits::default())
            .globals()
            .map(|(name, _)| name.to_string())
            .collect()
    })
}

/// What a template reads from its context, by full dotted name (`account.balance`,
/// `std.customer.name`), sorted; names a template sets itself (loop variables, `set`) and
/// the environment's own functions (`range(3)`) are not included.
pub fn fields(template: &minijinja::Template<'_, '_>) -> Vec<String> {
    let globals = globals();
    let names: BTreeSet<String> = template
        .undeclared_variables(true)
        .into_iter()
        .filter(|n| {
            let head = n.split('.').next().unwrap_or(n);
            !globals.iter().any(|g| g == head)
        })
        .collect();
    // A name whose longer form is also read (`a` and `a.b`) is reported once, by its longest
    // forms: `a.b` says more than `a`.
    names
        .iter()
        .filter(|n| {
            !names
                .range(format!("{n}.")..)
                .next()
                .is_some_and(|m| m.starts_with(&format!("{n}.")))
        })
        .cloned()
        .collect()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn render(src: &str, ctx: serde_json::Value) -> Result<String, minijinja::Error> {
        let env = environment(Undefined::Warn, JinjaLimits::default());
        env.render_str(src, ctx)
    }

    #[test]
    fn values_print_as_layer_c_prints_them() {
        let ctx = json!({"n": null, "t": true, "f": 0.38, "i": 10000000, "l": [1, "a"],
                         "m": {"k": [null]}, "s": "<b>&"});
        let out = render(
            "[{{ n }}][{{ missing }}][{{ t }}][{{ f }}][{{ i }}][{{ l }}][{{ m }}][{{ s }}]",
            ctx,
        )
        .unwrap();
        assert_eq!(
            out,
            r#"[][][true][0.38][10000000][[1,"a"]][{"k":[null]}][<b>&]"#
        );
    }

    #[test]
    fn maps_print_their_keys_in_the_order_given() {
        let ctx = json!({"m": {"z": 1, "a": {"y": 2, "b": 3}}});
        let out = render("{{ m }}|{% for k in m %}{{ k }}{% endfor %}", ctx).unwrap();
        assert_eq!(out, r#"{"z":1,"a":{"y":2,"b":3}}|za"#);
    }

    #[test]
    fn names_never_turn_escaping_on_and_values_are_not_rendered_again() {
        let mut env = environment(Undefined::Warn, JinjaLimits::default());
        env.add_template("page.html", "{{ v }}").unwrap();
        env.add_template("data.json", "{{ v }}").unwrap();
        let ctx = json!({"v": "<{{ secret }}> {% include '/etc/passwd' %}"});
        for name in ["page.html", "data.json"] {
            let out = env.get_template(name).unwrap().render(&ctx).unwrap();
            assert_eq!(out, "<{{ secret }}> {% include '/etc/passwd' %}");
        }
    }

    #[test]
    fn strict_mode_fails_on_undefined_except_in_tests() {
        let env = environment(Undefined::Strict, JinjaLimits::default());
        assert_eq!(
            env.render_str(
                "{% if x is defined %}{{ x }}{% endif %}|{% if y %}y{% endif %}",
                json!({})
            )
            .unwrap(),
            "|"
        );
        let err = env.render_str("{{ x }}", json!({})).unwrap_err();
        assert_eq!(
            to_error(&err, Layer::new("prompt"), None, 0).kind,
            ErrorKind::Undefined
        );
    }

    #[test]
    fn fuel_stops_runaway_loops_with_a_limit_error() {
        let env = environment(
            Undefined::Warn,
            JinjaLimits {
                fuel: 10_000,
                recursion: 100,
            },
        );
        let err = env
            .render_str("{% for i in range(100000) %}{{ i }}{% endfor %}", json!({}))
            .unwrap_err();
        let e = to_error(&err, Layer::new("prompt"), Some("prompts/t.j2"), 0);
        assert_eq!(e.kind, ErrorKind::Limit);
    }

    #[test]
    fn syntax_errors_carry_the_file_and_line() {
        let mut env = environment(Undefined::Warn, JinjaLimits::default());
        let err = env.add_template("t", "line one\n{% if %}").unwrap_err();
        let e = to_error(&err, Layer::new("prompt"), Some("prompts/main/t.j2"), 0);
        assert_eq!(e.kind, ErrorKind::Syntax);
        assert_eq!(
            e.location,
            Some(Location {
                file: "prompts/main/t.j2".into(),
                line: 2,
                column: 1
            })
        );
    }

    #[test]
    fn errors_point_at_line_and_column_of_the_template() {
        let mut env = environment(Undefined::Warn, JinjaLimits::default());
        let src = "line one\n  ab {% if %}";
        let err = env.add_template("t", src).unwrap_err();
        assert_eq!(error_position(&err, src), Some((2, 12)));
        set_undefined(&mut env, Undefined::Strict);
        let src = "é {{ x.y }}";
        let err = env.render_str(src, json!({})).unwrap_err();
        assert_eq!(error_position(&err, src), Some((1, 6)));
    }

    #[test]
    fn fields_are_full_dotted_names_through_conditions_and_loops() {
        let mut env = environment(Undefined::Warn, JinjaLimits::default());
        env.add_template(
            "r",
            "Hi {{ std.customer.name }}, {{ account.balance }}.\n\
             {% if account.overdraft %}{{ account.overdraft_amount }}{% endif %}\n\
             {% for t in transactions %}{{ t.date }}{% endfor %}{% set x = 1 %}{{ x }}\n\
             {% for i in range(2) %}{{ dict(a=1) }}{{ namespace() }}{% endfor %}",
        )
        .unwrap();
        let t = env.get_template("r").unwrap();
        assert_eq!(
            fields(&t),
            [
                "account.balance",
                "account.overdraft",
                "account.overdraft_amount",
                "std.customer.name",
                "transactions"
            ]
        );
    }
}
