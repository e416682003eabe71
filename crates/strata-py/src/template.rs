//! `strata.Template` and `strata.render`: compile a document once, render it many times.

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use strata_core::{Limits, RenderOptions, Scope};
use strata_pipeline::{Chain, Template};

use crate::convert::{
    env_arg, flag_arg, json_arg, map_arg, names_arg, rendered_to_py, sink_arg, to_py,
};
use crate::errors::{report_warnings, OrRaise};
use crate::stack::{on_strata_stack, DEFAULT_LIMITS_STACK};

/// A document compiled once for a chain of layers, rendered many times.
///
/// ``template`` is any JSON-like value: a string, or a dict or list whose string leaves are
/// templates (map keys never are; when it is a dict, its top-level keys are parameters
/// too). ``layers`` names the stages in order, from ``"inputs"``, ``"context"``, ``"env"``
/// and ``"params"``; the default is all four in that order. Raises ``StrataError`` for a
/// malformed placeholder, ``ValueError`` for an unknown layer, ``TypeError`` or
/// ``ValueError`` for a value that is not plain JSON-like data.
#[pyclass(frozen, module = "strata", name = "Template")]
pub struct PyTemplate {
    template: Template,
    chain: Chain,
}

/// The arguments every render takes, as Python gave them (converted by `render_with`).
pub struct RenderArgs<'py> {
    /// Layer E's variables (`env`, `secrets`).
    pub env: Option<&'py Bound<'py, PyAny>>,
    /// Names of `env` variables whose values are secret.
    pub secrets: Option<&'py Bound<'py, PyAny>>,
    /// Layer P's caller parameters.
    pub params: Option<&'py Bound<'py, PyAny>>,
    /// Layer C's namespaces.
    pub context: Option<&'py Bound<'py, PyAny>>,
    /// Layer I's directive inputs.
    pub inputs: Option<&'py Bound<'py, PyAny>>,
    /// Missing values are errors.
    pub strict: Option<&'py Bound<'py, PyAny>>,
    /// Return the value with secrets shown as `***`.
    pub redacted: Option<&'py Bound<'py, PyAny>>,
    /// Where warnings go instead of Python's `warnings` module.
    pub warnings: Option<&'py Bound<'py, PyAny>>,
}

impl PyTemplate {
    /// Compiles `template` for `layers`.
    pub fn compile(
        template: &Bound<'_, PyAny>,
        layers: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<PyTemplate> {
        let py = template.py();
        let chain = match layers.filter(|l| !l.is_none()) {
            None => Chain::full(),
            Some(l) => {
                let names = names_arg(Some(l), "layers")?;
                Chain::from_names(&names).map_err(|e| {
                    let hint = e.hint().map_or(String::new(), |h| format!(" ({h})"));
                    PyValueError::new_err(format!("layers: {}{hint}", e.message()))
                })?
            }
        };
        let document = json_arg(template, "template")?;
        let template = on_strata_stack(py, DEFAULT_LIMITS_STACK, || {
            Template::compile_owned(document, &chain, &Limits::default())
        })?
        .or_raise(py)?;
        Ok(PyTemplate { template, chain })
    }

    /// Renders with the converted arguments.
    pub fn render_with<'py>(
        &self,
        py: Python<'py>,
        args: &RenderArgs<'py>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let sink = sink_arg(args.warnings, "warnings")?;
        let mut env = env_arg(args.env, "env")?;
        for name in names_arg(args.secrets, "secrets")? {
            env.mark_secret(&name);
        }
        let params = map_arg(args.params, "params")?;
        let context = map_arg(args.context, "context")?;
        let inputs = map_arg(args.inputs, "inputs")?;
        let strict = flag_arg(args.strict, "strict")?;
        let redacted = flag_arg(args.redacted, "redacted")?;
        let out = on_strata_stack(py, DEFAULT_LIMITS_STACK, || {
            let scope = Scope {
                env: &env,
                caller_params: &params,
                context: &context,
                inputs: &inputs,
                ..Scope::default()
            };
            self.template
                .render(&scope, &RenderOptions::strict_if(strict))
        })?
        .or_raise(py)?;
        report_warnings(py, &out.warnings, sink)?;
        if redacted {
            to_py(py, &out.value.to_redacted_json())
        } else {
            rendered_to_py(py, &out.value)
        }
    }
}

#[pymethods]
impl PyTemplate {
    #[new]
    #[pyo3(signature = (template, layers=None))]
    fn new(template: &Bound<'_, PyAny>, layers: Option<&Bound<'_, PyAny>>) -> PyResult<Self> {
        PyTemplate::compile(template, layers)
    }

    /// Renders the template and returns the value: plain Python data, a string exactly as
    /// long as its text, whole-value placeholders (``"${state.n}"``) keeping their type.
    ///
    /// ``env`` maps variable names to strings (``os.environ`` works; the process
    /// environment is not read otherwise); ``secrets`` names the ``env`` variables to redact;
    /// ``params`` are the caller's parameters, ``context`` layer C's namespaces, ``inputs``
    /// the directive inputs. Substituted values are data: never scanned again by any layer.
    /// ``strict=True`` makes a missing value a ``strata.UndefinedError``; otherwise each is a
    /// ``strata.StrataWarning``, issued through Python's ``warnings`` module or, when
    /// ``warnings`` is a list, appended to it instead. ``redacted=True`` returns the value
    /// with every secret shown as ``***`` (for logs).
    #[pyo3(
        signature = (*, env=None, params=None, context=None, inputs=None, secrets=None,
                     strict=None, redacted=None, warnings=None),
        text_signature = "($self, *, env=None, params=None, context=None, inputs=None, secrets=None, strict=False, redacted=False, warnings=None)"
    )]
    #[allow(clippy::too_many_arguments)] // one per Python argument
    fn render<'py>(
        &self,
        py: Python<'py>,
        env: Option<&'py Bound<'py, PyAny>>,
        params: Option<&'py Bound<'py, PyAny>>,
        context: Option<&'py Bound<'py, PyAny>>,
        inputs: Option<&'py Bound<'py, PyAny>>,
        secrets: Option<&'py Bound<'py, PyAny>>,
        strict: Option<&'py Bound<'py, PyAny>>,
        redacted: Option<&'py Bound<'py, PyAny>>,
        warnings: Option<&'py Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let args = RenderArgs {
            env,
            secrets,
            params,
            context,
            inputs,
            strict,
            redacted,
            warnings,
        };
        self.render_with(py, &args)
    }

    /// The layers the template was compiled for, in order.
    #[getter]
    fn layers(&self) -> Vec<&'static str> {
        self.chain.layers().map(|l| l.name()).collect()
    }

    /// True when the template holds no placeholder: every render returns it unchanged.
    #[getter]
    fn is_constant(&self) -> bool {
        self.template.is_const()
    }

    fn __repr__(&self) -> String {
        let names: Vec<String> = self.layers().iter().map(|l| format!("'{l}'")).collect();
        format!("<strata.Template layers=[{}]>", names.join(", "))
    }
}

/// Renders ``template`` once: ``strata.Template(template, layers=layers).render(...)``.
///
/// Compile a ``strata.Template`` instead when the same document is rendered more than once.
/// See ``Template.render`` for the arguments, the result and the errors.
#[pyfunction]
#[pyo3(
    signature = (template, *, env=None, params=None, context=None, inputs=None, layers=None,
                 secrets=None, strict=None, redacted=None, warnings=None),
    text_signature = "(template, *, env=None, params=None, context=None, inputs=None, layers=None, secrets=None, strict=False, redacted=False, warnings=None)"
)]
#[allow(clippy::too_many_arguments)] // one per Python argument
pub fn render<'py>(
    py: Python<'py>,
    template: &Bound<'py, PyAny>,
    env: Option<&'py Bound<'py, PyAny>>,
    params: Option<&'py Bound<'py, PyAny>>,
    context: Option<&'py Bound<'py, PyAny>>,
    inputs: Option<&'py Bound<'py, PyAny>>,
    layers: Option<&'py Bound<'py, PyAny>>,
    secrets: Option<&'py Bound<'py, PyAny>>,
    strict: Option<&'py Bound<'py, PyAny>>,
    redacted: Option<&'py Bound<'py, PyAny>>,
    warnings: Option<&'py Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyAny>> {
    let args = RenderArgs {
        env,
        secrets,
        params,
        context,
        inputs,
        strict,
        redacted,
        warnings,
    };
    PyTemplate::compile(template, layers)?.render_with(py, &args)
}
