//! A canned response: an authored Jinja template compiled once, its fields found statically,
//! rendered with field values that are data.

use minijinja::Environment;
use serde::ser::{Serialize, SerializeMap, Serializer};
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
        response.env = env;
        response.fields = fields;
        Ok(response)
    }

    /// The fields the template reads, by full dotted name, in the order they first appear.
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
        strata_jinja::render(&template, context(fields), self.limits)
            .map_err(|e| self.jinja_error(&e))
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
        let mut err = field.refusal();
        if err.location.is_some() {
            return err;
        }
        err.path = strata_core::FieldPath::root();
        self.at_field(err, &field.name)
    }

    fn at_span(&self, mut err: Error, span: Span) -> Error {
        if let Some(file) = &self.file {
            let (line, column) = line_col(&self.source, span.start);
            err.location = Some(Location {
                file: file.clone(),
                line,
                column,
            });
        }
        err.with_span(span)
    }

    /// A minijinja error as a strata error pointing into the template.
    fn jinja_error(&self, e: &minijinja::Error) -> Error {
        let mut err = strata_jinja::to_error(e, RESPONSE, self.file.as_deref(), 0);
        err.message = format!("response template: {}", err.message);
        match e.range() {
            Some(r) if r.start <= self.source.len() => {
                self.at_span(err, Span::new(r.start, r.end.min(self.source.len())))
            }
            _ => err,
        }
    }
}

/// The render context: every field's value at its dotted name (`account.balance` →
/// `{"account": {"balance": …}}`), borrowed from the fields (minijinja converts it once).
#[derive(Debug)]
enum Node<'a> {
    Leaf(&'a Value),
    Map(Vec<(&'a str, Node<'a>)>),
}

impl<'a> Node<'a> {
    fn insert(&mut self, mut parts: std::str::Split<'a, char>, value: &'a Value) {
        let Some(part) = parts.next() else {
            *self = Node::Leaf(value);
            return;
        };
        if !matches!(self, Node::Map(_)) {
            *self = Node::Map(Vec::new());
        }
        let Node::Map(entries) = self else { return };
        let at = match entries.iter().position(|(k, _)| *k == part) {
            Some(at) => at,
            None => {
                entries.push((part, Node::Map(Vec::new())));
                entries.len() - 1
            }
        };
        entries[at].1.insert(parts, value);
    }
}

impl Serialize for Node<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Node::Leaf(v) => v.serialize(s),
            Node::Map(entries) => {
                let mut map = s.serialize_map(Some(entries.len()))?;
                for (k, v) in entries {
                    map.serialize_entry(k, v)?;
                }
                map.end()
            }
        }
    }
}

fn context(fields: &[Field]) -> Node<'_> {
    let mut root = Node::Map(Vec::new());
    for field in fields {
        root.insert(field.name.split('.'), &field.value);
    }
    root
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
        assert_eq!(e.kind, ErrorKind::Syntax);
        assert_eq!(
            e.message,
            "response template: unexpected end of variable block, expected identifier or integer"
        );
        let loc = e.location.clone().unwrap();
        assert_eq!((loc.file.as_str(), loc.line, loc.column), ("r.j2", 2, 15));
    }

    #[test]
    fn a_field_named_with_a_keyword_is_refused_where_it_is_used() {
        let e = compile("a\n{{ account.if }}").unwrap_err();
        assert_eq!(e.kind, ErrorKind::Syntax);
        assert_eq!(
            e.message,
            "`account.if`: `if` is a Jinja keyword, not a field name"
        );
        assert_eq!(e.span, Some(Span::new(5, 15)));
        assert_eq!(e.location.clone().unwrap().line, 2);
        let e = Response::compile("{{ in }}", None, JinjaLimits::default()).unwrap_err();
        assert_eq!(e.message, "`in` is a Jinja keyword, not a field name");
        assert_eq!(e.location, None);
    }

    #[test]
    fn dotted_names_become_nested_values() {
        let fields = [
            Field::new("a.b", json!(1), FieldSource::Std),
            Field::new("a.c.d", json!([2]), FieldSource::Std),
            Field::new("e", json!(null), FieldSource::Std),
        ];
        assert_eq!(
            serde_json::to_value(context(&fields)).unwrap(),
            json!({"a": {"b": 1, "c": {"d": [2]}}, "e": null})
        );
    }

    #[test]
    fn lines_and_columns_count_characters() {
        assert_eq!(line_col("ab\ncé{{", 6), (2, 3));
        assert_eq!(line_col("ab\ncé{{", 5), (2, 2));
        assert_eq!(line_col("x", 99), (1, 2));
    }
}
