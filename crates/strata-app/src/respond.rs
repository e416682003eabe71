//! A canned response rendered outside a directive (`strata respond`, SPEC §7): the template
//! read and compiled under the project's limits (the defaults without a project), the
//! standard fields checked, tool results read from files, the project's generator tool run
//! through the gate for `generative.*` fields, and every secret value — the caller's and the
//! project's — refused in a field.

use std::path::{Path, PathBuf};

use serde_json::json;
use strata_core::{Error, ErrorKind, Layer, Limits, RenderOptions};
use strata_doc::{Document, Format};
use strata_responses::{
    check_std, Field, Generate, Generator, JinjaLimits, Place, Response, Sources, ToolResult,
};
use strata_tools::{CallOptions, ToolRunner};

use crate::secrets::secret_values;
use crate::{App, ExecOptions};

/// What to render: the template file, the standard fields, tool results and the generator.
#[derive(Debug, Clone, Default)]
pub struct RespondRequest {
    /// The template file (Jinja).
    pub template: PathBuf,
    /// The standard fields as JSON text (`{customer: {name}, agent: {name}, variables: {…},
    /// missing_params: […]}`); none is `{}`.
    pub std_json: Option<String>,
    /// Tool results as the tools printed them (JSON, or YAML unless the name ends in
    /// `.json`), in the order the tools ran.
    pub tool_results: Vec<PathBuf>,
    /// The project's tool that fills `generative.*` fields.
    pub generator: Option<String>,
    /// Environment variables whose values are secret, besides the project's.
    pub secrets: Vec<String>,
}

/// A rendered reply and each field with its source.
#[derive(Debug)]
pub struct Reply {
    /// The reply's text.
    pub text: String,
    /// Every field the template uses, with where it came from.
    pub fields: Vec<Field>,
}

/// Why no reply was rendered, and the fields found before it.
#[derive(Debug)]
pub struct RespondFailure {
    /// What went wrong.
    pub error: Error,
    /// The fields found before it (none when the input itself was bad).
    pub fields: Vec<Field>,
}

impl From<Error> for RespondFailure {
    fn from(error: Error) -> RespondFailure {
        RespondFailure {
            error,
            fields: Vec::new(),
        }
    }
}

/// Renders `request` for `project` (none: default limits, no generator, no project
/// secrets). A generator names a tool of the project, which runs through the gate.
pub fn respond(project: Option<&App>, request: &RespondRequest) -> Result<Reply, RespondFailure> {
    let limits = project.map_or_else(Limits::default, |p| p.limits.clone());
    let name = request.template.display().to_string();
    let source = utf8(
        &request.template,
        strata_doc::read_file(&request.template, &name, &limits)?,
    )?;
    let response = Response::compile(source, Some(&name), JinjaLimits::from_limits(&limits))?;
    let std = match &request.std_json {
        Some(text) => strata_doc::json_value(text).map_err(|e| {
            Error::new(
                Layer::REQUEST,
                ErrorKind::Syntax,
                format!("the standard fields are not JSON: {e}"),
            )
            .with_source(e)
            .with_hint("the standard fields are one JSON object: {\"customer\": {\"name\": …}, \"agent\": {\"name\": …}, \"variables\": {…}, \"missing_params\": […]}")
        })?,
        None => json!({}),
    };
    check_std(&std, Place::Nowhere)?;
    let docs = tool_result_documents(&request.tool_results, &limits)?;
    let mut results = Vec::new();
    for doc in &docs {
        let label = format!("`{}`", doc.name);
        results.extend(ToolResult::of(label, &doc.value, Place::Doc(doc))?);
    }
    let runner = project.map(|project| {
        project.runner(ExecOptions {
            render: RenderOptions::default(),
            base_env: None,
            cancel: None,
        })
    });
    let generator = match (&request.generator, &runner) {
        (Some(tool), Some(runner)) => {
            if !runner.has_tool(tool) {
                return Err(runner.unknown_tool(tool).into());
            }
            Some(Generator {
                tool,
                runner,
                call: CallOptions::default(),
                place: Place::Nowhere,
            })
        }
        (Some(tool), None) => {
            return Err(Error::new(
                Layer::REQUEST,
                ErrorKind::Request,
                format!("the generator `{tool}` is a tool of a project, and there is none"),
            )
            .with_hint("run inside a project, or name its directory")
            .into())
        }
        (None, _) => None,
    };
    let tools: Vec<&str> = request.generator.iter().map(String::as_str).collect();
    let secrets = secret_values(project.map(App::project), &tools, &request.secrets);
    let sources = Sources {
        std: &std,
        std_place: Place::Nowhere,
        tools: &results,
        generator: generator.as_ref().map(|g| g as &dyn Generate),
        secrets: &secrets,
    };
    let extraction = response.extract(&sources);
    let found = extraction.found.clone();
    let fields = extraction
        .complete(&response, &sources)
        .map_err(|error| RespondFailure {
            error,
            fields: found,
        })?;
    match response.render(&fields) {
        Ok(text) => Ok(Reply { text, fields }),
        Err(error) => Err(RespondFailure { error, fields }),
    }
}

/// Each tool result file read as a document (kept, to locate errors in it).
fn tool_result_documents(paths: &[PathBuf], limits: &Limits) -> Result<Vec<Document>, Error> {
    paths
        .iter()
        .map(|path| {
            let name = path.display().to_string();
            let bytes = strata_doc::read_file(path, &name, limits)?;
            Document::parse(&name, bytes, Format::from_name(&name), limits)
        })
        .collect()
}

fn utf8(path: &Path, bytes: Vec<u8>) -> Result<String, Error> {
    String::from_utf8(bytes).map_err(|_| {
        Error::new(
            Layer::REQUEST,
            ErrorKind::Syntax,
            format!("`{}` is not valid UTF-8", path.display()),
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(dir: &Path, template: &str, std_json: &str) -> RespondRequest {
        let path = dir.join("reply.j2");
        std::fs::write(&path, template).expect("write the template");
        RespondRequest {
            template: path,
            std_json: Some(std_json.to_string()),
            ..RespondRequest::default()
        }
    }

    #[test]
    fn renders_without_a_project_from_standard_fields() {
        let dir = tempfile::tempdir().expect("a directory");
        let reply = respond(
            None,
            &request(
                dir.path(),
                "Hello {{ std.customer.name }}, I am {{ std.agent.name }}.",
                r#"{"customer": {"name": "Ann"}, "agent": {"name": "Bo"}}"#,
            ),
        )
        .expect("renders");
        assert_eq!(reply.text, "Hello Ann, I am Bo.");
        assert_eq!(reply.fields.len(), 2);
    }

    #[test]
    fn a_missing_field_fails_with_the_fields_found_before_it() {
        let dir = tempfile::tempdir().expect("a directory");
        let failure = respond(
            None,
            &request(
                dir.path(),
                "Hello {{ std.customer.name }}, {{ order.id }}.",
                r#"{"customer": {"name": "Ann"}}"#,
            ),
        )
        .expect_err("refused");
        assert_eq!(failure.error.kind(), ErrorKind::MissingFields);
        assert_eq!(
            failure.error.message(),
            "no source provides `order.id` (tried: tool fields (no tool result has any))"
        );
        assert_eq!(failure.fields.len(), 1);
        let bad = respond(None, &request(dir.path(), "x", "{"))
            .expect_err("refused")
            .error;
        assert_eq!(bad.kind(), ErrorKind::Syntax);
        assert_eq!(
            bad.message(),
            "the standard fields are not JSON: EOF while parsing an object at line 1 column 1"
        );
    }

    #[test]
    fn a_generator_without_a_project_is_refused() {
        let dir = tempfile::tempdir().expect("a directory");
        let mut req = request(dir.path(), "{{ generative.x }}", "{}");
        req.generator = Some("gen/text".into());
        let failure = respond(None, &req).expect_err("refused");
        assert_eq!(failure.error.kind(), ErrorKind::Request);
        assert_eq!(
            failure.error.message(),
            "the generator `gen/text` is a tool of a project, and there is none"
        );
    }
}
