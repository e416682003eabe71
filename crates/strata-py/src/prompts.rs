//! `strata.PromptManager`: prompt templates chosen by key with hierarchical fallback
//! (`strata-prompts`, SPEC §6).

use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyMapping, PyString};
use serde_json::{json, Value};
use strata_core::Undefined;
use strata_prompts::{Call, Merge, Overrides, PromptManager, Rendered, Settings};

use crate::convert::{
    flag_arg, json_arg, map_arg, names_arg, opt_str_arg, path_arg, sink_arg, str_map_arg, to_py,
    type_name, Given,
};
use crate::errors::{report_warnings, OrRaise};
use crate::stack::{on_strata_stack, DEFAULT_LIMITS_STACK};

/// Where the templates of a dict are placed in messages.
const DICT_NAME: &str = "templates";

/// The hint of `render` for a template with several variants.
const VARIANTS_HINT: &str =
    "call variants() to get them all, or pin each versioned component with pins={component: version}";

/// Prompt templates chosen by key with hierarchical fallback (seed 002's TemplateManager).
///
/// ``templates`` is a directory — a project's ``prompts/`` tree of template files and
/// YAML/JSON dicts — or a dict of the same nesting (``{"main": {"default": "...",
/// "BrowseLink": "...", "components": {...}}}``). ``default_template`` is the text used when
/// no template matches. The settings ``root_space``, ``type``, ``version``, ``default_name``
/// and ``predefined_variables`` start every lookup and render; ``switch`` returns a manager
/// with some of them changed. Raises ``StrataError`` for a tree that does not load (with the
/// file, line and column) or a setting that could lead out of the tree.
#[pyclass(frozen, module = "strata", name = "PromptManager")]
pub struct PyPromptManager {
    manager: PromptManager,
}

/// The arguments of one render, as Python gave them.
struct CallArgs<'a, 'py> {
    key: Option<&'a Bound<'py, PyAny>>,
    feed: Option<&'a Bound<'py, PyAny>>,
    knowledge: Option<&'a Bound<'py, PyAny>>,
    merge: Option<&'a Bound<'py, PyAny>>,
    root_space: Given<'py>,
    type_: Given<'py>,
    version: Given<'py>,
    default_name: Given<'py>,
    pins: Option<&'a Bound<'py, PyAny>>,
    hash: Option<&'a Bound<'py, PyAny>>,
    strict: Option<&'a Bound<'py, PyAny>>,
    secrets: Option<&'a Bound<'py, PyAny>>,
    warnings: Option<&'a Bound<'py, PyAny>>,
}

/// The strategy named by argument `merge`; absent (or `None`) is `feed_only`.
fn merge_arg(obj: Option<&Bound<'_, PyAny>>) -> PyResult<Merge> {
    let Some(name) = opt_str_arg(obj, "merge")? else {
        return Ok(Merge::default());
    };
    Merge::parse(&name).ok_or_else(|| {
        PyValueError::new_err(format!(
            "merge: unknown strategy `{name}` (the strategies are {})",
            Merge::NAMES.join(", ")
        ))
    })
}

/// The settings given by `root_space`, `type`, `version`, `default_name` and
/// `predefined_variables`.
fn overrides(
    root_space: &Given<'_>,
    type_: &Given<'_>,
    version: &Given<'_>,
    default_name: &Given<'_>,
    predefined: &Given<'_>,
) -> PyResult<Overrides> {
    Ok(Overrides {
        root_space: root_space.clearable_str("root_space")?,
        type_: type_.str("type")?,
        version: version.clearable_str("version")?,
        default_name: default_name.str("default_name")?,
        predefined: predefined.map("predefined_variables")?,
    })
}

impl PyPromptManager {
    /// Renders with the converted arguments: the result, its warnings reported.
    fn run(&self, py: Python<'_>, args: &CallArgs<'_, '_>, explain: bool) -> PyResult<Rendered> {
        let key = opt_str_arg(args.key, "key")?;
        let feed = map_arg(args.feed, "feed")?;
        let knowledge = match args.knowledge.filter(|k| !k.is_none()) {
            None => None,
            Some(k) => Some(map_arg(Some(k), "knowledge")?),
        };
        let call = Call {
            key: key.as_deref(),
            feed: Some(&feed),
            knowledge: knowledge.as_ref(),
            merge: merge_arg(args.merge)?,
            overrides: overrides(
                &args.root_space,
                &args.type_,
                &args.version,
                &args.default_name,
                &Given::Absent,
            )?,
            pins: str_map_arg(args.pins, "pins")?,
            hash: opt_str_arg(args.hash, "hash")?,
            undefined: Undefined::strict_if(flag_arg(args.strict, "strict")?),
            secrets: names_arg(args.secrets, "secrets")?,
            explain,
        };
        let sink = sink_arg(args.warnings, "warnings")?;
        let out = on_strata_stack(py, DEFAULT_LIMITS_STACK, || self.manager.render(&call))?
            .or_raise(py)?;
        report_warnings(py, &out.notices, sink)?;
        report_warnings(py, &out.warnings, sink)?;
        Ok(out)
    }
}

/// The templates argument: a directory (`str` or `os.PathLike`) or a dict.
fn builder(templates: &Bound<'_, PyAny>) -> PyResult<strata_prompts::Builder> {
    let builder = PromptManager::builder();
    if templates.cast::<PyString>().is_ok() || templates.hasattr("__fspath__")? {
        let dir = path_arg(templates, "templates")?;
        return Ok(builder.dir(&dir, &dir.display().to_string()));
    }
    if templates.cast::<PyDict>().is_ok() || templates.cast::<PyMapping>().is_ok() {
        return Ok(builder.dict(&json_arg(templates, "templates")?, DICT_NAME));
    }
    Err(PyTypeError::new_err(format!(
        "templates: expected a dict of templates or a directory (str or os.PathLike), got {}",
        type_name(templates)
    )))
}

#[pymethods]
impl PyPromptManager {
    #[new]
    #[pyo3(
        signature = (templates, *, default_template=None, root_space=None, r#type=None,
                     version=None, default_name=None, predefined_variables=None),
        text_signature = "(templates, *, default_template=None, root_space=None, type='main', version=None, default_name='default', predefined_variables=None)"
    )]
    #[allow(clippy::too_many_arguments)] // one per Python argument
    fn new(
        templates: &Bound<'_, PyAny>,
        default_template: Option<&Bound<'_, PyAny>>,
        root_space: Option<&Bound<'_, PyAny>>,
        r#type: Option<&Bound<'_, PyAny>>,
        version: Option<&Bound<'_, PyAny>>,
        default_name: Option<&Bound<'_, PyAny>>,
        predefined_variables: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        let defaults = Settings::default();
        let settings = Settings {
            root_space: opt_str_arg(root_space, "root_space")?,
            type_: opt_str_arg(r#type, "type")?.unwrap_or(defaults.type_),
            version: opt_str_arg(version, "version")?,
            default_name: opt_str_arg(default_name, "default_name")?
                .unwrap_or(defaults.default_name),
            predefined: map_arg(predefined_variables, "predefined_variables")?,
        };
        let mut builder = builder(templates)?.settings(settings);
        if let Some(text) = opt_str_arg(default_template, "default_template")? {
            builder = builder.default_template(&text);
        }
        let manager = builder.build().or_raise(templates.py())?;
        Ok(PyPromptManager { manager })
    }

    /// A manager with the given settings changed; this one is unchanged (both share the
    /// compiled templates).
    ///
    /// A setting left out is kept; ``root_space=None`` and ``version=None`` clear those
    /// settings; ``predefined_variables`` replaces the predefined variables (``None``: none).
    #[pyo3(
        signature = (*, root_space=Given::Absent, r#type=Given::Absent, version=Given::Absent,
                     default_name=Given::Absent, predefined_variables=Given::Absent),
        text_signature = "($self, *, root_space=..., type=..., version=..., default_name=..., predefined_variables=...)"
    )]
    fn switch(
        &self,
        py: Python<'_>,
        root_space: Given<'_>,
        r#type: Given<'_>,
        version: Given<'_>,
        default_name: Given<'_>,
        predefined_variables: Given<'_>,
    ) -> PyResult<Self> {
        let o = overrides(
            &root_space,
            &r#type,
            &version,
            &default_name,
            &predefined_variables,
        )?;
        let manager = self.manager.switch(&o).or_raise(py)?;
        Ok(PyPromptManager { manager })
    }

    /// Renders the template ``key`` resolves to and returns its text.
    ///
    /// ``key`` is a template name (``"BrowseLink"``), optionally with its type
    /// (``"reflection/BrowseLink"``); ``None`` means the default name. ``feed`` holds the
    /// variables and ``knowledge`` more of them (a key may be written in braces, as seed 002
    /// does: ``{"{{ user_input }}": ...}`` is ``user_input``), merged in by ``merge`` (``"feed_only"``:
    /// knowledge wins; ``"attribute_only"``: the feed wins; ``"merge"``: both are kept). Values
    /// are data: a value holding ``{{ x }}`` is printed as written. ``root_space``, ``type``,
    /// ``version`` and ``default_name`` override the settings for this call (``None`` clears
    /// the root space or the version). ``pins`` chooses a version per versioned component;
    /// ``hash`` pins the template's content hash (a ``PromptError`` when it differs).
    /// ``strict=True`` makes an undefined variable an ``UndefinedError``; otherwise each is a
    /// ``StrataWarning`` (issued, or appended to ``warnings`` when that is a list).
    /// ``secrets`` names variables whose values never show in errors, warnings or traces.
    /// A key no template anywhere is named after (almost always a typo) still falls back to
    /// the default, with a ``StrataWarning`` naming the nearest name.
    ///
    /// A template with several variants (versioned components not pinned) raises
    /// ``StrataError``: use ``variants`` for them. No template for the key raises
    /// ``PromptError`` (kind ``template_not_found``) listing every candidate tried.
    #[pyo3(
        signature = (key=None, *, feed=None, knowledge=None, merge=None,
                     root_space=Given::Absent, r#type=Given::Absent, version=Given::Absent,
                     default_name=Given::Absent, pins=None, hash=None, strict=None, secrets=None,
                     warnings=None),
        text_signature = "($self, key=None, *, feed=None, knowledge=None, merge='feed_only', root_space=..., type=..., version=..., default_name=..., pins=None, hash=None, strict=False, secrets=None, warnings=None)"
    )]
    #[allow(clippy::too_many_arguments)] // one per Python argument
    fn render<'py>(
        &self,
        py: Python<'py>,
        key: Option<&Bound<'py, PyAny>>,
        feed: Option<&Bound<'py, PyAny>>,
        knowledge: Option<&Bound<'py, PyAny>>,
        merge: Option<&Bound<'py, PyAny>>,
        root_space: Given<'py>,
        r#type: Given<'py>,
        version: Given<'py>,
        default_name: Given<'py>,
        pins: Option<&Bound<'py, PyAny>>,
        hash: Option<&Bound<'py, PyAny>>,
        strict: Option<&Bound<'py, PyAny>>,
        secrets: Option<&Bound<'py, PyAny>>,
        warnings: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<String> {
        let args = CallArgs {
            key,
            feed,
            knowledge,
            merge,
            root_space,
            type_: r#type,
            version,
            default_name,
            pins,
            hash,
            strict,
            secrets,
            warnings,
        };
        let out = self.run(py, &args, false)?;
        out.only_text(VARIANTS_HINT)
            .map(str::to_string)
            .or_raise(py)
    }

    /// Renders every variant of the template ``key`` resolves to: one per combination of
    /// the versions of its versioned components (the Cartesian product, in declaration
    /// order), each ``{"versions": {component: version}, "text": ...}``; one variant with
    /// empty ``versions`` when it uses none. The arguments are those of ``render``.
    #[pyo3(
        signature = (key=None, *, feed=None, knowledge=None, merge=None,
                     root_space=Given::Absent, r#type=Given::Absent, version=Given::Absent,
                     default_name=Given::Absent, pins=None, hash=None, strict=None, secrets=None,
                     warnings=None),
        text_signature = "($self, key=None, *, feed=None, knowledge=None, merge='feed_only', root_space=..., type=..., version=..., default_name=..., pins=None, hash=None, strict=False, secrets=None, warnings=None)"
    )]
    #[allow(clippy::too_many_arguments)] // one per Python argument
    fn variants<'py>(
        &self,
        py: Python<'py>,
        key: Option<&Bound<'py, PyAny>>,
        feed: Option<&Bound<'py, PyAny>>,
        knowledge: Option<&Bound<'py, PyAny>>,
        merge: Option<&Bound<'py, PyAny>>,
        root_space: Given<'py>,
        r#type: Given<'py>,
        version: Given<'py>,
        default_name: Given<'py>,
        pins: Option<&Bound<'py, PyAny>>,
        hash: Option<&Bound<'py, PyAny>>,
        strict: Option<&Bound<'py, PyAny>>,
        secrets: Option<&Bound<'py, PyAny>>,
        warnings: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyList>> {
        let args = CallArgs {
            key,
            feed,
            knowledge,
            merge,
            root_space,
            type_: r#type,
            version,
            default_name,
            pins,
            hash,
            strict,
            secrets,
            warnings,
        };
        let out = self.run(py, &args, false)?;
        let items = out
            .variants
            .iter()
            .map(|v| to_py(py, &v.to_json()))
            .collect::<PyResult<Vec<_>>>()?;
        PyList::new(py, items)
    }

    /// The trace of the lookup and render of ``key``, as ``strata prompt render --explain
    /// --json`` gives it: ``{"key", "settings", "candidates": [{"id", "file", "won"}],
    /// "variables": [{"name", "source", "value"}]}`` (and ``"unknown_key": {"name",
    /// "did_you_mean"}`` when no template anywhere is named after the key) — every candidate tried in order, the
    /// one that won, and where each variable came from (secrets as ``***``). The arguments
    /// are those of ``render``; the errors too.
    #[pyo3(
        signature = (key=None, *, feed=None, knowledge=None, merge=None,
                     root_space=Given::Absent, r#type=Given::Absent, version=Given::Absent,
                     default_name=Given::Absent, pins=None, hash=None, strict=None, secrets=None,
                     warnings=None),
        text_signature = "($self, key=None, *, feed=None, knowledge=None, merge='feed_only', root_space=..., type=..., version=..., default_name=..., pins=None, hash=None, strict=False, secrets=None, warnings=None)"
    )]
    #[allow(clippy::too_many_arguments)] // one per Python argument
    fn explain<'py>(
        &self,
        py: Python<'py>,
        key: Option<&Bound<'py, PyAny>>,
        feed: Option<&Bound<'py, PyAny>>,
        knowledge: Option<&Bound<'py, PyAny>>,
        merge: Option<&Bound<'py, PyAny>>,
        root_space: Given<'py>,
        r#type: Given<'py>,
        version: Given<'py>,
        default_name: Given<'py>,
        pins: Option<&Bound<'py, PyAny>>,
        hash: Option<&Bound<'py, PyAny>>,
        strict: Option<&Bound<'py, PyAny>>,
        secrets: Option<&Bound<'py, PyAny>>,
        warnings: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let args = CallArgs {
            key,
            feed,
            knowledge,
            merge,
            root_space,
            type_: r#type,
            version,
            default_name,
            pins,
            hash,
            strict,
            secrets,
            warnings,
        };
        let out = self.run(py, &args, true)?;
        let trace = out.explain.map(|e| e.to_json()).unwrap_or(Value::Null);
        to_py(py, &trace)
    }

    /// The id of the template ``key`` resolves to (``"main/BrowseLink"``), or ``None`` when
    /// nothing matches; nothing is rendered.
    #[pyo3(signature = (key=None))]
    fn resolve(&self, py: Python<'_>, key: Option<&Bound<'_, PyAny>>) -> PyResult<Option<String>> {
        let key = opt_str_arg(key, "key")?;
        let id = self.manager.resolve(key.as_deref()).or_raise(py)?;
        Ok(id.map(str::to_string))
    }

    /// Every template and component, in load order: ``{"id", "namespace", "name",
    /// "version", "component", "file", "line", "column", "hash", "reads"}`` (``reads``: the
    /// variables it reads, sorted; ``hash``: its content hash for ``render(hash=...)``).
    fn templates<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let items = self
            .manager
            .templates()
            .into_iter()
            .map(|t| {
                to_py(
                    py,
                    &json!({
                        "id": t.id,
                        "namespace": t.namespace,
                        "name": t.name,
                        "version": t.version,
                        "component": t.component,
                        "file": t.place.file,
                        "line": t.place.line,
                        "column": t.place.column,
                        "hash": t.hash,
                        "reads": t.reads,
                    }),
                )
            })
            .collect::<PyResult<Vec<_>>>()?;
        PyList::new(py, items)
    }

    /// The root space lookups start in, or ``None``.
    #[getter]
    fn root_space(&self) -> Option<String> {
        self.manager.settings().root_space.clone()
    }

    /// The type namespace (``"main"``).
    #[getter]
    fn r#type(&self) -> String {
        self.manager.settings().type_.clone()
    }

    /// The deployment version (``"enterprise"``), or ``None``.
    #[getter]
    fn version(&self) -> Option<String> {
        self.manager.settings().version.clone()
    }

    /// The name every namespace falls back to (``"default"``).
    #[getter]
    fn default_name(&self) -> String {
        self.manager.settings().default_name.clone()
    }

    /// The variables every render sees, below the feed (a new dict each time).
    #[getter]
    fn predefined_variables<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        to_py(
            py,
            &Value::Object(self.manager.settings().predefined.clone()),
        )
    }

    fn __repr__(&self) -> String {
        let s = self.manager.settings();
        let opt = |v: &Option<String>| v.as_ref().map_or("None".to_string(), |v| format!("'{v}'"));
        format!(
            "<strata.PromptManager type='{}' root_space={} version={} default_name='{}'>",
            s.type_,
            opt(&s.root_space),
            opt(&s.version),
            s.default_name
        )
    }
}
