use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use serde_json::{Map, Value};
use strata_core::walk::Seg;
use strata_core::{
    did_you_mean, Error, ErrorKind, FieldPath, Layer, Limits, Location, PathSeg, Reference,
};
use strata_doc::{Document, Format};
use strata_pipeline::{Chain, Template};

use crate::front_matter::{ActionSpec, FrontMatter};
use strata_tools::{Hook, ToolRunner};

use crate::hooks::{parse_hooks, under, Event};
use crate::inputs::{bind, coerce};
use crate::source::Source;

/// An action with its parameters compiled for stages 1–2, and its tool id compiled for
/// stage 1 when an input names it (`tool: "{input:child}"`).
#[derive(Debug)]
pub(crate) struct CompiledAction {
    pub spec: ActionSpec,
    pub params: Template,
    pub tool: Option<Template>,
}

/// Whether an action's tool id is taken from the directive's inputs (`{input:…}`), and so
/// known only when the directive runs.
pub fn tool_from_inputs(tool: &str) -> bool {
    tool.contains("{input:")
}

/// A loaded, checked directive, ready to run any number of times.
#[derive(Debug)]
pub struct Directive {
    /// The front matter as declared.
    pub front: FrontMatter,
    /// The file name as shown in errors.
    pub file: String,
    pub(crate) body: Template,
    pub(crate) description: Option<Template>,
    pub(crate) actions: Vec<CompiledAction>,
    pub(crate) hooks: Vec<Arc<Hook>>,
    pub(crate) responses: Option<crate::responses::Responses>,
    /// `limits.timeout`, checked.
    pub(crate) timeout: Option<Duration>,
    source: Source,
    doc: Document,
}

/// A compiled template of a directive and where it stands, for checks.
#[derive(Debug)]
pub struct Site<'a> {
    /// The field (`body`, `description`, `actions[0].params`, `hooks[1].action.params`).
    pub path: FieldPath,
    /// The template.
    pub template: &'a Template,
    /// For hook params: the hook's event.
    pub event: Option<Event>,
    /// For hook params: the file that declared the hook (another file for project hooks).
    pub file: &'a str,
    /// For action params: the index of the action.
    pub action: Option<usize>,
}

fn key(k: &str) -> PathSeg {
    PathSeg::Key(k.to_string())
}

/// The stages a directive's templates go through before dispatch: 1 (inputs), 2 (context).
pub(crate) fn stages() -> Chain {
    Chain::of(&[Layer::INPUTS, Layer::CONTEXT])
}

impl Directive {
    /// The front matter of directive `file` alone (its name, description and inputs), read
    /// without its tools or body: what a listing of directives needs.
    pub fn front_matter(file: &str, text: &str, limits: &Limits) -> Result<FrontMatter, Error> {
        let source = Source::split(file, text)?;
        let doc = Document::parse(file, source.front.into_bytes(), Format::Yaml, limits)?;
        let front: FrontMatter = doc.typed().map_err(|e| front_matter_error(file, e))?;
        check_inputs(&front, &doc)?;
        Ok(front)
    }

    /// The tools a run of the directive can call — its actions', its hooks' (the project's
    /// included) and its response generator — each once.
    pub fn called_tools(&self) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        let all = self.front.actions.iter().map(|a| a.tool.as_str());
        let all = all
            .chain(self.hooks.iter().map(|h| h.tool.as_str()))
            .chain(self.generator());
        for id in all {
            if !out.iter().any(|o| o == id) {
                out.push(id.to_string());
            }
        }
        out
    }

    /// Loads the directive in `text` (named `file`), checking it against the tools `tools`
    /// knows; `project_hooks` are the project's hooks (a directive hook with the same id
    /// replaces one of them).
    pub fn load(
        file: &str,
        text: &str,
        tools: &dyn ToolRunner,
        project_hooks: &[Arc<Hook>],
        limits: &Limits,
    ) -> Result<Directive, Error> {
        let source = Source::split(file, text)?;
        let doc = Document::parse(
            file,
            source.front.clone().into_bytes(),
            Format::Yaml,
            limits,
        )?;
        let mut front: FrontMatter = doc.typed().map_err(|e| front_matter_error(file, e))?;
        check_inputs(&front, &doc)?;
        let timeout = timeout_of(&front, &doc)?;
        let body = Template::compile(&Value::String(source.body.clone()), &stages(), limits)
            .map_err(|e| {
                let location = source.body_location(e.span().map_or(0, |s| s.start));
                e.at_location(location)
                    .with_path(FieldPath(vec![key("body")]))
            })?;
        let description = match &front.description {
            Some(d) => Some(
                Template::compile(&Value::String(d.clone()), &stages(), limits).map_err(|e| {
                    doc.locate_error(under(e, &FieldPath(vec![key("description")])))
                })?,
            ),
            None => None,
        };
        let actions = compile_actions(&front, &doc, tools, limits)?;
        let responses = crate::responses::compile(&front, &doc, tools, limits)?;
        let declared = doc.value.get("hooks").filter(|v| !v.is_null());
        let path = FieldPath(vec![key("hooks")]);
        let mut hooks: Vec<Arc<Hook>> = parse_hooks(&doc, declared, &path, tools, limits)?
            .into_iter()
            .map(Arc::new)
            .collect();
        // Checked by the hook parser: each one reads as declared.
        front.hooks = declared
            .and_then(Value::as_array)
            .map(|items| {
                items
                    .iter()
                    .filter_map(|v| serde_json::from_value(v.clone()).ok())
                    .collect()
            })
            .unwrap_or_default();
        let replaced = |p: &&Arc<Hook>| front.hooks.iter().any(|h| h.id == p.id);
        let kept: Vec<Arc<Hook>> = project_hooks
            .iter()
            .filter(|p| !replaced(p))
            .cloned()
            .collect();
        hooks.extend(kept);
        Ok(Directive {
            file: file.to_string(),
            front,
            timeout,
            body,
            description,
            actions,
            hooks,
            responses,
            source,
            doc,
        })
    }

    /// The 1-based line and column of a field of this file (and of a byte offset inside its
    /// string), for diagnostics.
    pub fn locate(&self, path: &FieldPath, offset: Option<usize>) -> (usize, usize) {
        if path.0.first() == Some(&key("body")) {
            let loc = self.source.body_location(offset.unwrap_or(0));
            return (loc.line, loc.column);
        }
        self.doc.locate(path, offset).unwrap_or((1, 1))
    }

    /// The Markdown body as written.
    pub fn body_text(&self) -> &str {
        &self.source.body
    }

    /// The front matter as parsed (for checks that read raw strings).
    pub fn front_value(&self) -> &Value {
        &self.doc.value
    }

    /// Every compiled template with its field path: body, description, action params, and the
    /// params of every hook (the directive's and the project's).
    pub fn sites(&self) -> Vec<Site<'_>> {
        let mut out = vec![Site {
            path: FieldPath(vec![key("body")]),
            template: &self.body,
            event: None,
            file: &self.file,
            action: None,
        }];
        if let Some(d) = &self.description {
            out.push(Site {
                path: FieldPath(vec![key("description")]),
                template: d,
                event: None,
                file: &self.file,
                action: None,
            });
        }
        for (i, a) in self.actions.iter().enumerate() {
            let path = FieldPath(vec![key("actions"), PathSeg::Index(i), key("params")]);
            out.push(Site {
                path,
                template: &a.params,
                event: None,
                file: &self.file,
                action: Some(i),
            });
            if let Some(tool) = &a.tool {
                out.push(Site {
                    path: FieldPath(vec![key("actions"), PathSeg::Index(i), key("tool")]),
                    template: tool,
                    event: None,
                    file: &self.file,
                    action: Some(i),
                });
            }
        }
        for hook in &self.hooks {
            out.push(Site {
                path: hook.params_path(),
                template: &hook.params,
                event: Event::from_name(hook.event),
                file: &hook.file,
                action: None,
            });
        }
        out
    }

    /// The tool id of every action with the bound `inputs` (stage 1 for an id an input
    /// names), each checked with `tools`: an unknown tool is an error located at the
    /// action's `tool`, with the runner's did-you-mean.
    pub fn tool_ids(
        &self,
        inputs: &Map<String, Value>,
        tools: &dyn ToolRunner,
        options: &strata_core::RenderOptions,
    ) -> Result<Vec<String>, Error> {
        let mut out = Vec::with_capacity(self.actions.len());
        for (i, a) in self.actions.iter().enumerate() {
            let Some(template) = &a.tool else {
                out.push(a.spec.tool.clone());
                continue;
            };
            let at = FieldPath(vec![key("actions"), PathSeg::Index(i), key("tool")]);
            let scope = strata_core::Scope {
                inputs,
                ..strata_core::Scope::default()
            };
            let rendered = template
                .render(&scope, options)
                .map_err(|e| self.doc.locate_error(under(e, &at)))?;
            let id = match rendered.value.into_json() {
                Value::String(id) => id,
                other => {
                    let e = Error::new(
                        Layer::INPUTS,
                        ErrorKind::Type,
                        format!(
                            "the tool of action `{}` (`{}`) must be a string, not {}",
                            a.spec.id,
                            a.spec.tool,
                            strata_core::a_or_an(strata_core::type_name(&other))
                        ),
                    );
                    return Err(self.doc.locate_error(e.at_path(&at)));
                }
            };
            tools.callable(&id).map_err(|e| {
                let e = e.map_message(|m| format!("{m} (from `{}`)", a.spec.tool));
                self.doc.locate_error(e.at_path(&at))
            })?;
            out.push(id);
        }
        Ok(out)
    }

    /// Validates and types the caller's inputs (strings from the command line are parsed as the
    /// declared type) and applies defaults.
    pub fn bind_inputs(&self, given: &Map<String, Value>) -> Result<Map<String, Value>, Error> {
        bind(&self.front.inputs, given)
    }

    /// The directive's name.
    pub fn name(&self) -> &str {
        &self.front.name
    }
}

/// `limits.timeout` as a duration: a number of seconds greater than 0, at most a week.
/// A front matter that does not read as one, located in `file`.
fn front_matter_error(file: &str, e: strata_doc::TypedError) -> Error {
    let (line, column) = e.at;
    Error::new(
        Layer::REQUEST,
        ErrorKind::Syntax,
        format!("bad front matter: {}", e.message),
    )
    .at_location(Location {
        file: file.to_string(),
        line,
        column,
    })
}

fn timeout_of(front: &FrontMatter, doc: &Document) -> Result<Option<Duration>, Error> {
    let Some(secs) = front.limits.timeout else {
        return Ok(None);
    };
    strata_core::seconds(secs).map(Some).ok_or_else(|| {
        doc.locate_error(
            Error::new(
                Layer::REQUEST,
                ErrorKind::Invalid,
                "`limits.timeout` must be a number of seconds greater than 0 (at most a week)",
            )
            .with_hint("e.g. limits: {timeout: 30}")
            .at_path(&FieldPath(vec![key("limits"), key("timeout")])),
        )
    })
}

fn check_inputs(front: &FrontMatter, doc: &Document) -> Result<(), Error> {
    let mut seen = HashMap::new();
    for (i, spec) in front.inputs.iter().enumerate() {
        let path = FieldPath(vec![key("inputs"), PathSeg::Index(i)]);
        let fail = |field: &str, message: String| {
            doc.locate_error(
                Error::new(Layer::INPUTS, ErrorKind::Invalid, message)
                    .at_path(&path.child(key(field))),
            )
        };
        if spec.name.is_empty()
            || !spec
                .name
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'_')
        {
            return Err(fail(
                "name",
                format!("input name `{}` must be letters, digits and `_`", spec.name),
            ));
        }
        if seen.insert(spec.name.clone(), i).is_some() {
            return Err(fail(
                "name",
                format!("input `{}` is declared twice", spec.name),
            ));
        }
        if let Some(default) = &spec.default {
            coerce(spec, default)
                .map_err(|e| fail("default", format!("default of {}", e.message())))?;
        }
    }
    Ok(())
}

fn compile_actions(
    front: &FrontMatter,
    doc: &Document,
    tools: &dyn ToolRunner,
    limits: &Limits,
) -> Result<Vec<CompiledAction>, Error> {
    let ids: Vec<&str> = front.actions.iter().map(|a| a.id.as_str()).collect();
    let mut out = Vec::new();
    for (i, spec) in front.actions.iter().enumerate() {
        let path = FieldPath(vec![key("actions"), PathSeg::Index(i)]);
        let fail = |field: &str, message: String| {
            doc.locate_error(
                Error::new(Layer::REQUEST, ErrorKind::Invalid, message)
                    .at_path(&path.child(key(field))),
            )
        };
        if ids[..i].contains(&spec.id.as_str()) {
            return Err(fail("id", format!("action id `{}` is used twice", spec.id)));
        }
        let tool = if tool_from_inputs(&spec.tool) {
            let tool_path = path.child(key("tool"));
            let chain = Chain::of(&[Layer::INPUTS]);
            Some(
                Template::compile(&Value::String(spec.tool.clone()), &chain, limits)
                    .map_err(|e| doc.locate_error(under(e, &tool_path)))?,
            )
        } else {
            tools
                .callable(&spec.tool)
                .map_err(|e| doc.locate_error(e.at_path(&path.child(key("tool")))))?;
            None
        };
        let params_path = path.child(key("params"));
        let params = Template::compile(&Value::Object(spec.params.clone()), &stages(), limits)
            .map_err(|e| doc.locate_error(under(e, &params_path)))?;
        for (field, reference) in params.references() {
            check_step_reference(&reference, &spec.id, i, &ids).map_err(|m| {
                let e = Error::new(Layer::CONTEXT, ErrorKind::UnknownStep, m)
                    .with_span(reference.span)
                    .at_path(&field.under(&params_path));
                doc.locate_error(e)
            })?;
        }
        out.push(CompiledAction {
            spec: spec.clone(),
            params,
            tool,
        });
    }
    Ok(out)
}

/// A `${steps.<id>…}` reference must name an action that runs before action `index`.
fn check_step_reference(
    r: &Reference,
    own: &str,
    index: usize,
    ids: &[&str],
) -> Result<(), String> {
    if r.layer != Layer::CONTEXT || r.path.head() != Some("steps") {
        return Ok(());
    }
    let Some(Seg::Key(step)) = r.path.segs.get(1) else {
        return Ok(());
    };
    let step = step.as_str();
    match ids.iter().position(|id| *id == step) {
        Some(j) if j == index => Err(format!(
            "action `{own}` refers to its own result (`{}`)",
            r.name
        )),
        Some(j) if j > index => Err(format!(
            "action `{own}` refers to `{step}`, which runs after it (`{}`)",
            r.name
        )),
        Some(_) => Ok(()),
        None => {
            let mut message = format!(
                "action `{own}` refers to unknown step `{step}` (`{}`)",
                r.name
            );
            if let Some(best) = did_you_mean(step, ids[..index].iter().copied()) {
                message.push_str(&format!("; did you mean `{best}`?"));
            }
            Err(message)
        }
    }
}
