//! Checks of directives (and the project hooks they fire): inputs, context namespaces, event
//! fields, steps, and text of other layers or systems.

use std::collections::{HashMap, HashSet};
use std::path::Path;
use std::sync::Arc;

use strata_core::walk::Seg;
use strata_core::{string_leaves, FieldPath, Layer, PathSeg, Reference};
use strata_directive::{
    load_project_hooks, tool_from_inputs, Directive, Event, FieldOrigin, Site, EVENTS,
};
use strata_doc::Document;
use strata_project::Project;
use strata_tools::Hook;

use crate::catalog::Catalog;
use crate::diagnostic::{Code, Diagnostic};
use crate::lints::{foreign_steps, params_in_directive, spaced, Lint};
use crate::records::{result_read, RecordProblem};
use crate::Report;
use strata_core::did_you_mean;

use strata_directive::BASE_CONTEXT as BASE;

/// Whether `name` is a field of some event's context.
fn is_event_field(name: &str) -> bool {
    name == "event" || EVENTS.iter().any(|e| e.fields().contains(&name))
}

/// Checks every directive under `directives/`.
pub fn check(project: &Project, report: &mut Report) {
    let paths = paths(project);
    // Loaded once for every directive; broken project hooks are reported once, and the
    // directives are then checked without them.
    let hooks = project_hooks(project, report);
    if paths.is_empty() {
        check_lone_hooks(project, &hooks, report);
    }
    let mut sources = Sources::new(project);
    for path in paths {
        check_path(&mut sources, &path, &hooks, report);
    }
}

/// The directive files under `directives/`, in the order they are checked.
pub(crate) fn paths(project: &Project) -> Vec<std::path::PathBuf> {
    strata_doc::walk(&project.root.join("directives"), &["md"])
}

/// The project's hooks; when they do not load, the error is reported and there are none.
pub(crate) fn project_hooks(project: &Project, report: &mut Report) -> Vec<Arc<Hook>> {
    match load_project_hooks(&project.root, &Catalog(project), &project.limits) {
        Ok(hooks) => hooks,
        Err(e) => {
            report.push(Diagnostic::from_error(&e, "hooks"));
            Vec::new()
        }
    }
}

/// Checks the directive at `path` with the project hooks it fires; returns it when it
/// loaded.
pub fn check_one(project: &Project, path: &Path, report: &mut Report) -> Option<Directive> {
    let hooks = project_hooks(project, report);
    check_at(project, path, &hooks, report)
}

/// Checks the directive at `path` with the project hooks `hooks`; returns it when it loaded.
pub(crate) fn check_at(
    project: &Project,
    path: &Path,
    hooks: &[Arc<Hook>],
    report: &mut Report,
) -> Option<Directive> {
    check_path(&mut Sources::new(project), path, hooks, report)
}

fn check_path(
    sources: &mut Sources<'_>,
    path: &Path,
    hooks: &[Arc<Hook>],
    report: &mut Report,
) -> Option<Directive> {
    let project = sources.project;
    report.files += 1;
    let name = project.display_name(path);
    let text = match project.read_text(path) {
        Ok(text) => text,
        Err(e) => {
            report.push(Diagnostic::from_error(&e, &name));
            return None;
        }
    };
    match Directive::load(&name, &text, &Catalog(project), hooks, &project.limits) {
        Ok(d) => {
            check_directive(sources, &d, report);
            Some(d)
        }
        Err(e) => {
            report.push(Diagnostic::from_error(&e, &name));
            None
        }
    }
}

/// The files of hook sites other than the directive itself (project hooks), each read and
/// indexed for positions once.
struct Sources<'p> {
    project: &'p Project,
    docs: HashMap<String, Option<Document>>,
}

impl<'p> Sources<'p> {
    fn new(project: &'p Project) -> Sources<'p> {
        Sources {
            project,
            docs: HashMap::new(),
        }
    }

    /// The line and column of `path` (and `offset` in its string) in `file`.
    fn locate(&mut self, file: &str, path: &FieldPath, offset: Option<usize>) -> (usize, usize) {
        let project = self.project;
        self.docs
            .entry(file.to_string())
            .or_insert_with(|| {
                let text = project.read_text(&project.root.join(file)).ok()?;
                Some(Document::unparsed(file, text))
            })
            .as_ref()
            .and_then(|doc| doc.locate(path, offset))
            .unwrap_or((1, 1))
    }

    /// The same, in directive `d` when `file` is its own.
    fn locate_in(
        &mut self,
        d: &Directive,
        file: &str,
        path: &FieldPath,
        offset: Option<usize>,
    ) -> (usize, usize) {
        if file == d.file {
            return d.locate(path, offset);
        }
        self.locate(file, path, offset)
    }
}

/// Project hooks when no directive fires them: what can be known without a directive (the
/// event's fields, namespaces, spellings); inputs and steps depend on the directive.
pub(crate) fn check_lone_hooks(project: &Project, hooks: &[Arc<Hook>], report: &mut Report) {
    let mut sources = Sources::new(project);
    for hook in hooks {
        let site = Site {
            path: hook.params_path(),
            template: &hook.params,
            event: Event::from_name(hook.event),
            file: &hook.file,
            action: None,
        };
        for (field, r) in hook.params.references() {
            if r.layer != Layer::CONTEXT || matches!(r.path.head(), Some("inputs" | "steps")) {
                continue;
            }
            let problem = context_problem(&r, &site, &[], &[], &mut HashSet::new())
                .map(with_severity)
                .or_else(|| old_record(project, &r, &site, &[]));
            if let Some((code, severity, message, help)) = problem {
                let path = field.under(&site.path);
                let at = sources.locate(site.file, &path, Some(r.span.start));
                report.push(
                    Diagnostic::new(code, site.file, at, path, message)
                        .span(Some(r.span))
                        .help(help)
                        .severity(severity),
                );
            }
        }
    }
}

fn check_directive(sources: &mut Sources<'_>, d: &Directive, report: &mut Report) {
    let declared: Vec<&str> = d.front.inputs.iter().map(|i| i.name.as_str()).collect();
    let steps: Vec<&str> = d.front.actions.iter().map(|a| a.id.as_str()).collect();
    let actions: Vec<(&str, &str)> = d
        .front
        .actions
        .iter()
        .map(|a| (a.id.as_str(), a.tool.as_str()))
        .collect();
    let mut used: HashSet<String> = HashSet::new();
    for site in d.sites() {
        for (field, r) in site.template.references() {
            let problem = match r.layer {
                Layer::INPUTS => {
                    used.insert(r.name.clone());
                    unknown_input(&r.name, &declared, &format!("{{input:{}}}", r.name))
                        .map(with_severity)
                }
                Layer::CONTEXT => context_problem(&r, &site, &declared, &steps, &mut used)
                    .map(with_severity)
                    .or_else(|| old_record(sources.project, &r, &site, &actions)),
                _ => None,
            };
            if let Some((code, severity, message, help)) = problem {
                // Located only when reported: most references are fine.
                let path = field.under(&site.path);
                let at = sources.locate_in(d, site.file, &path, Some(r.span.start));
                report.push(
                    Diagnostic::new(code, site.file, at, path, message)
                        .span(Some(r.span))
                        .help(help)
                        .severity(severity),
                );
            }
        }
    }
    lint_strings(d, &declared, report);
    check_responses(sources.project, d, report);
    crate::actions::check_directive(sources.project, d, report);
    for (i, input) in d.front.inputs.iter().enumerate() {
        if !used.contains(&input.name) {
            let path = FieldPath(vec![
                PathSeg::Key("inputs".into()),
                PathSeg::Index(i),
                PathSeg::Key("name".into()),
            ]);
            report.push(
                Diagnostic::new(
                    Code::UnusedInput,
                    &d.file,
                    d.locate(&path, None),
                    path,
                    format!("input `{}` is declared but never used", input.name),
                )
                .help(Some(format!(
                    "use it as `{{input:{0}}}` or `${{inputs.{0}}}`, or remove it",
                    input.name
                ))),
            );
        }
    }
}

/// Every response field that no source of the directive declares: `std.*` not set by
/// `responses.std`, tool fields no action's tool lists in `response_fields`, `generative.*`
/// without a generator.
fn check_responses(project: &Project, d: &Directive, report: &mut Report) {
    for (candidate, fields) in d.field_origins(&|tool| project.response_fields(tool)) {
        let path = candidate.template_path();
        for (name, origin) in fields {
            let FieldOrigin::Undeclared { suggestion } = origin else {
                continue;
            };
            let (message, help) = if strata_responses::names::is_std(&name) {
                (
                    format!("response field `{name}` is not set by `responses.std`"),
                    "`responses.std` sets customer.name, agent.name and variables.<name>; std.missing_params is always set".to_string(),
                )
            } else if strata_responses::names::is_generative(&name) && d.generator().is_none() {
                (
                    format!("response field `{name}` needs a generator"),
                    "name a tool in `responses.generator`".to_string(),
                )
            } else {
                (
                    format!("response field `{name}` is declared by no action's tool"),
                    match suggestion {
                        Some(s) => format!("did you mean `{s}`?"),
                        None => {
                            "list it in the `response_fields` of the tool that returns it".into()
                        }
                    },
                )
            };
            let span = candidate.response.span_of(&name);
            let at = d.locate(&path, span.map(|s| s.start));
            report.push(
                Diagnostic::new(Code::ResponseField, &d.file, at, path.clone(), message)
                    .span(span)
                    .help(Some(help)),
            );
        }
    }
}

type Problem = Option<(Code, String, Option<String>)>;

/// `${steps.<id>.result.x}` read against the `outputs` of the action's tool when it
/// declares them (R013), else `${steps.<id>.result.success}` and the like (L006, a note);
/// in the hooks of `after_action` and `action_failed`, `${result.exit_code}` and the like
/// (the action, and so the tool, is any).
fn old_record(
    project: &Project,
    r: &Reference,
    site: &Site<'_>,
    actions: &[(&str, &str)],
) -> Option<RecordProblem> {
    let at = match r.path.head() {
        Some("steps") => 2,
        Some("result") if site.event.is_some_and(|e| e.fields().contains(&"run")) => 0,
        _ => return None,
    };
    let tool = match r.path.segs.get(1) {
        Some(Seg::Key(step)) if at == 2 => actions
            .iter()
            .find(|(id, tool)| id == step && !tool_from_inputs(tool))
            .map(|(_, tool)| *tool),
        _ => None,
    };
    let outputs = tool.and_then(|t| strata_project::tool_outputs(project, t).map(|s| (t, s)));
    result_read(&r.path, at, outputs.as_ref().map(|(t, s)| (*t, s)))
}

/// A problem with the severity its code has.
fn with_severity(p: (Code, String, Option<String>)) -> RecordProblem {
    (p.0, p.0.severity(), p.1, p.2)
}

fn unknown_input(name: &str, declared: &[&str], written: &str) -> Problem {
    if declared.contains(&name) {
        return None;
    }
    let help = match did_you_mean(name, declared.iter().copied()) {
        Some(s) => format!("did you mean `{s}`?"),
        None if declared.is_empty() => "this directive declares no inputs".into(),
        None => format!(
            "the inputs are {}",
            declared
                .iter()
                .map(|n| format!("`{n}`"))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    };
    Some((
        Code::UnknownInput,
        format!("`{written}` names no declared input"),
        Some(help),
    ))
}

fn context_problem(
    r: &Reference,
    site: &Site<'_>,
    declared: &[&str],
    steps: &[&str],
    used: &mut HashSet<String>,
) -> Problem {
    let ns = r.path.head().unwrap_or_default();
    let second = match r.path.segs.get(1) {
        Some(Seg::Key(k)) => Some(k.as_str()),
        _ => None,
    };
    match ns {
        "inputs" => {
            let name = second?;
            used.insert(name.to_string());
            unknown_input(name, declared, &format!("${{inputs.{name}}}"))
        }
        "steps" => {
            let id = second?;
            if steps.contains(&id) {
                return None;
            }
            let help =
                did_you_mean(id, steps.iter().copied()).map(|s| format!("did you mean `{s}`?"));
            Some((
                Code::StepOrder,
                format!("`${{{}}}` names no action of this directive", r.name),
                help,
            ))
        }
        ns if BASE.contains(&ns) => None,
        ns => {
            let available: Vec<&str> = match site.event {
                Some(e) => e.context_names(),
                None => BASE.to_vec(),
            };
            if available.contains(&ns) {
                return None;
            }
            if let (Some(e), true) = (site.event, is_event_field(ns)) {
                return Some((
                    Code::EventField,
                    format!("`${{{}}}`: event `{}` has no `{ns}`", r.name, e.name()),
                    Some(format!(
                        "the context of `{}` has {}",
                        e.name(),
                        available.join(", ")
                    )),
                ));
            }
            let help = match did_you_mean(ns, available.iter().copied()) {
                Some(s) => format!("did you mean `{s}`?"),
                None => format!("the namespaces here are {}", available.join(", ")),
            };
            Some((
                Code::UnknownNamespace,
                format!("`${{{}}}`: no namespace `{ns}` in this context", r.name),
                Some(help),
            ))
        }
    }
}

fn lint_strings(d: &Directive, declared: &[&str], report: &mut Report) {
    let mut texts = vec![(
        FieldPath(vec![PathSeg::Key("body".into())]),
        d.body_text().to_string(),
    )];
    let front = d.front_value();
    for field in ["description", "actions", "hooks"] {
        if let Some(v) = front.get(field) {
            let at = FieldPath(vec![PathSeg::Key(field.into())]);
            texts.extend(
                string_leaves(v, &at)
                    .into_iter()
                    .map(|(p, s)| (p, s.to_string())),
            );
        }
    }
    for (path, text) in texts {
        let in_params =
            path.0.iter().any(|s| *s == PathSeg::Key("params".into())) || path.0.len() == 1;
        if !in_params {
            continue;
        }
        let mut lints: Vec<Lint> = foreign_steps(&text);
        lints.extend(spaced(&text, |n| {
            declared.contains(&n).then(|| format!("{{input:{n}}}"))
        }));
        let spaced_spans: Vec<_> = lints.iter().map(|l| l.span).collect();
        lints.extend(
            params_in_directive(&text)
                .into_iter()
                .filter(|l| !spaced_spans.contains(&l.span)),
        );
        for lint in lints {
            let at = d.locate(&path, Some(lint.span.start));
            report.push(
                Diagnostic::new(lint.code, &d.file, at, path.clone(), lint.message)
                    .span(Some(lint.span))
                    .help(lint.help),
            );
        }
    }
}
