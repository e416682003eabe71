use serde_json::Value;

use crate::{
    Error, FieldPath, Layer, Limits, Node, Origin, PathSeg, Rendered, Scope, Seq, Span, Warning,
};

/// What is known about a config key once it has been rendered.
#[derive(Debug, Clone)]
struct Resolved {
    value: Rendered,
    /// Length of the longest chain of config-key references starting at this key (1 when the
    /// key refers to no other key).
    depth: usize,
    /// The key that longest chain continues with; its own `Resolved` holds the rest.
    next: Option<usize>,
}

/// One step of the field path being rendered, borrowed from the compiled tree (turned into a
/// [`FieldPath`] only when a warning or an error needs it).
#[derive(Debug, Clone, Copy)]
pub(crate) enum Step<'a> {
    /// A map key.
    Key(&'a str),
    /// A list index.
    Index(usize),
}

/// A parameter as layer P found it.
#[derive(Debug, Clone)]
pub enum Param<'a> {
    /// A runtime or caller parameter: data.
    Data(&'a Value),
    /// A config key, rendered through the same chain.
    Config(Rendered),
}

/// The state of one render: the scope, the options, the warnings so far, and the bookkeeping
/// of config-key parameters (memoised values, the chain being followed).
pub struct RenderCx<'a> {
    /// What the layers substitute from.
    pub scope: &'a Scope<'a>,
    /// The limits in force.
    pub limits: &'a Limits,
    /// When true, a missing variable, path or input is an error instead of a warning.
    pub strict: bool,
    warnings: Vec<Warning>,
    /// The field path being rendered: `base` followed by `steps[from..]`.
    base: FieldPath,
    steps: Vec<Step<'a>>,
    from: usize,
    config: &'a [(String, Node)],
    /// Boxed, so that the table itself stays small: a large allocation at the start of every
    /// render makes the system allocator consolidate its caches of small blocks first.
    memo: Vec<Option<Box<Resolved>>>,
    chain: Vec<usize>,
    /// While a config key is being rendered: the longest chain found below it so far
    /// (its length, this key included, and the key it continues with).
    deepest: Option<(usize, Option<usize>)>,
    total_bytes: usize,
}

impl<'a> RenderCx<'a> {
    /// A render over `scope`; `config` holds the document's top-level entries (layer P's config
    /// keys), empty when the document is not a map.
    pub fn new(
        scope: &'a Scope<'a>,
        limits: &'a Limits,
        strict: bool,
        config: &'a [(String, Node)],
    ) -> RenderCx<'a> {
        RenderCx {
            scope,
            limits,
            strict,
            warnings: Vec::new(),
            base: FieldPath::root(),
            steps: Vec::new(),
            from: 0,
            config,
            memo: (0..config.len()).map(|_| None).collect(),
            chain: Vec::new(),
            deepest: None,
            total_bytes: 0,
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
    pub(crate) fn in_step<R>(&mut self, step: Step<'a>, f: impl FnOnce(&mut Self) -> R) -> R {
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
        step: Option<Step<'a>>,
        f: impl FnOnce(&mut Self) -> R,
    ) -> R {
        let outer_base = std::mem::replace(&mut self.base, base);
        let outer_from = std::mem::replace(&mut self.from, self.steps.len());
        self.steps.extend(step);
        let result = f(self);
        self.steps.truncate(self.from);
        self.from = outer_from;
        self.base = outer_base;
        result
    }

    /// Renders `node` as the node at `path`.
    pub(crate) fn render_node_at(
        &mut self,
        node: &'a Node,
        path: &FieldPath,
    ) -> Result<Rendered, Error> {
        self.at_path(path.clone(), None, |cx| node.render_here(cx))
    }

    /// Reports a missing value: a warning, or an error in strict mode.
    pub fn missing(&mut self, layer: Layer, message: String, span: Span) -> Result<(), Error> {
        if self.strict {
            return Err(Error::new(layer, message)
                .with_span(span)
                .with_hint("strict mode turns missing values into errors"));
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
                format!(
                    "rendered string exceeds {} bytes",
                    self.limits.output_bytes_per_string
                ),
            )
            .with_span(span)
            .with_hint("raise the output-bytes-per-string limit if this is intended"));
        }
        Ok(())
    }

    /// Renders one string leaf at `path`, attaching the path to errors.
    pub fn render_leaf(&mut self, seq: &Seq, path: &FieldPath) -> Result<Rendered, Error> {
        self.at_path(path.clone(), None, |cx| cx.render_leaf_here(seq))
    }

    /// Renders one string leaf at the current field path, attaching the path to errors.
    pub(crate) fn render_leaf_here(&mut self, seq: &Seq) -> Result<Rendered, Error> {
        let rendered = match seq.render(self) {
            Ok(rendered) => rendered,
            Err(e) => return Err(e.at_path(&self.path())),
        };
        if let Rendered::Text(t) = &rendered {
            self.total_bytes += t.text.len();
            if self.total_bytes > self.limits.output_bytes_per_config {
                return Err(Error::new(
                    Layer::Request,
                    format!(
                        "rendered document exceeds {} bytes",
                        self.limits.output_bytes_per_config
                    ),
                )
                .at_path(&self.path())
                .with_hint("raise the output-bytes-per-config limit if this is intended"));
            }
        }
        Ok(rendered)
    }

    /// Renders the document's top-level entry `index` (a config key) as the start of a chain.
    pub fn render_config_entry(&mut self, index: usize) -> Result<Rendered, Error> {
        if self.memo[index].is_none() {
            self.follow(index, Span::new(0, 0))?;
        }
        Ok(self.resolved(index).clone())
    }

    /// Renders every top-level entry in order, as [`RenderCx::render_config_entry`] does for
    /// each, and returns the entries (values moved, not copied) and the warnings.
    #[allow(clippy::type_complexity)]
    pub fn render_config(mut self) -> Result<(Vec<(String, Rendered)>, Vec<Warning>), Error> {
        for index in 0..self.config.len() {
            if self.memo[index].is_none() {
                self.follow(index, Span::new(0, 0))?;
            }
        }
        let entries = self
            .memo
            .into_iter()
            .zip(self.config)
            .map(|(done, (key, _))| {
                let done = done.expect("every config entry is rendered above");
                (key.clone(), done.value)
            })
            .collect();
        Ok((entries, self.warnings))
    }

    /// Looks a parameter up: runtime parameters first, then config keys, then caller
    /// parameters. `span` is the placeholder's, for chain errors.
    pub fn param(&mut self, name: &str, span: Span) -> Result<Option<Param<'a>>, Error> {
        if let Some(v) = self.scope.runtime_params.get(name) {
            return Ok(Some(Param::Data(v)));
        }
        if let Some(index) = self.config.iter().position(|(k, _)| k == name) {
            self.follow(index, span)?;
            return Ok(Some(Param::Config(self.resolved(index).clone())));
        }
        Ok(self.scope.caller_params.get(name).map(Param::Data))
    }

    /// The value of a config key that [`RenderCx::follow`] has rendered.
    fn resolved(&self, index: usize) -> &Rendered {
        match &self.memo[index] {
            Some(done) => &done.value,
            None => unreachable!("config key {index} is rendered before it is read"),
        }
    }

    fn names(&self, chain: &[usize]) -> Vec<String> {
        chain.iter().map(|&i| self.config[i].0.clone()).collect()
    }

    /// The names of the longest chain of config-key references starting at `index` (only
    /// `index` itself when it has not been rendered yet).
    fn chain_from(&self, index: usize) -> Vec<String> {
        let mut names = vec![self.config[index].0.clone()];
        let mut at = self.memo[index].as_ref().and_then(|r| r.next);
        while let Some(i) = at {
            names.push(self.config[i].0.clone());
            at = self.memo[i].as_ref().and_then(|r| r.next);
        }
        names
    }

    /// Renders config key `index` (once; later calls only check the chain) and memoises it.
    fn follow(&mut self, index: usize, span: Span) -> Result<(), Error> {
        let config = self.config;
        let name = &config[index].0;
        if let Some(pos) = self.chain.iter().position(|&k| k == index) {
            let mut names = self.names(&self.chain[pos..]);
            names.push(name.clone());
            return Err(Error::new(
                Layer::Params,
                format!("parameter cycle: {}", names.join(" -> ")),
            )
            .with_span(span)
            .with_hint("a parameter cannot refer to itself, directly or through others"));
        }
        let links = self.chain.len();
        let depth = match &self.memo[index] {
            Some(done) => {
                let depth = done.depth;
                self.check_links(links + depth - 1, index, span)?;
                depth
            }
            None => {
                self.check_links(links, index, span)?;
                self.chain.push(index);
                let outer = self.deepest.replace((1, None));
                let result = self.at_path(FieldPath::root(), Some(Step::Key(name)), |cx| {
                    config[index].1.render_here(cx)
                });
                self.chain.pop();
                let (depth, next) =
                    std::mem::replace(&mut self.deepest, outer).unwrap_or((1, None));
                let value = result?;
                self.memo[index] = Some(Box::new(Resolved { value, depth, next }));
                depth
            }
        };
        if let Some((longest, next)) = &mut self.deepest {
            if depth + 1 > *longest {
                *longest = depth + 1;
                *next = Some(index);
            }
        }
        Ok(())
    }

    /// Fails when following the chain from `index` takes the current chain past the link
    /// limit (`links` links in all).
    fn check_links(&self, links: usize, index: usize, span: Span) -> Result<(), Error> {
        if links <= self.limits.param_links {
            return Ok(());
        }
        let mut names = self.names(&self.chain);
        names.extend(self.chain_from(index));
        Err(Error::new(
            Layer::Params,
            format!(
                "parameter chain is longer than {} links: {}",
                self.limits.param_links,
                names.join(" -> ")
            ),
        )
        .with_span(span)
        .with_hint("shorten the chain or raise the param-links limit"))
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
