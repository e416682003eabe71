//! minijinja as strata uses it, shared by prompt templates and canned responses.
//!
//! * Values print as layer C prints them ([`strata_core::push_value_text`]): null and
//!   undefined as nothing (never `None`), `true`/`false`, numbers exactly, lists and maps as
//!   compact JSON — not minijinja's defaults.
//! * No auto-escaping, whatever a template's name ends with (minijinja escapes `.html` and
//!   JSON-quotes `.json`/`.yaml` names by default).
//! * Fuel and a recursion limit are always on, so a loop over a huge list or a recursive
//!   macro ends with a [`strata_core::ErrorKind::Limit`] error instead of running away. Every
//!   loop iteration costs fuel whatever its body, and so does every item a filter gathers
//!   (`list`, `join`, `sort`, `tojson`, …): a filter given more items than the fuel refuses
//!   them before building anything.
//! * Output is bounded while it is written ([`render_value`]): the text a render produces, and
//!   every value it prints (captured by `{% set %}…{% endset %}` or not), stop at
//!   [`JinjaLimits::output_bytes`] with a limit error naming `limits.output_bytes_per_string`;
//!   a value is printed piece by piece, so a huge (even lazy) list costs no more than the
//!   limit. `format` and `indent` refuse widths whose result would pass it.
//! * Undefined values follow [`strata_core::Undefined`]: empty (`Lenient`, `Warn`) or an
//!   error except in tests such as `{% if x is defined %}` (`Strict`, minijinja's
//!   semi-strict mode).
//! * Errors become strata [`Error`]s with a kind, the template's file and line ([`to_error`]).
//! * [`fields`] lists what a template reads, by full dotted name, found statically.
//!
//! Values given to a render are data: they are printed, never rendered again (nothing here
//! calls `render_str` on a value).

use std::cell::Cell;
use std::collections::BTreeSet;
use std::sync::OnceLock;

use minijinja::value::{Rest, Value as JinjaValue, ValueKind, ValueOrKwargs};
use minijinja::{AutoEscape, Environment, Output, State, Template, UndefinedBehavior};
use strata_core::{Error, ErrorKind, Layer, Location, Undefined};

mod json;

pub use json::value_of;

/// The setting that bounds the output of a render.
pub const OUTPUT_SETTING: &str = "output_bytes_per_string";

/// The fuel of one render: instructions, and (minijinja charges one fuel per 64 bytes) at
/// most 32 MB of strings and lists built by operators, literals and filters, so that no
/// doubling loop, capture or recursion holds more than that.
pub const FUEL: u64 = 500_000;

/// Bounds on one render.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct JinjaLimits {
    /// Instructions one render may execute (minijinja fuel): every loop iteration costs at
    /// least one, whatever its body. Also the most items one filter may gather.
    pub fuel: u64,
    /// Deepest nesting of includes, macros and blocks.
    pub recursion: usize,
    /// Most bytes one render may produce, and most bytes of values it may print, captured
    /// or not (the project's `limits.output_bytes_per_string`).
    pub output_bytes: usize,
}

impl Default for JinjaLimits {
    fn default() -> Self {
        JinjaLimits::from_limits(&strata_core::Limits::default())
    }
}

impl JinjaLimits {
    /// The bounds of a project whose limits are `limits`: its output is bounded by
    /// `output_bytes_per_string`.
    pub fn from_limits(limits: &strata_core::Limits) -> Self {
        JinjaLimits {
            fuel: FUEL,
            recursion: 100,
            output_bytes: limits.output_bytes_per_string,
        }
    }
}

/// Filters that gather every item of a sequence (or iterate all of it): given more items than
/// the fuel, they refuse before building anything.
const GATHERING_FILTERS: &[&str] = &[
    "list",
    "join",
    "sort",
    "unique",
    "reverse",
    "string",
    "tojson",
    "pprint",
    "batch",
    "slice",
    "sum",
    "min",
    "max",
    "last",
    "select",
    "reject",
    "selectattr",
    "rejectattr",
    "map",
    "groupby",
    "dictsort",
    "items",
    "chain",
    "zip",
];

/// A minijinja environment configured the strata way (see the crate documentation).
pub fn environment<'s>(undefined: Undefined, limits: JinjaLimits) -> Environment<'s> {
    let mut env = Environment::new();
    env.set_auto_escape_callback(|_| AutoEscape::None);
    let output = limits.output_bytes;
    env.set_formatter(move |out, state, value| format_value(out, state, value, output));
    set_undefined(&mut env, undefined);
    env.set_fuel(Some(limits.fuel));
    env.set_recursion_limit(limits.recursion);
    env.set_debug(false);
    let items = usize::try_from(limits.fuel).unwrap_or(usize::MAX);
    for &name in GATHERING_FILTERS {
        let Some(builtin) = builtin_filter(name) else {
            continue;
        };
        env.add_filter(name, move |state: &mut State, args: Rest<ValueOrKwargs>| {
            let args = args.into_values();
            for arg in args.iter() {
                if items_within(arg, items).is_none() {
                    return Err(out_of_fuel(name, items));
                }
            }
            builtin.call(state, &args)
        });
    }
    env.add_filter(
        "format",
        move |state: &mut State, format: &JinjaValue, args: Rest<ValueOrKwargs>| {
            let values: Vec<JinjaValue> = args.iter().map(|a| (**a).clone()).collect();
            check_format_widths(format, &values, output)?;
            minijinja::filters::format(state, format, args)
        },
    );
    env.add_filter(
        "indent",
        move |state: &mut State, args: Rest<ValueOrKwargs>| {
            let args = args.into_values();
            check_indent(&args, output)?;
            builtin_filter("indent")
                .ok_or_else(|| minijinja::Error::from(minijinja::ErrorKind::UnknownFilter))?
                .call(state, &args)
        },
    );
    env
}

/// The built-in filter `name`, as a callable value.
fn builtin_filter(name: &str) -> Option<JinjaValue> {
    use minijinja::filters as f;
    Some(match name {
        "list" => JinjaValue::from_function(f::list),
        "join" => JinjaValue::from_function(f::join),
        "sort" => JinjaValue::from_function(f::sort),
        "unique" => JinjaValue::from_function(f::unique),
        "reverse" => JinjaValue::from_function(f::reverse),
        "string" => JinjaValue::from_function(f::string),
        "tojson" => JinjaValue::from_function(f::tojson),
        "pprint" => JinjaValue::from_function(f::pprint),
        "batch" => JinjaValue::from_function(f::batch),
        "slice" => JinjaValue::from_function(f::slice),
        "sum" => JinjaValue::from_function(f::sum),
        "min" => JinjaValue::from_function(f::min),
        "max" => JinjaValue::from_function(f::max),
        "last" => JinjaValue::from_function(f::last),
        "select" => JinjaValue::from_function(f::select),
        "reject" => JinjaValue::from_function(f::reject),
        "selectattr" => JinjaValue::from_function(f::selectattr),
        "rejectattr" => JinjaValue::from_function(f::rejectattr),
        "map" => JinjaValue::from_function(f::map),
        "groupby" => JinjaValue::from_function(f::groupby),
        "dictsort" => JinjaValue::from_function(f::dictsort),
        "items" => JinjaValue::from_function(f::items),
        "chain" => JinjaValue::from_function(f::chain),
        "zip" => JinjaValue::from_function(f::zip),
        "indent" => JinjaValue::from_function(f::indent),
        _ => return None,
    })
}

/// The items of `value`, counted through nested sequences and maps (strings and numbers are
/// one each); `None` as soon as the count passes `cap` (a lazy sequence is measured by its
/// length, never walked past the cap).
fn items_within(value: &JinjaValue, cap: usize) -> Option<usize> {
    let mut count = 0usize;
    let mut stack = vec![value.clone()];
    while let Some(v) = stack.pop() {
        count += 1;
        if count > cap {
            return None;
        }
        if !matches!(
            v.kind(),
            ValueKind::Seq | ValueKind::Map | ValueKind::Iterable
        ) {
            continue;
        }
        if let Some(len) = v.len() {
            if count.saturating_add(len) > cap {
                return None;
            }
        }
        let Ok(iter) = v.try_iter() else {
            continue;
        };
        for (i, item) in iter.enumerate() {
            if count + stack.len() + i > cap {
                return None;
            }
            if v.kind() == ValueKind::Map {
                stack.push(v.get_item(&item).unwrap_or_default());
            } else {
                stack.push(item);
            }
        }
    }
    Some(count)
}

fn out_of_fuel(filter: &str, items: usize) -> minijinja::Error {
    minijinja::Error::new(
        minijinja::ErrorKind::OutOfFuel,
        format!("engine ran out of fuel: `{filter}` of more than {items} items"),
    )
}

/// Refuses a `format` whose width or precision (written, or given by `*`) passes `limit`.
fn check_format_widths(
    format: &JinjaValue,
    args: &[JinjaValue],
    limit: usize,
) -> Result<(), minijinja::Error> {
    let Some(text) = format.as_str() else {
        return Ok(());
    };
    let mut chars = text.chars().peekable();
    let mut star = false;
    while let Some(c) = chars.next() {
        if c != '%' {
            continue;
        }
        let mut digits = String::new();
        while let Some(&d) = chars.peek() {
            if d.is_ascii_alphabetic() || d == '%' {
                chars.next();
                break;
            }
            chars.next();
            if d.is_ascii_digit() {
                digits.push(d);
                continue;
            }
            star |= d == '*';
            if number_over(&digits, limit) {
                return Err(output_limit(limit));
            }
            digits.clear();
        }
        if number_over(&digits, limit) {
            return Err(output_limit(limit));
        }
    }
    if star
        && args
            .iter()
            .any(|a| i128::try_from(a.clone()).is_ok_and(|n| n.unsigned_abs() > limit as u128))
    {
        return Err(output_limit(limit));
    }
    Ok(())
}

fn number_over(digits: &str, limit: usize) -> bool {
    !digits.is_empty() && digits.parse::<usize>().map_or(true, |n| n > limit)
}

/// Refuses an `indent` whose result would pass `limit`.
fn check_indent(args: &[JinjaValue], limit: usize) -> Result<(), minijinja::Error> {
    let text = args.first().and_then(JinjaValue::as_str).unwrap_or("");
    let written = args
        .get(1)
        .filter(|w| w.kind() == ValueKind::Number)
        .cloned();
    let keyword = || {
        args.last()
            .filter(|k| k.kind() == ValueKind::Map)
            .and_then(|k| k.get_attr("width").ok())
            .filter(|w| w.kind() == ValueKind::Number)
    };
    let width = match written.or_else(keyword) {
        Some(w) => usize::try_from(w).unwrap_or(usize::MAX),
        None => 4,
    };
    let lines = text.matches('\n').count() + 1;
    let size = width
        .checked_mul(lines)
        .and_then(|n| n.checked_add(text.len()));
    if size.map_or(true, |n| n > limit) {
        return Err(output_limit(limit));
    }
    Ok(())
}

/// The marker an output-limit error carries, found again by [`to_error`].
#[derive(Debug)]
struct OutputLimit(usize);

impl std::fmt::Display for OutputLimit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "rendered text exceeds {} bytes", self.0)
    }
}

impl std::error::Error for OutputLimit {}

fn output_limit(limit: usize) -> minijinja::Error {
    minijinja::Error::new(
        minijinja::ErrorKind::InvalidOperation,
        format!("rendered text exceeds {limit} bytes"),
    )
    .with_source(OutputLimit(limit))
}

/// The output limit an error stands for, if it is one.
fn output_limit_of(err: &minijinja::Error) -> Option<usize> {
    let mut at: Option<&(dyn std::error::Error + 'static)> = std::error::Error::source(err);
    while let Some(e) = at {
        if let Some(OutputLimit(n)) = e.downcast_ref::<OutputLimit>() {
            return Some(*n);
        }
        if let Some(OutputLimit(n)) = e
            .downcast_ref::<std::io::Error>()
            .and_then(|io| io.get_ref())
            .and_then(|inner| inner.downcast_ref::<OutputLimit>())
        {
            return Some(*n);
        }
        at = e.source();
    }
    None
}

thread_local! {
    /// Bytes of values the current [`render_value`] on this thread has printed (captured or not);
    /// `None` outside one.
    static PRINTED: Cell<Option<usize>> = const { Cell::new(None) };
}

/// Counts `bytes` more printed by the current render; fails past `limit`.
fn charge(bytes: usize, limit: usize) -> Result<(), minijinja::Error> {
    if bytes > limit {
        return Err(output_limit(limit));
    }
    PRINTED.with(|p| match p.get() {
        Some(done) if done.saturating_add(bytes) > limit => Err(output_limit(limit)),
        Some(done) => {
            p.set(Some(done + bytes));
            Ok(())
        }
        None => Ok(()),
    })
}

/// A `String` that refuses to grow past its limit.
struct Bounded {
    text: Vec<u8>,
    limit: usize,
}

impl std::io::Write for Bounded {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        if self.text.len().saturating_add(buf.len()) > self.limit {
            return Err(std::io::Error::other(OutputLimit(self.limit)));
        }
        self.text.extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Renders `template` with `ctx`, its output bounded by `limits.output_bytes` while it is
/// written: the text it produces, and the values it prints (captured or not). Renders nest
/// (a prompt component renders inside the template that reads it); each is bounded alone.
/// The context is a minijinja value already (a map, or an object that looks names up when
/// the template reads them); JSON becomes one through [`value_of`], which keeps its numbers
/// exact (serialised, a number held as text would not come through as a number).
pub fn render_value(
    template: &Template<'_, '_>,
    ctx: JinjaValue,
    limits: JinjaLimits,
) -> Result<String, minijinja::Error> {
    let outer = PRINTED.with(|p| p.replace(Some(0)));
    let mut out = Bounded {
        // Most templates print about as much as their source holds.
        text: Vec::with_capacity(template.source().len().min(limits.output_bytes)),
        limit: limits.output_bytes,
    };
    let done = template.render_captured_to(ctx, &mut out).map(|_| ());
    PRINTED.with(|p| p.set(outer));
    done?;
    String::from_utf8(out.text).map_err(|_| write_failure(std::fmt::Error))
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

/// Prints a value as layer C does ([`strata_core::push_value_text`]: strings as they are,
/// other values as compact JSON), at most `limit` bytes of it: a list is written piece by
/// piece and stops there, so a huge (even lazy) list costs no more than the limit.
fn format_value(
    out: &mut Output,
    _state: &State,
    value: &JinjaValue,
    limit: usize,
) -> Result<(), minijinja::Error> {
    if value.is_undefined() || value.is_none() {
        return Ok(());
    }
    if let Some(s) = value.as_str() {
        charge(s.len(), limit)?;
        return out.write_str(s).map_err(write_failure);
    }
    let mut text = Bounded {
        text: Vec::new(),
        limit,
    };
    if let Err(e) = serde_json::to_writer(&mut text, &json::Printed(value)) {
        if e.is_io() {
            return Err(output_limit(limit));
        }
        return Err(minijinja::Error::new(
            minijinja::ErrorKind::BadSerialization,
            format!("cannot print a value: {e}"),
        ));
    }
    charge(text.text.len(), limit)?;
    let text = String::from_utf8(text.text).map_err(|_| write_failure(std::fmt::Error))?;
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
    if let Some(limit) = output_limit_of(err) {
        let mut out = Error::new(
            layer,
            ErrorKind::Limit,
            format!("rendered text exceeds {limit} bytes"),
        )
        .with_limit(OUTPUT_SETTING, limit, "if this is intended,");
        if let (Some(file), Some(line)) = (file, err.line()) {
            out = out.at_location(Location {
                file: file.to_string(),
                line: line + line_offset,
                column: 1,
            });
        }
        return out;
    }
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
            "the template did too much work: a loop over a huge list, runaway recursion, or strings and lists built past 32 MB",
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
        out = out.at_location(Location {
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
pub fn fields(template: &Template<'_, '_>) -> Vec<String> {
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
        env.render_str(src, value_of(&ctx))
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
            let out = env
                .get_template(name)
                .unwrap()
                .render(minijinja::value::Serde(&ctx))
                .unwrap();
            assert_eq!(out, "<{{ secret }}> {% include '/etc/passwd' %}");
        }
    }

    #[test]
    fn strict_mode_fails_on_undefined_except_in_tests() {
        let env = environment(Undefined::Strict, JinjaLimits::default());
        assert_eq!(
            env.render_str(
                "{% if x is defined %}{{ x }}{% endif %}|{% if y %}y{% endif %}",
                minijinja::value::Serde(json!({}))
            )
            .unwrap(),
            "|"
        );
        let err = env
            .render_str("{{ x }}", minijinja::value::Serde(json!({})))
            .unwrap_err();
        assert_eq!(
            to_error(&err, Layer::new("prompt"), None, 0).kind(),
            ErrorKind::Undefined
        );
    }

    #[test]
    fn fuel_stops_runaway_loops_with_a_limit_error() {
        let env = environment(
            Undefined::Warn,
            JinjaLimits {
                fuel: 10_000,
                ..JinjaLimits::default()
            },
        );
        let err = env
            .render_str(
                "{% for i in range(100000) %}{{ i }}{% endfor %}",
                minijinja::value::Serde(json!({})),
            )
            .unwrap_err();
        let e = to_error(&err, Layer::new("prompt"), Some("prompts/t.j2"), 0);
        assert_eq!(e.kind(), ErrorKind::Limit);
    }

    /// Renders `src` through [`render_value`] with an output limit of `output` bytes.
    fn bounded(src: &str, output: usize) -> Result<String, Error> {
        let mut env = environment(
            Undefined::Warn,
            JinjaLimits {
                output_bytes: output,
                ..JinjaLimits::default()
            },
        );
        env.add_template("t", src).unwrap();
        let t = env.get_template("t").unwrap();
        render_value(&t, value_of(&json!({"l": [1, 2, 3]})), env_limits(output))
            .map_err(|e| to_error(&e, Layer::new("prompt"), Some("prompts/t.j2"), 0))
    }

    fn env_limits(output: usize) -> JinjaLimits {
        JinjaLimits {
            output_bytes: output,
            ..JinjaLimits::default()
        }
    }

    #[test]
    fn output_stops_at_its_limit_while_it_is_written() {
        assert_eq!(bounded("{{ l }}{{ 'ab' }}", 9).unwrap(), "[1,2,3]ab");
        for src in [
            "{{ l }}{{ 'abc' }}",
            "{% for i in range(10) %}x{% endfor %}",
            "{{ (range(10000)|list) * 10000 }}",
            "{{ '%0999999999d'|format(1) }}",
            "{{ '%*d'|format(999999999, 1) }}",
            "{{ 'a\nb'|indent(100000000) }}",
            "{{ 'a\nb'|indent(width=100000000) }}",
            "{% set x %}{% for i in range(10) %}{{ 'x' }}{% endfor %}{% endset %}",
        ] {
            let e = bounded(src, 9).unwrap_err();
            assert_eq!(e.kind(), ErrorKind::Limit, "{src}: {}", e.message());
            assert_eq!(e.message(), "rendered text exceeds 9 bytes", "{src}");
            assert_eq!(
                e.hint(),
                Some("if this is intended, raise `limits.output_bytes_per_string` in strata.yaml (or STRATA_LIMITS_OUTPUT_BYTES_PER_STRING)"),
                "{src}"
            );
        }
        assert_eq!(
            bounded("{{ '%5d'|format(1) }}|{{ 'a'|indent(2, true) }}", 100).unwrap(),
            "    1|  a"
        );
    }

    #[test]
    fn gathering_filters_refuse_more_items_than_the_fuel() {
        let e = bounded("{{ ((range(10000)|list) * 1000)|join }}", usize::MAX).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Limit);
        assert_eq!(
            e.message(),
            "engine ran out of fuel: `join` of more than 500000 items"
        );
        assert_eq!(
            bounded(
                "{{ [3, 1, 2]|sort|join(',') }} {{ {'a': [1]}|items|list }}",
                100
            )
            .unwrap(),
            r#"1,2,3 [["a",[1]]]"#
        );
    }

    #[test]
    fn syntax_errors_carry_the_file_and_line() {
        let mut env = environment(Undefined::Warn, JinjaLimits::default());
        let err = env.add_template("t", "line one\n{% if %}").unwrap_err();
        let e = to_error(&err, Layer::new("prompt"), Some("prompts/main/t.j2"), 0);
        assert_eq!(e.kind(), ErrorKind::Syntax);
        assert_eq!(
            e.location(),
            Some(&Location {
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
        let err = env
            .render_str(src, minijinja::value::Serde(json!({})))
            .unwrap_err();
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
