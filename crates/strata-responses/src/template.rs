//! A canned response: an authored Jinja template compiled once, its fields found statically,
//! rendered with field values that are data.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Mutex};

use minijinja::value::{Enumerator, Object, ObjectRepr, Value as JinjaValue};
use minijinja::{Environment, UndefinedBehavior};
use serde_json::Value;
use strata_core::{Error, ErrorKind, Location, Span, Undefined};
use strata_jinja::JinjaLimits;

use crate::extract::Field;
use crate::names::name_problem;
use crate::RESPONSE;

/// The name the template has inside its environment.
const NAME: &str = "response";

/// A compiled canned response.
///
/// ```
/// use serde_json::json;
/// use strata_responses::{Field, FieldSource, Response};
///
/// let r = Response::compile("Hi {{ std.customer.name }}, {{ account.balance }}.", None, Default::default()).unwrap();
/// assert_eq!(r.fields(), ["std.customer.name", "account.balance"]);
/// let fields = [
///     Field::new("std.customer.name", json!("Ann"), FieldSource::Std),
///     Field::new("account.balance", json!("{{ secret }}"), FieldSource::Std),
/// ];
/// assert_eq!(r.render(&fields).unwrap(), "Hi Ann, {{ secret }}.");
/// ```
#[derive(Debug)]
pub struct Response {
    source: String,
    file: Option<String>,
    env: Environment<'static>,
    /// The same templates, undefined values strict: the trial renders that find which fields
    /// a render reads.
    strict: Environment<'static>,
    fields: Vec<String>,
    limits: JinjaLimits,
}

impl Response {
    /// Compiles `source`. `file` names the template's own file (`strata respond`); errors
    /// then carry its line and column. Templates embedded in a larger file get no location
    /// here: their errors carry the span inside the template, for the caller to locate.
    pub fn compile(
        source: impl Into<String>,
        file: Option<&str>,
        limits: JinjaLimits,
    ) -> Result<Response, Error> {
        let source = source.into();
        let mut env = strata_jinja::environment(Undefined::Strict, limits);
        let mut response = Response {
            source: source.clone(),
            file: file.map(str::to_string),
            env: Environment::new(),
            strict: Environment::new(),
            fields: Vec::new(),
            limits,
        };
        if let Err(e) = env.add_template_owned(NAME, source) {
            return Err(response.jinja_error(&e));
        }
        let mut fields = match env.get_template(NAME) {
            Ok(t) => strata_jinja::fields(&t),
            Err(e) => return Err(response.jinja_error(&e)),
        };
        fields.sort_by_cached_key(|f| response.span_of(f).map_or(usize::MAX, |s| s.start));
        for field in &fields {
            if let Some(problem) = name_problem(field) {
                let err = Error::new(RESPONSE, ErrorKind::Syntax, problem).with_hint(
                    "rename the field: keywords such as `if`, `for`, `in`, `not` and `loop` cannot name a value",
                );
                return Err(response.at_field(err, field));
            }
        }
        let mut strict = env.clone();
        strict.set_undefined_behavior(UndefinedBehavior::Strict);
        strict.add_test("defined", |v: &JinjaValue| !tested(v));
        strict.add_test("undefined", |v: &JinjaValue| tested(v));
        for name in ["default", "d"] {
            strict.add_filter(
                name,
                |state: &minijinja::State,
                 v: &JinjaValue,
                 args: minijinja::value::Rest<JinjaValue>| {
                    tested(v);
                    minijinja::filters::default(state, v, args)
                },
            );
        }
        response.env = env;
        response.strict = strict;
        response.fields = fields;
        Ok(response)
    }

    /// The fields the template *may* read, by full dotted name, in the order they first
    /// appear: found statically, through every branch and loop (what `strata check` lists).
    /// Which of them a render *needs* depends on the values: see [`Response::extract`].
    pub fn fields(&self) -> &[String] {
        &self.fields
    }

    /// The template as written.
    pub fn source(&self) -> &str {
        &self.source
    }

    /// The template's file, when it has one of its own.
    pub fn file(&self) -> Option<&str> {
        self.file.as_deref()
    }

    /// Renders the template with `fields` (the values of [`Response::fields`]). Values are
    /// data: a value holding `{{ x }}` is printed as written. The output is bounded while it
    /// is written by the limits given to [`Response::compile`] (`output_bytes`: a limit error
    /// naming `limits.output_bytes_per_string`). A field holding a secret is
    /// refused before anything is rendered.
    pub fn render(&self, fields: &[Field]) -> Result<String, Error> {
        if let Some(secret) = fields.iter().find(|f| f.secret) {
            return Err(self.refuse(secret));
        }
        let template = self
            .env
            .get_template(NAME)
            .map_err(|e| self.jinja_error(&e))?;
        let values: Vec<(&str, &Value)> =
            fields.iter().map(|f| (f.name.as_str(), &f.value)).collect();
        strata_jinja::render_value(&template, self.context(&values).0, self.limits)
            .map_err(|e| self.jinja_error(&e))
    }

    /// A trial render with `values` (field name → value), undefined values strict, that
    /// records which fields it looks up: `Ok` when it renders, `Err(Some(field))` when it
    /// reads `field` (prints it, tests it in a condition, loops over it, passes it to a
    /// filter…) and `values` has none, `Err(None)` when it fails otherwise (the real render
    /// reports that). Looking a field up only to test it with `is defined` / `is undefined`
    /// or to give it a `default(…)` is not reading it.
    pub(crate) fn trial(&self, values: &[(&str, &Value)]) -> Result<(), Option<String>> {
        let template = self.strict.get_template(NAME).map_err(|_| None)?;
        let (root, track) = self.context(values);
        let outer = TRIAL.with(|t| t.replace(Some(Arc::clone(&track))));
        let done = strata_jinja::render_value(&template, root, self.limits);
        TRIAL.with(|t| t.replace(outer));
        let Err(e) = done else {
            // Rendered: a field looked up, not found, and used without an error (compared,
            // tested with `is none`…) was read all the same.
            let reads = track.reads.lock().map(|r| r.first().cloned());
            return match reads {
                Ok(Some(field)) => Err(Some(field)),
                _ => Ok(()),
            };
        };
        if e.kind() != minijinja::ErrorKind::UndefinedError {
            return Err(None);
        }
        let last = track.last.lock().ok().and_then(|last| last.clone());
        let Some(field) = last else {
            return Err(None);
        };
        // The last field looked up and not found is the one the failing expression read, when
        // the expression names it (an undefined attribute of a value is no field's doing).
        // minijinja's range may start inside the expression (`.agent.name`): read from the
        // start of its tag.
        let read_there = match e.range() {
            Some(r) => {
                let before = self.source.get(..r.start).unwrap_or_default();
                let tag = before.rfind("{{").max(before.rfind("{%")).unwrap_or(0);
                self.source.get(tag..r.end)
            }
            None => None,
        };
        let read_there = match read_there {
            Some(text) => {
                find_name(text, &field).is_some()
                    || find_name(text, crate::names::head(&field)).is_some()
            }
            None => true,
        };
        if read_there {
            Err(Some(field))
        } else {
            Err(None)
        }
    }

    /// The render context: `values` at their dotted names, every shorter name of a field a
    /// namespace (`account` of `account.balance`) even when none of its fields has a value.
    fn context(&self, values: &[(&str, &Value)]) -> (JinjaValue, Arc<Track>) {
        let track = Arc::new(Track::new(&self.fields, values));
        let root = JinjaValue::from_object(Scope {
            path: String::new(),
            track: Arc::clone(&track),
        });
        (root, track)
    }

    /// The byte range of the first use of `field` inside a `{{ … }}` or `{% … %}` tag.
    pub fn span_of(&self, field: &str) -> Option<Span> {
        let src = self.source.as_str();
        let mut at = 0;
        while let Some(open) = src[at..].find('{').map(|i| at + i) {
            let close = match src.as_bytes().get(open + 1) {
                Some(b'{') => "}}",
                Some(b'%') => "%}",
                Some(b'#') => {
                    at = src[open..].find("#}").map_or(src.len(), |i| open + i + 2);
                    continue;
                }
                _ => {
                    at = open + 1;
                    continue;
                }
            };
            let end = src[open + 2..]
                .find(close)
                .map_or(src.len(), |i| open + 2 + i);
            if let Some(found) = find_name(&src[open + 2..end], field) {
                let start = open + 2 + found;
                return Some(Span::new(start, start + field.len()));
            }
            at = end;
        }
        None
    }

    /// Points `err` at the first use of `field`: its span, and its line and column when the
    /// template has a file of its own.
    pub fn at_field(&self, err: Error, field: &str) -> Error {
        match self.span_of(field) {
            Some(span) => self.at_span(err, span),
            None => err,
        }
    }

    /// The refusal of a field holding a secret, at its position in its source when that is
    /// known, else at its use in the template.
    pub(crate) fn refuse(&self, field: &Field) -> Error {
        let err = field.refusal();
        if err.location().is_some() {
            return err;
        }
        self.at_field(err.with_path(strata_core::FieldPath::root()), &field.name)
    }

    fn at_span(&self, mut err: Error, span: Span) -> Error {
        if let Some(file) = &self.file {
            let (line, column) = line_col(&self.source, span.start);
            err = err.at_location(Location {
                file: file.clone(),
                line,
                column,
            });
        }
        err.with_span(span)
    }

    /// A minijinja error as a strata error pointing into the template.
    fn jinja_error(&self, e: &minijinja::Error) -> Error {
        let err = strata_jinja::to_error(e, RESPONSE, self.file.as_deref(), 0)
            .map_message(|m| format!("response template: {m}"));
        match e.range() {
            Some(r) if r.start <= self.source.len() => {
                self.at_span(err, Span::new(r.start, r.end.min(self.source.len())))
            }
            _ => err,
        }
    }
}

/// What a trial render may look up: the values it has, the fields the template may read;
/// and what it did: the last field it looked up and did not find, and those lookups not
/// (yet) consumed by a test of definedness, most recent last.
#[derive(Debug)]
struct Track {
    values: BTreeMap<String, JinjaValue>,
    fields: BTreeSet<String>,
    prefixes: BTreeSet<String>,
    last: Mutex<Option<String>>,
    reads: Mutex<Vec<String>>,
}

/// How many unconsumed lookups a trial remembers (a loop may repeat one); older ones stay
/// reads.
const READS: usize = 64;

thread_local! {
    /// The track of the trial render under way on this thread.
    static TRIAL: std::cell::RefCell<Option<Arc<Track>>> = const { std::cell::RefCell::new(None) };
}

/// For the `defined` / `undefined` tests and the `default` filter of trial renders: when `v`
/// is undefined, the latest field lookup that found nothing was only tested, not read.
/// Returns whether `v` is undefined.
fn tested(v: &JinjaValue) -> bool {
    let undefined = v.is_undefined();
    if undefined {
        TRIAL.with(|t| {
            if let Some(track) = t.borrow().as_ref() {
                if let Ok(mut reads) = track.reads.lock() {
                    reads.pop();
                }
            }
        });
    }
    undefined
}

impl Track {
    fn new(fields: &[String], values: &[(&str, &Value)]) -> Track {
        let mut prefixes = BTreeSet::new();
        for name in fields
            .iter()
            .map(String::as_str)
            .chain(values.iter().map(|(n, _)| *n))
        {
            let mut at = 0;
            while let Some(dot) = name[at..].find('.').map(|i| at + i) {
                prefixes.insert(name[..dot].to_string());
                at = dot + 1;
            }
        }
        Track {
            values: values
                .iter()
                .map(|(n, v)| (n.to_string(), strata_jinja::value_of(v)))
                .collect(),
            fields: fields.iter().cloned().collect(),
            prefixes,
            last: Mutex::new(None),
            reads: Mutex::new(Vec::new()),
        }
    }
}

/// A namespace of field names (`account` of `account.balance`; the root is `""`): looking
/// up a field returns its value, a shorter name another namespace, a field without a value
/// is undefined and recorded.
#[derive(Debug)]
struct Scope {
    path: String,
    track: Arc<Track>,
}

impl Scope {
    fn name(&self, key: &str) -> String {
        if self.path.is_empty() {
            key.to_string()
        } else {
            format!("{}.{key}", self.path)
        }
    }
}

impl Object for Scope {
    fn repr(self: &Arc<Self>) -> ObjectRepr {
        ObjectRepr::Map
    }

    fn get_value(self: &Arc<Self>, key: &JinjaValue) -> Option<JinjaValue> {
        let name = self.name(key.as_str()?);
        let track = &self.track;
        if let Some(value) = track.values.get(&name) {
            return Some(value.clone());
        }
        if track.prefixes.contains(&name) {
            let track = Arc::clone(track);
            return Some(JinjaValue::from_object(Scope { path: name, track }));
        }
        if track.fields.contains(&name) {
            if let Ok(mut reads) = track.reads.lock() {
                if reads.len() >= READS && reads.iter().filter(|r| **r == name).count() > 1 {
                    // A loop repeating the same unconsumed lookup: one is enough to remember.
                    if let Some(at) = reads.iter().position(|r| *r == name) {
                        reads.remove(at);
                    }
                }
                reads.push(name.clone());
            }
            if let Ok(mut last) = track.last.lock() {
                *last = Some(name);
            }
        }
        None
    }

    fn enumerate(self: &Arc<Self>) -> Enumerator {
        let start = if self.path.is_empty() {
            String::new()
        } else {
            format!("{}.", self.path)
        };
        let keys: BTreeSet<&str> = self
            .track
            .values
            .keys()
            .filter_map(|n| n.strip_prefix(start.as_str()))
            .map(|rest| rest.split('.').next().unwrap_or(rest))
            .collect();
        Enumerator::Values(keys.into_iter().map(JinjaValue::from).collect())
    }
}

fn is_name_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

/// The offset of `name` in `tag` as a whole name: not part of a longer name or attribute.
fn find_name(tag: &str, name: &str) -> Option<usize> {
    let bytes = tag.as_bytes();
    let mut from = 0;
    while let Some(i) = tag[from..].find(name).map(|i| from + i) {
        let before = i.checked_sub(1).map(|k| bytes[k]);
        let after = bytes.get(i + name.len()).copied();
        let starts = before.map_or(true, |b| !is_name_byte(b) && b != b'.');
        let ends = after.map_or(true, |b| !is_name_byte(b));
        if starts && ends {
            return Some(i);
        }
        from = i + 1;
    }
    None
}

/// The 1-based line and column of byte `offset` of `text`.
pub(crate) fn line_col(text: &str, offset: usize) -> (usize, usize) {
    let before = &text[..floor_char(text, offset)];
    let line = 1 + before.matches('\n').count();
    let start = before.rfind('\n').map_or(0, |i| i + 1);
    (line, 1 + before[start..].chars().count())
}

fn floor_char(text: &str, mut offset: usize) -> usize {
    offset = offset.min(text.len());
    while !text.is_char_boundary(offset) {
        offset -= 1;
    }
    offset
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::FieldSource;

    fn compile(src: &str) -> Result<Response, Error> {
        Response::compile(src, Some("r.j2"), JinjaLimits::default())
    }

    #[test]
    fn fields_are_found_through_conditions_and_loops_in_order_of_use() {
        let r = compile(
            "Your balance is {{account.balance}}.\n{% if account.overdraft %}\nWARNING: {{account.overdraft_amount}}.\n{% endif %}\
             {% for t in transactions %}- {{t.date}}{% endfor %}{# {{ ignored }} #}",
        )
        .unwrap();
        assert_eq!(
            r.fields(),
            [
                "account.balance",
                "account.overdraft",
                "account.overdraft_amount",
                "transactions"
            ]
        );
        assert_eq!(r.span_of("transactions"), Some(Span::new(126, 138)));
        assert_eq!(r.span_of("account.overdraft"), Some(Span::new(43, 60)));
    }

    #[test]
    fn names_are_matched_whole() {
        assert_eq!(find_name(" x.ab ab ", "ab"), Some(6));
        assert_eq!(find_name(" abc ", "ab"), None);
        assert_eq!(find_name("ab", "ab"), Some(0));
    }

    #[test]
    fn syntax_errors_name_the_file_line_and_column() {
        let e = compile("Hello\n  {{ account. }}").unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Syntax);
        assert_eq!(
            e.message(),
            "response template: unexpected end of variable block, expected identifier or integer"
        );
        let loc = e.location().unwrap();
        assert_eq!((loc.file.as_str(), loc.line, loc.column), ("r.j2", 2, 15));
    }

    #[test]
    fn a_field_named_with_a_keyword_is_refused_where_it_is_used() {
        let e = compile("a\n{{ account.if }}").unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Syntax);
        assert_eq!(
            e.message(),
            "`account.if`: `if` is a Jinja keyword, not a field name"
        );
        assert_eq!(e.span(), Some(Span::new(5, 15)));
        assert_eq!(e.location().unwrap().line, 2);
        let e = Response::compile("{{ in }}", None, JinjaLimits::default()).unwrap_err();
        assert_eq!(e.message(), "`in` is a Jinja keyword, not a field name");
        assert_eq!(e.location(), None);
    }

    #[test]
    fn dotted_names_become_nested_values() {
        let r =
            compile("{{ a }}|{{ a.b }}|{{ a.c.d }}|{{ e }}|{% for k in a %}{{ k }};{% endfor %}")
                .unwrap();
        let fields = [
            Field::new("a.b", json!(1), FieldSource::Std),
            Field::new("a.c.d", json!([2]), FieldSource::Std),
            Field::new("e", json!(null), FieldSource::Std),
        ];
        assert_eq!(
            r.render(&fields).unwrap(),
            r#"{"b":1,"c":{"d":[2]}}|1|[2]||b;c;"#
        );
    }

    #[test]
    fn lines_and_columns_count_characters() {
        assert_eq!(line_col("ab\ncé{{", 6), (2, 3));
        assert_eq!(line_col("ab\ncé{{", 5), (2, 2));
        assert_eq!(line_col("x", 99), (1, 2));
    }
}
