//! The reference front-ends: `$stepN.path` (a whole string), `{$stepN.path}` (embedded),
//! `{{id.field.path}}` (anywhere) and `{{PLACEHOLDER_name}}` (a user value), each parsed once
//! into the shared path type, plus the escapes `$$step` and `{{{{`.

use memchr::memchr2;
use strata_core::walk::{Path, Seg};
use strata_core::{Error, ErrorKind, Span};
use strata_tools::RECORD_FIELDS;

use crate::PLAN;

/// How a reference was written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Form {
    /// `$stepN` / `$stepN.path`: the whole string.
    Dollar,
    /// `{$stepN}` / `{$stepN.path}`: embedded in text.
    Embedded,
    /// `{{id.field.path}}`.
    Braces,
    /// `{{PLACEHOLDER_name}}`.
    Placeholder,
}

/// What a reference reads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    /// The record of step `id`, walked along `path` (its first step is the record field:
    /// `$stepN.x` reads `result.x`).
    Step {
        /// The step id.
        id: String,
        /// The path into the step record, the field first.
        path: Path,
    },
    /// The user-provided value `name`.
    Value(String),
}

/// One reference in an authored string.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ref {
    /// What it reads.
    pub target: Target,
    /// How it was written.
    pub form: Form,
    /// Where it stands in the string.
    pub span: Span,
}

/// A piece of a string with embedded references.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Piece {
    /// Literal text (escapes already applied).
    Lit(String),
    /// A reference, rendered as text.
    Ref(Ref),
}

/// An authored string, parsed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Parsed {
    /// No reference: the text with escapes applied.
    Plain(String),
    /// Exactly one reference and nothing around it: the value keeps its type.
    Whole(Ref),
    /// Text with references.
    Parts(Vec<Piece>),
}

/// True for a step id: `[A-Za-z_][A-Za-z0-9_-]*`.
pub fn is_step_id(s: &str) -> bool {
    id_len(s.as_bytes()) == s.len() && !s.is_empty()
}

/// The length of the step id at the start of `b` (0 when there is none).
fn id_len(b: &[u8]) -> usize {
    match b.first() {
        Some(c) if c.is_ascii_alphabetic() || *c == b'_' => {
            1 + b[1..]
                .iter()
                .take_while(|c| c.is_ascii_alphanumeric() || **c == b'_' || **c == b'-')
                .count()
        }
        _ => 0,
    }
}

fn digits(b: &[u8]) -> usize {
    b.iter().take_while(|c| c.is_ascii_digit()).count()
}

fn syntax(message: impl Into<String>, span: Span) -> Error {
    Error::new(PLAN, ErrorKind::Syntax, message).with_span(span)
}

/// The error for a string that starts with `$step` and is not exactly one reference.
fn not_whole(text: &str) -> Error {
    syntax(
        "a string starting with `$step` must be exactly one reference (`$stepN` or `$stepN.path`)",
        Span::new(0, text.len()),
    )
    .with_hint("embed with `{$stepN.path}`; write `$$step` for the literal text `$step`")
}

/// `$stepN.path` as the whole string.
fn dollar(text: &str) -> Result<Ref, Error> {
    let b = text.as_bytes();
    let n = digits(&b[5..]);
    if n == 0 {
        return Err(not_whole(text));
    }
    let id = &text[1..5 + n];
    let rest = Path::parse_steps(&text[5 + n..]).map_err(|_| not_whole(text))?;
    Ok(step_ref(
        id,
        "result",
        rest,
        Form::Dollar,
        Span::new(0, text.len()),
    ))
}

fn step_ref(id: &str, field: &str, rest: Vec<Seg>, form: Form, span: Span) -> Ref {
    let mut segs = Vec::with_capacity(rest.len() + 1);
    segs.push(Seg::Key(field.to_string()));
    segs.extend(rest);
    Ref {
        target: Target::Step {
            id: id.to_string(),
            path: Path::new(segs),
        },
        form,
        span,
    }
}

/// The end of a path that starts at `i` and is closed by `}`: the index of that `}`,
/// skipping quoted keys.
fn path_end(b: &[u8], mut i: usize) -> Option<usize> {
    let mut quote = None;
    while i < b.len() {
        match (quote, b[i]) {
            (None, b'}') => return Some(i),
            (None, q @ (b'"' | b'\'')) => quote = Some(q),
            (Some(_), b'\\') => i += 1,
            (Some(q), c) if c == q => quote = None,
            _ => {}
        }
        i += 1;
    }
    None
}

/// `{$stepN.path}` at `at` (which starts with `{$step`): the reference and the index after
/// it, or `None` when no digits follow (then it is literal text).
fn embedded(text: &str, at: usize) -> Option<Result<(Ref, usize), Error>> {
    let b = text.as_bytes();
    let n = digits(&b[at + 6..]);
    if n == 0 {
        return None;
    }
    let id = &text[at + 2..at + 6 + n];
    let Some(close) = path_end(b, at + 6 + n) else {
        return Some(Err(syntax(
            format!("unclosed reference `{{${id}`"),
            Span::new(at, text.len()),
        )
        .with_hint("close it with `}`: `{$stepN.path}`")));
    };
    let span = Span::new(at, close + 1);
    Some(match Path::parse_steps(&text[at + 6 + n..close]) {
        Ok(rest) => Ok((step_ref(id, "result", rest, Form::Embedded, span), close + 1)),
        Err(e) => Err(syntax(
            format!("malformed reference `{}`: {}", &text[at..=close], e.message),
            span,
        )
        .with_hint("a reference is `{$stepN}` or `{$stepN.path}`, the path as `.key`, `[n]` or `[\"key\"]`")),
    })
}

/// `{{…}}` at `at`: a step or user-value reference and the index after it; `None` when the
/// inside is not `id.field…` nor `PLACEHOLDER_name` (literal text).
fn braces(text: &str, at: usize) -> Option<Result<(Ref, usize), Error>> {
    let close = at + 2 + text[at + 2..].find("}}")?;
    let end = close + 2;
    let span = Span::new(at, end);
    let inner = text[at + 2..close].trim_matches(|c: char| c.is_ascii_whitespace());
    if let Some(name) = inner.strip_prefix("PLACEHOLDER_") {
        let word = !name.is_empty() && name.bytes().all(|c| c.is_ascii_alphanumeric() || c == b'_');
        return word.then(|| {
            Ok((
                Ref {
                    target: Target::Value(name.to_string()),
                    form: Form::Placeholder,
                    span,
                },
                end,
            ))
        });
    }
    let n = id_len(inner.as_bytes());
    if n == 0 || inner.as_bytes().get(n) != Some(&b'.') {
        return None;
    }
    let id = &inner[..n];
    let segs = match Path::parse_steps(&inner[n..]) {
        Ok(segs) => segs,
        Err(e) => {
            return Some(Err(syntax(
                format!("malformed reference `{}`: {}", &text[at..end], e.message),
                span,
            )
            .with_hint(
                "a reference is `{{id.field.path}}`, the path as `.key`, `[n]` or `[\"key\"]`",
            )))
        }
    };
    let field = match segs.first() {
        Some(Seg::Key(k)) if RECORD_FIELDS.contains(&k.as_str()) => k.clone(),
        first => return Some(Err(unknown_field(id, first, &segs, span))),
    };
    let rest = segs[1..].to_vec();
    Some(Ok((step_ref(id, &field, rest, Form::Braces, span), end)))
}

/// `{{a.email}}`: `email` is not a field of a step record.
fn unknown_field(id: &str, first: Option<&Seg>, segs: &[Seg], span: Span) -> Error {
    let written = match first {
        Some(Seg::Key(k)) => k.clone(),
        Some(Seg::Index(i)) => i.to_string(),
        None => String::new(),
    };
    // A misspelt field (`reslt`) is replaced; any other name is looked up in the result.
    let fixed = match first {
        Some(Seg::Key(k)) => strata_core::did_you_mean(k, RECORD_FIELDS),
        _ => None,
    };
    let mut suggestion = vec![Seg::Key("result".into())];
    suggestion.extend_from_slice(if fixed.is_some() { &segs[1..] } else { segs });
    let mut shown = format!("{{{{{id}");
    let _ = strata_core::walk::write_segs(&mut shown, &suggestion, false);
    shown.push_str("}}");
    Error::new(
        PLAN,
        ErrorKind::UnknownField,
        format!(
            "`{written}` is not a field of step `{id}`'s record (id, status, result, error, run)"
        ),
    )
    .with_span(span)
    .with_hint(format!("did you mean `{shown}`?"))
}

/// The `{{…}}` runs of `text` that stay literal because their inside is neither
/// `id.field…` nor `PLACEHOLDER_name` (for `strata check`'s warning); `{{{{` escapes are
/// skipped.
pub fn literal_braces(text: &str) -> Vec<Span> {
    let mut out = Vec::new();
    let mut i = 0;
    while let Some(k) = text[i..].find("{{") {
        let at = i + k;
        if text[at..].starts_with("{{{{") {
            i = at + 4;
            continue;
        }
        match (braces(text, at), text[at + 2..].find("}}")) {
            (None, Some(close)) => {
                let end = at + 2 + close + 2;
                out.push(Span::new(at, end));
                i = end;
            }
            (Some(Ok((_, end))), _) => i = end,
            _ => i = at + 2,
        }
    }
    out
}

/// The `$id.path` runs of `text` (`$first.greeting`) whose `id` is one of `ids` but not of
/// the `$stepN` form: `$` names a step only as `$stepN`, so they stay literal text (for
/// `strata check`'s warning). Each is its span and the index of its id in `ids`; `$$`
/// escapes are skipped.
pub fn dollar_ids(text: &str, ids: &[&str]) -> Vec<(Span, usize)> {
    let b = text.as_bytes();
    let word = |c: u8| c.is_ascii_alphanumeric() || c == b'_' || c == b'-';
    let mut out = Vec::new();
    let mut i = 0;
    while let Some(k) = memchr::memchr(b'$', &b[i..]) {
        let at = i + k;
        if b.get(at + 1) == Some(&b'$') {
            i = at + 2;
            continue;
        }
        let id_end = at + 1 + b[at + 1..].iter().take_while(|&&c| word(c)).count();
        let id = &text[at + 1..id_end];
        let numbered = id
            .strip_prefix("step")
            .is_some_and(|n| digits(n.as_bytes()) == n.len() && !n.is_empty());
        match ids.iter().position(|s| *s == id) {
            Some(n) if !numbered => {
                let mut end = id_end;
                while b.get(end) == Some(&b'.') && b.get(end + 1).is_some_and(|&c| word(c)) {
                    end += 1 + b[end + 1..].iter().take_while(|&&c| word(c)).count();
                }
                out.push((Span::new(at, end), n));
                i = end;
            }
            _ => i = id_end.max(at + 1),
        }
    }
    out
}

/// Parses one authored string of a step's arguments.
pub fn parse(text: &str) -> Result<Parsed, Error> {
    let b = text.as_bytes();
    if memchr2(b'$', b'{', b).is_none() {
        return Ok(Parsed::Plain(text.to_string()));
    }
    if text.starts_with("$step") {
        return dollar(text).map(Parsed::Whole);
    }
    let mut pieces = Vec::new();
    let mut lit = String::new();
    let mut i = 0;
    while i < b.len() {
        let Some(k) = memchr2(b'$', b'{', &b[i..]) else {
            lit.push_str(&text[i..]);
            break;
        };
        lit.push_str(&text[i..i + k]);
        i += k;
        let rest = &text[i..];
        let found = if rest.starts_with("$$step") {
            lit.push_str("$step");
            i += 6;
            continue;
        } else if rest.starts_with("{{{{") {
            lit.push_str("{{");
            i += 4;
            continue;
        } else if rest.starts_with("{{") {
            braces(text, i)
        } else if rest.starts_with("{$step") {
            embedded(text, i)
        } else {
            None
        };
        match found {
            Some(Ok((r, end))) => {
                if !lit.is_empty() {
                    pieces.push(Piece::Lit(std::mem::take(&mut lit)));
                }
                pieces.push(Piece::Ref(r));
                i = end;
            }
            Some(Err(e)) => return Err(e),
            None => {
                let n = if rest.starts_with("{{") { 2 } else { 1 };
                lit.push_str(&rest[..n]);
                i += n;
            }
        }
    }
    if !lit.is_empty() {
        pieces.push(Piece::Lit(lit));
    }
    Ok(match pieces.len() {
        0 => Parsed::Plain(String::new()),
        1 => match pieces.pop() {
            Some(Piece::Ref(r)) => Parsed::Whole(r),
            Some(Piece::Lit(s)) => Parsed::Plain(s),
            None => Parsed::Plain(String::new()),
        },
        _ => Parsed::Parts(pieces),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn step(id: &str, path: &str, form: Form, span: (usize, usize)) -> Ref {
        let mut segs = if path.is_empty() {
            Vec::new()
        } else {
            Path::parse(path).unwrap().segs
        };
        if form == Form::Dollar || form == Form::Embedded {
            segs.insert(0, Seg::Key("result".into()));
        }
        Ref {
            target: Target::Step {
                id: id.into(),
                path: Path::new(segs),
            },
            form,
            span: Span::new(span.0, span.1),
        }
    }

    fn whole(text: &str) -> Ref {
        match parse(text).unwrap() {
            Parsed::Whole(r) => r,
            other => panic!("{text}: {other:?}"),
        }
    }

    #[test]
    fn a_dollar_reference_is_the_whole_string() {
        assert_eq!(whole("$step1"), step("step1", "", Form::Dollar, (0, 6)));
        let r = whole("$step12.items[0][\"a b\"].-1");
        assert_eq!(
            r.target,
            Target::Step {
                id: "step12".into(),
                path: Path::new(vec![
                    Seg::Key("result".into()),
                    Seg::Key("items".into()),
                    Seg::Index(0),
                    Seg::Key("a b".into()),
                    Seg::Index(-1),
                ]),
            }
        );
    }

    #[test]
    fn a_string_starting_with_dollar_step_must_be_one_reference() {
        for bad in [
            "$step1 ",
            "$step1.count items",
            "$step",
            "$steps",
            "$step1.",
            "$step1..x",
            "$step1[x]",
            "$step1{$step2}",
        ] {
            let e = parse(bad).unwrap_err();
            assert_eq!(e.kind(), ErrorKind::Syntax, "{bad}");
            assert_eq!(
                e.message(),
                "a string starting with `$step` must be exactly one reference (`$stepN` or `$stepN.path`)"
            );
            assert_eq!(
                e.hint(),
                Some("embed with `{$stepN.path}`; write `$$step` for the literal text `$step`")
            );
            assert_eq!(e.span(), Some(Span::new(0, bad.len())));
        }
    }

    #[test]
    fn embedded_references_are_pieces_and_alone_keep_their_type() {
        assert_eq!(
            parse("Found {$step1.total} groups, {$step1.mb} MB").unwrap(),
            Parsed::Parts(vec![
                Piece::Lit("Found ".into()),
                Piece::Ref(step("step1", "total", Form::Embedded, (6, 20))),
                Piece::Lit(" groups, ".into()),
                Piece::Ref(step("step1", "mb", Form::Embedded, (29, 40))),
                Piece::Lit(" MB".into()),
            ])
        );
        assert_eq!(whole("{$step2}"), step("step2", "", Form::Embedded, (0, 8)));
        assert_eq!(
            whole("{$step2[\"a}b\"]}").target,
            Target::Step {
                id: "step2".into(),
                path: Path::new(vec![Seg::Key("result".into()), Seg::Key("a}b".into())]),
            }
        );
        // Space around: not the whole string.
        assert!(matches!(parse(" {$step2}").unwrap(), Parsed::Parts(_)));
    }

    #[test]
    fn broken_embedded_references_are_errors_with_spans() {
        let e = parse("x {$step1.} y").unwrap_err();
        assert_eq!(
            e.message(),
            "malformed reference `{$step1.}`: expected a key or an index after `.`"
        );
        assert_eq!(e.span(), Some(Span::new(2, 11)));
        let e = parse("x {$step1.count").unwrap_err();
        assert_eq!(e.message(), "unclosed reference `{$step1`");
        assert_eq!(e.span(), Some(Span::new(2, 15)));
        // `{$steps}` and `{$x}` are not references.
        assert_eq!(
            parse("{$steps} {$x}").unwrap(),
            Parsed::Plain("{$steps} {$x}".into())
        );
    }

    #[test]
    fn double_brace_references_walk_the_record_with_spaces_allowed() {
        assert_eq!(
            whole("{{find_john.result.data[0].email}}"),
            step("find_john", "result.data[0].email", Form::Braces, (0, 34))
        );
        assert_eq!(
            whole("{{ a-b.status }}"),
            step("a-b", "status", Form::Braces, (0, 16))
        );
        assert_eq!(
            parse("Hi {{ x.result.name }}!").unwrap(),
            Parsed::Parts(vec![
                Piece::Lit("Hi ".into()),
                Piece::Ref(step("x", "result.name", Form::Braces, (3, 22))),
                Piece::Lit("!".into()),
            ])
        );
    }

    #[test]
    fn double_braces_that_are_not_id_dot_field_stay_literal() {
        for text in [
            "{{name}}",
            "{{ a b }}",
            "{{}}",
            "{{ 1.x }}",
            "{{ PLACEHOLDER_ }}",
            "{{a.x",
        ] {
            assert_eq!(parse(text).unwrap(), Parsed::Plain(text.into()), "{text}");
        }
    }

    #[test]
    fn record_fields_are_checked_with_a_hint() {
        let e = parse("{{a.email}}").unwrap_err();
        assert_eq!(e.kind(), ErrorKind::UnknownField);
        assert_eq!(
            e.message(),
            "`email` is not a field of step `a`'s record (id, status, result, error, run)"
        );
        assert_eq!(e.hint(), Some("did you mean `{{a.result.email}}`?"));
        let e = parse("to {{a.reslt.data[0]}}").unwrap_err();
        assert_eq!(e.hint(), Some("did you mean `{{a.result.data[0]}}`?"));
        assert_eq!(e.span(), Some(Span::new(3, 22)));
        let e = parse("{{a.result.}}").unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Syntax);
        assert_eq!(
            e.message(),
            "malformed reference `{{a.result.}}`: expected a key or an index after `.`"
        );
    }

    #[test]
    fn placeholders_name_user_values() {
        assert_eq!(
            whole("{{PLACEHOLDER_meeting_title}}"),
            Ref {
                target: Target::Value("meeting_title".into()),
                form: Form::Placeholder,
                span: Span::new(0, 29),
            }
        );
        assert!(matches!(
            parse("Re: {{ PLACEHOLDER_x }}").unwrap(),
            Parsed::Parts(p) if p.len() == 2
        ));
    }

    #[test]
    fn escapes_yield_literal_text() {
        assert_eq!(
            parse("$$step1.count").unwrap(),
            Parsed::Plain("$step1.count".into())
        );
        assert_eq!(
            parse("{{{{a.result.x}} and $$step2 and $5").unwrap(),
            Parsed::Plain("{{a.result.x}} and $step2 and $5".into())
        );
        assert_eq!(
            parse("{$$step1.x}").unwrap(),
            Parsed::Plain("{$step1.x}".into())
        );
        assert_eq!(parse("plain").unwrap(), Parsed::Plain("plain".into()));
    }

    #[test]
    fn literal_double_braces_are_found_for_warnings() {
        assert_eq!(
            literal_braces("{{name}} {{a.result}} {{{{x}} {{ PLACEHOLDER_v }} {{ b }}"),
            [Span::new(0, 8), Span::new(50, 57)]
        );
    }

    #[test]
    fn ids_follow_the_documented_pattern() {
        assert!(is_step_id("find_john"));
        assert!(is_step_id("a-1"));
        assert!(is_step_id("_x"));
        assert!(!is_step_id("1a"));
        assert!(!is_step_id(""));
        assert!(!is_step_id("a.b"));
    }
}
