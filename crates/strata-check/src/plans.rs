//! Checks of plan files under `plans/` (`.yaml`, `.yml`, `.json`): the document and its
//! references (unknown steps and record fields, cycles, malformed references), the tools the
//! steps call and whether their arguments can match the tools' parameter schemas, `{{…}}`
//! that is not a reference, and other layers' syntax, which no layer reads in a plan.

use serde_json::Value;
use strata_core::{Error, ErrorKind, FieldPath, Layer, Limits, PathSeg};
use strata_doc::{Document, Format};
use strata_pipeline::{Chain, Template};
use strata_plans::syntax::{dollar_ids, literal_braces};
use strata_plans::{check_tools, Plan};
use strata_project::Project;

use crate::catalog::Catalog;
use crate::diagnostic::{Code, Diagnostic};
use crate::Report;

const EXTENSIONS: [&str; 3] = ["yaml", "yml", "json"];

/// The code of a plan error.
fn code_of(e: &Error) -> Code {
    match e.kind() {
        ErrorKind::UnknownStep | ErrorKind::UnknownField => Code::PlanReference,
        ErrorKind::Cycle => Code::PlanCycle,
        ErrorKind::UnknownTool => Code::UnknownTool,
        _ if e.layer() == Layer::PARAMS => Code::PlanArguments,
        _ if crate::diagnostic::in_scale_declaration(e.path()) => Code::Scale,
        _ => Code::PlanLoad,
    }
}

/// Checks every plan under `plans/`.
pub fn check(project: &Project, report: &mut Report) {
    for path in paths(project) {
        check_one(project, &path, report);
    }
}

/// The plan files under `plans/`, in the order they are checked.
pub(crate) fn paths(project: &Project) -> Vec<std::path::PathBuf> {
    strata_doc::walk(&project.root.join("plans"), &EXTENSIONS)
}

/// Checks the plan at `path`; returns the tools its steps call (none when it did not load:
/// the tools are looked at only once it has).
pub(crate) fn check_one(
    project: &Project,
    path: &std::path::Path,
    report: &mut Report,
) -> Vec<String> {
    report.files += 1;
    let name = project.display_name(path);
    let doc = project
        .read(path)
        .and_then(|bytes| Document::parse(&name, bytes, Format::from_name(&name), &project.limits));
    let doc = match doc {
        Ok(doc) => doc,
        Err(e) => {
            report.push(Diagnostic::from_error(&e, &name).with_code(Code::PlanLoad));
            return Vec::new();
        }
    };
    let (errors, called) = match Plan::load(&doc) {
        Ok(plan) => {
            lint(&plan, &doc, &project.limits, report);
            let errors = check_tools(&plan, &Catalog(project))
                .into_iter()
                .map(|e| doc.locate_error(e))
                .collect();
            (errors, plan.steps.iter().map(|s| s.tool.clone()).collect())
        }
        Err(errors) => (errors, Vec::new()),
    };
    for e in errors {
        report.push(Diagnostic::from_error(&e, &name).with_code(code_of(&e)));
    }
    called
}

/// Warnings about the strings of every step's arguments.
fn lint(plan: &Plan, doc: &Document, limits: &Limits, report: &mut Report) {
    let ids: Vec<&str> = plan.steps.iter().map(|s| s.id.as_str()).collect();
    for step in &plan.steps {
        let at = step.at.child(PathSeg::Key(step.args_key.into()));
        let Some(args) = at.lookup(&doc.value) else {
            continue;
        };
        for (path, text) in strata_core::string_leaves(args, &at) {
            for span in literal_braces(text) {
                let written = &text[span.start..span.end];
                push(
                    report,
                    doc,
                    &path,
                    Diagnostic::new(
                        Code::PlanLiteral,
                        &doc.name,
                        (1, 1),
                        path.clone(),
                        format!("`{written}` is literal text, not a reference"),
                    )
                    .span(Some(span))
                    .help(Some(
                        "a step reference is `{{id.result.path}}` and a user value `{{PLACEHOLDER_name}}`; write `{{{{` for literal braces".into(),
                    )),
                );
            }
            for (span, n) in dollar_ids(text, &ids) {
                dollar_by_id(
                    &text[span.start..span.end],
                    ids[n],
                    n,
                    (&path, span),
                    doc,
                    report,
                );
            }
            other_layers(text, &path, doc, limits, report);
        }
    }
}

/// `$id.path` naming step `id` (the `n`th) by an id `$` does not read: it stays literal text;
/// the warning gives the two forms that name it.
fn dollar_by_id(
    written: &str,
    id: &str,
    n: usize,
    (path, span): (&FieldPath, strata_core::Span),
    doc: &Document,
    report: &mut Report,
) {
    let rest = &written[1 + id.len()..];
    let d = Diagnostic::new(
        Code::PlanLiteral,
        &doc.name,
        (1, 1),
        path.clone(),
        format!("`{written}` is literal text, not a reference: `$` names a step only as `$stepN`"),
    )
    .span(Some(span))
    .help(Some(format!(
        "name step `{id}` by its id as `{{{{{id}.result{rest}}}}}`, or give it the id `step{}` and write `$step{}{rest}`",
        n + 1,
        n + 1
    )));
    push(report, doc, path, d);
}

/// `${…}` and `{input:…}` in a plan: plan arguments are data for the tool, and no layer reads
/// them.
fn other_layers(
    text: &str,
    path: &FieldPath,
    doc: &Document,
    limits: &Limits,
    report: &mut Report,
) {
    for (layer, what) in [
        (Layer::CONTEXT, "a context placeholder (layer C)"),
        (Layer::ENV, "an environment variable (layer E)"),
        (Layer::INPUTS, "a directive input (layer I)"),
    ] {
        let Ok(t) = Template::compile(
            &Value::String(text.to_string()),
            &Chain::of(&[layer]),
            limits,
        ) else {
            continue;
        };
        for (_, r) in t.references() {
            let written = &text[r.span.start..r.span.end];
            push(
                report,
                doc,
                path,
                Diagnostic::new(
                    Code::LayerInPlan,
                    &doc.name,
                    (1, 1),
                    path.clone(),
                    format!("`{written}` is {what} in a plan, where it stays literal text"),
                )
                .span(Some(r.span))
                .help(Some(
                    "plan arguments reach the tool as data; refer to an earlier step with `{{id.result.path}}` or `$stepN.path`".into(),
                )),
            );
        }
    }
}

/// Pushes a diagnostic located at its field and span in `doc`.
fn push(report: &mut Report, doc: &Document, path: &FieldPath, mut d: Diagnostic) {
    let (line, column) = doc.locate(path, d.span.map(|s| s.start)).unwrap_or((1, 1));
    d.line = line;
    d.column = column;
    report.push(d);
}
