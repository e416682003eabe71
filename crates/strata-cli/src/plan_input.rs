//! What plan commands read: a plan document from a file or standard input (a whole plan, or
//! steps as JSON Lines), user values from `--value`/`--value-json`, and a plan's name as the
//! project shows it.

use std::io::BufReader;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value};
use strata_core::{Error, ErrorKind, Layer, Limits};
use strata_doc::Document;
use strata_plans::parse_document;

use crate::scope_args::split_pair;

/// The name standard input has in messages.
pub(crate) const STDIN: &str = "<stdin>";

/// The error for line `number` of standard input being longer than a whole document may be.
fn too_long(number: usize, limits: &Limits) -> Error {
    Error::new(
        Layer::REQUEST,
        ErrorKind::Limit,
        format!(
            "line {number} of {STDIN} exceeds the limit of {} bytes",
            limits.document_bytes
        ),
    )
    .with_hint("split the plan, or pass large values as results")
}

/// Reads a plan document from a file, or from standard input for `-`; `shown` is the name
/// errors use (the path relative to the project when there is one).
pub(crate) fn read_document(path: &str, shown: &str, limits: &Limits) -> Result<Document, Error> {
    let bytes = if path == "-" {
        strata_doc::read_bounded(std::io::stdin().lock(), STDIN, limits)?
    } else {
        let file = crate::names::plan_file(path);
        strata_doc::read_file(Path::new(&file), shown, limits)?
    };
    parse_document(shown, bytes, limits)
}

/// A plan on standard input: a whole document, or steps as JSON Lines.
pub(crate) enum StdinPlan {
    /// A whole plan.
    Document(Document),
    /// Steps, one a line: the first non-blank line (with its number), and the rest.
    Stream((usize, String), BufReader<std::io::Stdin>),
}

/// Reads standard input far enough to tell a stream of steps (the first non-blank line is
/// a JSON object with a `tool`) from a whole plan (read to the end).
pub(crate) fn read_stdin(limits: &Limits) -> Result<StdinPlan, Error> {
    let mut reader = BufReader::new(std::io::stdin());
    let mut bytes = Vec::new();
    let mut number = 0;
    let mut line = Vec::new();
    while let Some(fits) = strata_lines::read_line(&mut reader, limits.document_bytes, &mut line)
        .map_err(|e| Error::io("read", Path::new(STDIN), e))?
    {
        number += 1;
        if !fits {
            return Err(too_long(number, limits));
        }
        if line.trim_ascii().is_empty() {
            bytes.extend_from_slice(&line);
            bytes.push(b'\n');
            continue;
        }
        let is_step = serde_json::from_slice::<Value>(&line)
            .is_ok_and(|v| v.as_object().is_some_and(|m| m.contains_key("tool")));
        if is_step {
            let text = String::from_utf8(std::mem::take(&mut line)).unwrap_or_default();
            return Ok(StdinPlan::Stream((number, text), reader));
        }
        bytes.extend_from_slice(&line);
        bytes.push(b'\n');
        break;
    }
    let rest = strata_doc::read_bounded(&mut reader, STDIN, limits)?;
    bytes.extend(rest);
    parse_document(STDIN, bytes, limits).map(StdinPlan::Document)
}

/// User values from `--value NAME=TEXT` (strings) and `--value-json NAME=JSON`, added to
/// `values` (later ones win).
pub(crate) fn user_values(
    texts: &[String],
    jsons: &[String],
    values: &mut Map<String, Value>,
) -> Result<(), Error> {
    for pair in texts {
        let (k, v) = split_pair(pair, "--value")?;
        values.insert(k.to_string(), Value::String(v.to_string()));
    }
    for pair in jsons {
        let (k, v) = split_pair(pair, "--value-json")?;
        let parsed = strata_doc::json_value(v).map_err(|e| {
            Error::new(
                Layer::REQUEST,
                ErrorKind::Syntax,
                format!("--value-json `{}` is not JSON: {e}", strata_core::shown(k)),
            )
            .with_source(e)
        })?;
        values.insert(k.to_string(), parsed);
    }
    Ok(())
}

/// The name of a plan file as the project shows it (`plans/x.yaml`; `<stdin>` for `-`).
pub(crate) fn shown_name(project: &strata_app::Project, path: &str) -> String {
    if path == "-" {
        return STDIN.to_string();
    }
    let absolute = std::path::absolute(path).unwrap_or_else(|_| PathBuf::from(path));
    project.display_name(&absolute)
}
