//! Layer E over plain text, streamed: `strata render --layer env --text` reads text and
//! writes text, as GNU `envsubst` does, holding one line at a time.
//!
//! Each line is rendered as a string of a document is by the env layer alone (see
//! `strata-env`: `${NAME}`, the Compose operators, `$${` for a literal `${`); text of other
//! layers' syntax, `$NAME` without braces and names that are not `[A-Z_][A-Z0-9_]*` stay as
//! written. A placeholder ends on its line. Lines are found with `memchr`, and a line whose
//! placeholders are all plain `${NAME}` is written without compiling anything; a line with an
//! operator goes through the compiled template, so both give the same text.
//!
//! Memory is bounded by the longest line, not the input: the document limit
//! (`limits.document_bytes`) applies to each line read, and the per-string output limit
//! (`limits.output_bytes_per_string`) to each line written. The placeholder limits, which
//! bound what a compiled document holds, do not apply: nothing is held past its line.
//!
//! An error (`${X:?message}` with `X` unset, an unclosed `${X:-…`, a line over a limit) stops
//! the render: what was written before that line stays written, and the error names the line
//! (its location: line and column).

use std::io::{self, BufRead, Write};

use serde_json::Value;
use strata_core::syntax::{env_name_len, env_operator_len};
use strata_core::{
    EnvMap, EnvSource, Error, ErrorKind, Layer, Limits, Location, RenderOptions, Scope, Span,
    Undefined, Warning,
};

use crate::{Chain, Template};

/// Why a streamed render stopped.
#[derive(Debug)]
pub enum TextError {
    /// Reading the input or writing the output failed.
    Io(io::Error),
    /// A line could not be rendered: the error, located at its line (and column).
    Render(Error),
}

impl From<io::Error> for TextError {
    fn from(e: io::Error) -> TextError {
        TextError::Io(e)
    }
}

/// What a streamed render did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TextStats {
    /// Lines read.
    pub lines: usize,
    /// Placeholders substituted (or found missing).
    pub placeholders: usize,
    /// Warnings (missing variables outside strict mode), all of them, whether passed on or
    /// not.
    pub warnings: usize,
}

/// Bytes read from the input at a time.
const READ_BUFFER: usize = 64 << 10;

/// Renders `input` through layer E into `output`, one line at a time, `name` naming the
/// input in errors. Each warning goes to `warn` with its 1-based line and column. Stops at
/// the first error; the lines before it are written (and `output` flushed).
pub fn render_text(
    input: impl io::Read,
    output: impl Write,
    name: &str,
    env: &EnvMap,
    limits: &Limits,
    options: &RenderOptions,
    mut warn: impl FnMut(usize, usize, Warning),
) -> Result<TextStats, TextError> {
    let mut input = io::BufReader::with_capacity(READ_BUFFER, input);
    let mut output = io::BufWriter::with_capacity(READ_BUFFER, output);
    let mut line = Vec::new();
    let mut out = Vec::new();
    let mut stats = TextStats::default();
    let chain = Chain::of(&[Layer::ENV]);
    loop {
        line.clear();
        let Some(fits) = read_line(&mut input, limits.document_bytes, &mut line)? else {
            break;
        };
        stats.lines += 1;
        let at = stats.lines;
        let located = |e: Error| {
            let column = e.span().map_or(1, |s| column_of(&line, s.start));
            TextError::Render(locate(e, name, at, column))
        };
        if !fits {
            let err = Error::new(
                Layer::REQUEST,
                ErrorKind::Limit,
                format!(
                    "line {at} exceeds the limit of {} bytes",
                    limits.document_bytes
                ),
            )
            .with_hint(strata_core::raise_hint("document_bytes"));
            output.flush()?;
            return Err(TextError::Render(locate(err, name, at, 1)));
        }
        let (body, end) = match line.strip_suffix(b"\n") {
            Some(body) => (body, &b"\n"[..]),
            None => (&line[..], &b""[..]),
        };
        out.clear();
        let rendered = match plain_line(body, env, options, &mut out, &mut stats) {
            Ok(Some(warnings)) => Ok(warnings),
            Ok(None) => {
                out.clear();
                compiled_line(body, &chain, env, limits, options, &mut out, &mut stats)
            }
            Err(e) => Err(e),
        };
        let warnings = match rendered {
            Ok(warnings) => warnings,
            Err(e) => {
                output.flush()?;
                return Err(located(e));
            }
        };
        if out.len() > limits.output_bytes_per_string {
            let err = Error::new(
                Layer::ENV,
                ErrorKind::Limit,
                format!(
                    "line {at} renders to more than {} bytes",
                    limits.output_bytes_per_string
                ),
            )
            .with_hint(strata_core::raise_hint("output_bytes_per_string"));
            output.flush()?;
            return Err(TextError::Render(locate(err, name, at, 1)));
        }
        for w in warnings {
            stats.warnings += 1;
            let column = w.span.map_or(1, |s| column_of(&line, s.start));
            warn(at, column, w);
        }
        output.write_all(&out)?;
        output.write_all(end)?;
    }
    output.flush()?;
    Ok(stats)
}

/// `error` located at `line` and `column` of `name` (which take the place of its span: the
/// string it was about is the line).
fn locate(error: Error, name: &str, line: usize, column: usize) -> Error {
    error.with_span(None).at_location(Location {
        file: name.to_string(),
        line,
        column,
    })
}

/// The 1-based column, in characters, of byte `at` of `line`.
fn column_of(line: &[u8], at: usize) -> usize {
    let head = &line[..at.min(line.len())];
    1 + String::from_utf8_lossy(head).chars().count()
}

/// Reads the next line of `input`, its `\n` included, into `line`, never holding more than
/// `cap` bytes of it: `None` at the end of the input, `Some(false)` when the line was longer
/// (the rest of it is not read).
fn read_line(input: &mut impl BufRead, cap: usize, line: &mut Vec<u8>) -> io::Result<Option<bool>> {
    let mut any = false;
    loop {
        let buf = match input.fill_buf() {
            Ok(buf) => buf,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if buf.is_empty() {
            return Ok(any.then_some(true));
        }
        any = true;
        let (take, done) = match memchr::memchr(b'\n', buf) {
            Some(i) => (i + 1, true),
            None => (buf.len(), false),
        };
        if line.len() + take > cap.saturating_add(1) {
            return Ok(Some(false));
        }
        line.extend_from_slice(&buf[..take]);
        input.consume(take);
        if done {
            return Ok(Some(true));
        }
    }
}

/// Renders a line whose placeholders are all plain `${NAME}` into `out`, with the warnings
/// for missing variables; `None` (and `out` to be discarded) when it holds an operator or an
/// unclosed placeholder, which only the compiled template renders (or reports).
fn plain_line(
    body: &[u8],
    env: &EnvMap,
    options: &RenderOptions,
    out: &mut Vec<u8>,
    stats: &mut TextStats,
) -> Result<Option<Vec<Warning>>, Error> {
    let mut warnings = Vec::new();
    let mut copied = 0;
    let mut from = 0;
    while let Some(i) = memchr::memchr(b'$', &body[from..]).map(|i| from + i) {
        let rest = &body[i..];
        if rest.starts_with(b"$${") {
            out.extend_from_slice(&body[copied..i]);
            out.extend_from_slice(b"${");
            copied = i + 3;
            from = i + 3;
            continue;
        }
        from = i + 1;
        if !rest.starts_with(b"${") {
            continue;
        }
        let n = env_name_len(&rest[2..]);
        if n == 0 {
            continue;
        }
        match rest.get(2 + n) {
            Some(b'}') => {}
            // The end of the line (unclosed) or an operator: the compiled template decides.
            None => return Ok(None),
            Some(_) if env_operator_len(&rest[2 + n..]).is_some() => return Ok(None),
            Some(_) => continue,
        }
        // A name is ASCII: this slice is UTF-8.
        let name = std::str::from_utf8(&rest[2..2 + n]).unwrap_or_default();
        stats.placeholders += 1;
        out.extend_from_slice(&body[copied..i]);
        copied = i + 3 + n;
        from = copied;
        match env.get(name) {
            Some(var) => out.extend_from_slice(var.value.as_bytes()),
            None => {
                let message = if env.not_utf8(name) {
                    format!("environment variable `{name}` is set but its value is not valid UTF-8")
                } else {
                    format!("environment variable `{name}` is not set")
                };
                let span = Span::new(i, copied);
                match options.undefined {
                    Undefined::Strict => {
                        return Err(Error::new(Layer::ENV, ErrorKind::Undefined, message)
                            .with_span(span)
                            .with_hint("strict mode turns missing values into errors"))
                    }
                    Undefined::Lenient => {}
                    Undefined::Warn => warnings.push(Warning {
                        layer: Layer::ENV,
                        message,
                        path: strata_core::FieldPath::root(),
                        span: Some(span),
                    }),
                }
            }
        }
    }
    out.extend_from_slice(&body[copied..]);
    Ok(Some(warnings))
}

/// Renders a line through the compiled env layer (operators, nested words, and the errors
/// the document render gives) into `out`.
fn compiled_line(
    body: &[u8],
    chain: &Chain,
    env: &EnvMap,
    limits: &Limits,
    options: &RenderOptions,
    out: &mut Vec<u8>,
    stats: &mut TextStats,
) -> Result<Vec<Warning>, Error> {
    let text = std::str::from_utf8(body).map_err(|e| {
        Error::new(
            Layer::REQUEST,
            ErrorKind::Syntax,
            "a line with an operator placeholder must be valid UTF-8".to_string(),
        )
        .with_span(Span::new(e.valid_up_to(), e.valid_up_to()))
    })?;
    let template = Template::compile(&Value::String(text.to_string()), chain, limits)?;
    stats.placeholders += template.references().len();
    let scope = Scope {
        env,
        ..Scope::default()
    };
    let rendered = template.render(&scope, options)?;
    match rendered.value.into_json() {
        Value::String(s) => out.extend_from_slice(s.as_bytes()),
        other => out.extend_from_slice(other.to_string().as_bytes()),
    }
    Ok(rendered.warnings)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env() -> EnvMap {
        [("A", "1"), ("EMPTY", ""), ("B", "two")]
            .into_iter()
            .collect()
    }

    fn render(text: &str, strict: bool) -> (String, Result<TextStats, String>, Vec<String>) {
        let mut out = Vec::new();
        let mut warnings = Vec::new();
        let result = render_text(
            text.as_bytes(),
            &mut out,
            "in.txt",
            &env(),
            &Limits::default(),
            &RenderOptions::strict_if(strict),
            |line, column, w| warnings.push(format!("{line}:{column}: {}", w.message)),
        )
        .map_err(|e| match e {
            TextError::Render(e) => {
                let l = e.location().unwrap();
                format!("{}:{}:{}: {}", l.file, l.line, l.column, e.message())
            }
            TextError::Io(e) => e.to_string(),
        });
        (String::from_utf8(out).unwrap(), result, warnings)
    }

    #[test]
    fn plain_placeholders_and_escapes() {
        let (out, stats, warnings) = render(
            "a=${A} b=${B}\n$${A} $$${A} $A ${a} ${A.x} {p}\n${MISSING}!\nlast ${A}",
            false,
        );
        assert_eq!(out, "a=1 b=two\n${A} $${A} $A ${a} ${A.x} {p}\n!\nlast 1");
        assert_eq!(stats.unwrap().lines, 4);
        assert_eq!(warnings, ["3:1: environment variable `MISSING` is not set"]);
    }

    /// The line scanner and the compiled env layer agree on every line the scanner takes.
    #[test]
    fn the_scanner_renders_as_the_compiled_layer() {
        let chain = Chain::of(&[Layer::ENV]);
        for line in [
            "$${A} $$${A} $$$${A} $ $$ ${A}${B}$",
            "${A.x} ${a} ${_} ${A1} ${1} ${ A} ${A }",
            "x${MISSING}y ${EMPTY}",
            "{p} {{x}} ${state.n} $(cmd) `id`",
            "\u{e9}t\u{e9} ${B} \u{1F600}",
        ] {
            let options = RenderOptions::default();
            let (mut fast, mut slow) = (Vec::new(), Vec::new());
            let mut stats = TextStats::default();
            let warned = plain_line(line.as_bytes(), &env(), &options, &mut fast, &mut stats)
                .unwrap()
                .expect("a plain line");
            let compiled = compiled_line(
                line.as_bytes(),
                &chain,
                &env(),
                &Limits::default(),
                &options,
                &mut slow,
                &mut stats,
            )
            .unwrap();
            assert_eq!(
                String::from_utf8(fast).unwrap(),
                String::from_utf8(slow).unwrap(),
                "{line}"
            );
            let messages = |w: &[Warning]| -> Vec<(String, Option<Span>)> {
                w.iter().map(|w| (w.message.clone(), w.span)).collect()
            };
            assert_eq!(messages(&warned), messages(&compiled), "{line}");
        }
    }

    #[test]
    fn operators_render_as_in_a_document() {
        let (out, _, _) = render(
            "${X:-d} ${EMPTY:-e} ${EMPTY-f} ${A:+alt} ${X:-${B}} ${A:?set}\n",
            false,
        );
        assert_eq!(out, "d e  alt two 1\n");
    }

    #[test]
    fn a_required_variable_stops_the_render_and_names_its_line() {
        let (out, result, _) = render("one ${A}\ntwo ${X:?needed here}\nthree\n", false);
        assert_eq!(out, "one 1\n");
        assert_eq!(
            result.unwrap_err(),
            "in.txt:2:5: required variable `X` is unset or empty: needed here"
        );
    }

    #[test]
    fn strict_mode_makes_a_missing_variable_an_error() {
        let (out, result, _) = render("ok\nx ${MISSING}\n", true);
        assert_eq!(out, "ok\n");
        assert_eq!(
            result.unwrap_err(),
            "in.txt:2:3: environment variable `MISSING` is not set"
        );
    }

    #[test]
    fn an_unclosed_placeholder_is_an_error_of_its_line() {
        let (_, result, _) = render("${A:-x\n", false);
        assert!(result
            .unwrap_err()
            .starts_with("in.txt:1:1: unclosed `${A`"));
    }

    #[test]
    fn a_line_over_the_limit_is_refused_without_being_held() {
        let limits = Limits {
            document_bytes: 8,
            ..Limits::default()
        };
        let mut out = Vec::new();
        let e = render_text(
            &b"short\nmuch longer than eight\n"[..],
            &mut out,
            "in.txt",
            &env(),
            &limits,
            &RenderOptions::default(),
            |_, _, _| {},
        )
        .unwrap_err();
        assert_eq!(out, b"short\n");
        let TextError::Render(e) = e else {
            panic!("{e:?}")
        };
        assert_eq!(e.kind(), ErrorKind::Limit);
        assert_eq!(e.location().unwrap().line, 2);
    }

    #[test]
    fn bytes_that_are_not_utf8_pass_through() {
        let mut out = Vec::new();
        render_text(
            &b"\xff ${A} \xfe\n"[..],
            &mut out,
            "in",
            &env(),
            &Limits::default(),
            &RenderOptions::default(),
            |_, _, _| {},
        )
        .unwrap();
        assert_eq!(out, b"\xff 1 \xfe\n");
    }
}
