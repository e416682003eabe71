use serde_json::Value;
use smallvec::SmallVec;

use crate::{
    Error, ErrorKind, FieldPath, Layer, Limits, Node, Origin, PathSeg, RenderOptions, Rendered,
    Scope, Seq, Span, Undefined, Warning,
};

/// One step of the field path being rendered, borrowed from the compiled tree (turned into a
/// [`FieldPath`] only when a warning or an error needs it).
#[derive(Debug, Clone, Copy)]
pub(crate) enum Step<'a> {
    /// A map key.
    Key(&'a str),
    /// A list index.
    Index(usize),
}

/// A parameter as layer P found it (`'r` the lookup's borrow, `'t` what the result may borrow).
#[derive(Debug, Clone, Copy)]
pub enum Param<'r, 't> {
    /// A runtime or caller parameter: data.
    Data(&'t Value),
    /// A config key, rendered through the same chain (once per render).
    Config(&'r Rendered<'t>),
}

/// Where layer P's placeholders find their parameters during one render
/// ([`RenderCx::param`]): the layer's crate implements it (with its fixpoint over the
/// document's own keys) and hands it to [`RenderCx::new`].
///
/// Lookups nest: rendering a config key (with [`RenderCx::render_entry`]) renders its own
/// placeholders, which look parameters up again while the outer lookup is still running. So
/// a lookup takes `&self`, and keeps whatever it learns during the render in cells.
pub trait ParamLookup<'t> {
    /// The parameter `name`, or `None` when there is none (the placeholder stays as written).
    /// `span` is the placeholder's, for errors.
    fn param<'a>(
        &'a self,
        cx: &mut RenderCx<'t, '_>,
        name: &str,
        span: Span,
    ) -> Result<Option<Param<'a, 't>>, Error>;
}

/// Field-path steps kept without allocating (deeper documents spill to the heap).
const INLINE_STEPS: usize = 8;

/// The state of one render: the scope, the options, the warnings so far, the field path being
/// rendered, and the lookup layer P's placeholders go through.
///
/// `'t` is what the result may borrow: the compiled template and the scope's data; `'s` is
/// the borrow of the scope and of the parameter lookup.
pub struct RenderCx<'t, 's> {
    /// What the layers substitute from.
    pub scope: &'s Scope<'t>,
    /// The limits in force.
    pub limits: &'t Limits,
    /// What a missing variable, path or input does.
    pub options: RenderOptions,
    warnings: Vec<Warning>,
    /// The field path being rendered: `base` followed by `steps[from..]`.
    base: FieldPath,
    steps: SmallVec<[Step<'t>; INLINE_STEPS]>,
    from: usize,
    params: &'s dyn ParamLookup<'t>,
    total_bytes: usize,
    /// The text the tree's constants may point into ([`crate::Const::Source`]).
    pub(crate) source: &'t str,
}

impl<'t, 's> RenderCx<'t, 's> {
    /// A render over `scope`, whose layer P placeholders look their parameters up in `params`,
    /// of a tree whose constants may point into `source` (the text it was read from; empty
    /// for a tree compiled from a value).
    pub fn new(
        scope: &'s Scope<'t>,
        limits: &'t Limits,
        options: RenderOptions,
        params: &'s dyn ParamLookup<'t>,
        source: &'t str,
    ) -> RenderCx<'t, 's> {
        RenderCx {
            scope,
            limits,
            options,
            warnings: Vec::new(),
            base: FieldPath::root(),
            steps: SmallVec::new(),
            from: 0,
            params,
            total_bytes: 0,
            source,
        }
    }

    /// The warnings collected so far.
    pub fn into_warnings(self) -> Vec<Warning> {
        self.warnings
    }

    /// The field path being rendered.
    fn path(&self) -> FieldPath {
        let mut segs = Vec::with_capacity(self.base.0.len() + self.steps.len() - self.from);
        segs.extend(self.base.0.iter().cloned());
        segs.extend(self.steps[self.from..].iter().map(|step| match *step {
            Step::Key(k) => PathSeg::Key(k.to_string()),
            Step::Index(i) => PathSeg::Index(i),
        }));
        FieldPath(segs)
    }

    /// Runs `f` one step deeper in the field path.
    pub(crate) fn in_step<R>(&mut self, step: Step<'t>, f: impl FnOnce(&mut Self) -> R) -> R {
        let depth = self.steps.len();
        self.steps.push(step);
        let result = f(self);
        self.steps.truncate(depth);
        result
    }

    /// Runs `f` with the field path set to `base` followed by `step` (when given), then puts
    /// the current path back.
    fn at_path<R>(
        &mut self,
        base: FieldPath,
        step: Option<Step<'t>>,
        f: impl FnOnce(&mut Self) -> R,
    ) -> R {
        let outer_base = std::mem::replace(&mut self.base, base);
        let outer_from = std::mem::replace(&mut self.from, self.steps.len());
        if let Some(step) = step {
            self.steps.push(step);
        }
        let result = f(self);
        self.steps.truncate(self.from);
        self.from = outer_from;
        self.base = outer_base;
        result
    }

    /// Renders `node` as the top-level entry `key` of the document (field path `key`, in
    /// warnings and errors), whatever is being rendered now. A constant is returned as it is.
    pub fn render_entry(&mut self, key: &'t str, node: &'t Node) -> Result<Rendered<'t>, Error> {
        match node {
            Node::Const(c) => Ok(c.rendered(self.source)),
            // At the root already (the document's own entries): one step deeper.
            _ if self.from == self.steps.len() && self.base.is_root() => {
                self.in_step(Step::Key(key), |cx| node.render_here(cx))
            }
            _ => self.at_path(FieldPath::root(), Some(Step::Key(key)), |cx| {
                node.render_here(cx)
            }),
        }
    }

    /// Looks parameter `name` up in the render's [`ParamLookup`]. `span` is the placeholder's,
    /// for errors.
    #[inline]
    pub fn param(&mut self, name: &str, span: Span) -> Result<Option<Param<'s, 't>>, Error> {
        let params = self.params;
        params.param(self, name, span)
    }

    /// Renders `node` as the node at `path`.
    pub(crate) fn render_node_at(
        &mut self,
        node: &'t Node,
        path: &FieldPath,
    ) -> Result<Rendered<'t>, Error> {
        self.at_path(path.clone(), None, |cx| node.render_here(cx))
    }

    /// Reports a missing value: nothing, a warning, or an error, as the options say.
    pub fn missing(&mut self, layer: Layer, message: String, span: Span) -> Result<(), Error> {
        match self.options.undefined {
            Undefined::Strict => {
                return Err(Error::new(layer, ErrorKind::Undefined, message)
                    .with_span(span)
                    .with_hint("strict mode turns missing values into errors"))
            }
            Undefined::Lenient => return Ok(()),
            Undefined::Warn => {}
        }
        self.warnings.push(Warning {
            layer,
            message,
            path: self.path(),
            span: Some(span),
        });
        Ok(())
    }

    /// Fails when a rendered string has grown past the per-string limit.
    pub fn check_output(&self, len: usize, layer: Layer, span: Span) -> Result<(), Error> {
        if len > self.limits.output_bytes_per_string {
            return Err(Error::new(
                layer,
                ErrorKind::Limit,
                format!(
                    "rendered string exceeds {} bytes",
                    self.limits.output_bytes_per_string
                ),
            )
            .with_span(span)
            .with_limit(
                "output_bytes_per_string",
                self.limits.output_bytes_per_string,
                "if this is intended,",
            ));
        }
        Ok(())
    }

    /// Renders one string leaf at the current field path, attaching the path to errors.
    ///
    /// Everything a leaf yields counts against the per-document limit: rendered text, and
    /// whole values too (a parameter, a context value, a config key referenced whole), which
    /// are borrowed, not copied, and counted by the size of their text form.
    pub(crate) fn render_leaf_here(&mut self, seq: &Seq) -> Result<Rendered<'t>, Error> {
        let rendered = match seq.render(self) {
            Ok(rendered) => rendered,
            Err(e) => return Err(e.at_path(&self.path())),
        };
        let budget = self.limits.output_bytes_per_config
            - self.total_bytes.min(self.limits.output_bytes_per_config);
        match rendered.size_within(budget) {
            Some(bytes) => self.total_bytes += bytes,
            None => {
                return Err(Error::new(
                    Layer::REQUEST,
                    ErrorKind::Limit,
                    format!(
                        "rendered document exceeds {} bytes",
                        self.limits.output_bytes_per_config
                    ),
                )
                .at_path(&self.path())
                .with_limit(
                    "output_bytes_per_config",
                    self.limits.output_bytes_per_config,
                    "if this is intended,",
                ));
            }
        }
        Ok(rendered)
    }
}

impl Origin {
    /// The origin of substituted data: secret when `secret`, data otherwise.
    pub fn of_data(secret: bool) -> Origin {
        if secret {
            Origin::Secret
        } else {
            Origin::Data
        }
    }
}
