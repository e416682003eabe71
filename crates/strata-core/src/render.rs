use std::borrow::Cow;

use serde_json::Value;
use smallvec::SmallVec;

use crate::{
    map_get, Error, ErrorKind, FieldPath, Layer, Limits, Node, Origin, PathSeg, RenderOptions,
    Rendered, Scope, Seq, Span, Undefined, Warning,
};

/// What is known about a config key once it has been rendered.
#[derive(Debug, Clone)]
struct Resolved<'t> {
    value: Rendered<'t>,
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

/// A parameter as layer P found it (`'r` the lookup's borrow, `'t` what the result may borrow).
#[derive(Debug, Clone, Copy)]
pub enum Param<'r, 't> {
    /// A runtime or caller parameter: data.
    Data(&'t Value),
    /// A config key, rendered through the same chain (once per render).
    Config(&'r Rendered<'t>),
}

/// Field-path steps, and config keys on the chain being followed, kept without allocating
/// (deeper documents and longer chains spill to the heap).
const INLINE_STEPS: usize = 8;

/// The state of one render: the scope, the options, the warnings so far, and the bookkeeping
/// of config-key parameters (memoised values, the chain being followed).
///
/// `'t` is what the result may borrow: the compiled template and the scope's data; `'s` is
/// the borrow of the scope itself.
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
    config: &'t [(String, Node)],
    /// Per config key: its memo slot, when some `{name}` placeholder of the document names it.
    slots: &'t [Option<usize>],
    /// Per memo slot, once its key has been followed (grown as slots fill).
    memo: Vec<Option<Resolved<'t>>>,
    chain: SmallVec<[usize; INLINE_STEPS]>,
    /// While a config key is being rendered: the longest chain found below it so far
    /// (its length, this key included, and the key it continues with).
    deepest: Option<(usize, Option<usize>)>,
    total_bytes: usize,
}

impl<'t, 's> RenderCx<'t, 's> {
    /// A render over `scope`; `config` holds the document's top-level entries (layer P's config
    /// keys), empty when the document is not a map, and `slots` numbers (from 0) the keys that
    /// some `{name}` placeholder of the document names: only those are memoised.
    pub fn new(
        scope: &'s Scope<'t>,
        limits: &'t Limits,
        options: RenderOptions,
        config: &'t [(String, Node)],
        slots: &'t [Option<usize>],
    ) -> RenderCx<'t, 's> {
        debug_assert_eq!(config.len(), slots.len());
        RenderCx {
            scope,
            limits,
            options,
            warnings: Vec::new(),
            base: FieldPath::root(),
            steps: SmallVec::new(),
            from: 0,
            config,
            slots,
            memo: Vec::new(),
            chain: SmallVec::new(),
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
            .with_hint(format!(
                "if this is intended, {}",
                crate::raise_hint("output_bytes_per_string")
            )));
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
                .with_hint(format!(
                    "if this is intended, {}",
                    crate::raise_hint("output_bytes_per_config")
                )));
            }
        }
        Ok(rendered)
    }

    /// Renders every top-level entry in order and returns the entries and the warnings.
    ///
    /// Keys that a `{name}` placeholder names are rendered once, when first needed, and
    /// memoised; every other key is rendered in place.
    #[allow(clippy::type_complexity)]
    pub fn render_config(
        mut self,
    ) -> Result<(Vec<(Cow<'t, str>, Rendered<'t>)>, Vec<Warning>), Error> {
        let config = self.config;
        let mut entries = Vec::with_capacity(config.len());
        for (index, (key, node)) in config.iter().enumerate() {
            let value = if let Some(slot) = self.slots[index] {
                self.follow(index, slot, Span::new(0, 0))?;
                // Moved out of the memo below, once no later key can refer to it any more.
                Rendered::Array(Vec::new())
            } else if node.is_const() {
                node.render_child(&mut self, Step::Key(key))?
            } else {
                // Still the start of any chain of keys its placeholders follow.
                self.chain.push(index);
                let value = node.render_child(&mut self, Step::Key(key));
                self.chain.pop();
                value?
            };
            entries.push((Cow::Borrowed(key.as_str()), value));
        }
        let mut memo = self.memo;
        for (index, slot) in self.slots.iter().enumerate() {
            if let Some(done) = slot.and_then(|slot| memo.get_mut(slot)?.take()) {
                entries[index].1 = done.value;
            }
        }
        Ok((entries, self.warnings))
    }

    /// Looks a parameter up: runtime parameters first, then config keys, then caller
    /// parameters. `span` is the placeholder's, for chain errors.
    pub fn param(&mut self, name: &str, span: Span) -> Result<Option<Param<'_, 't>>, Error> {
        if let Some(v) = map_get(self.scope.runtime_params, name) {
            return Ok(Some(Param::Data(v)));
        }
        let key = self.config.iter().position(|(k, _)| k == name);
        if let Some((index, Some(slot))) = key.map(|i| (i, self.slots[i])) {
            self.follow(index, slot, span)?;
            return Ok(Some(Param::Config(self.resolved(slot))));
        }
        Ok(map_get(self.scope.caller_params, name).map(Param::Data))
    }

    /// The value of the config key in memo `slot`, which [`RenderCx::follow`] has rendered.
    fn resolved(&self, slot: usize) -> &Rendered<'t> {
        match self.memo.get(slot).and_then(Option::as_ref) {
            Some(done) => &done.value,
            None => unreachable!("memo slot {slot} is filled before it is read"),
        }
    }

    /// What is known about config key `index`, once it has been followed.
    fn memoised(&self, index: usize) -> Option<&Resolved<'t>> {
        let slot = self.slots.get(index).copied().flatten()?;
        self.memo.get(slot).and_then(Option::as_ref)
    }

    fn names(&self, chain: &[usize]) -> Vec<String> {
        chain.iter().map(|&i| self.config[i].0.clone()).collect()
    }

    /// The names of the longest chain of config-key references starting at `index` (only
    /// `index` itself when it has not been rendered yet).
    fn chain_from(&self, index: usize) -> Vec<String> {
        let mut names = vec![self.config[index].0.clone()];
        let mut at = self.memoised(index).and_then(|r| r.next);
        while let Some(i) = at {
            names.push(self.config[i].0.clone());
            at = self.memoised(i).and_then(|r| r.next);
        }
        names
    }

    /// Renders config key `index` (once; later calls only check the chain) and memoises it in
    /// memo `slot`.
    fn follow(&mut self, index: usize, slot: usize, span: Span) -> Result<(), Error> {
        let config = self.config;
        let name: &'t str = &config[index].0;
        if let Some(pos) = self.chain.iter().position(|&k| k == index) {
            let mut names = self.names(&self.chain[pos..]);
            names.push(name.to_string());
            return Err(Error::new(
                Layer::PARAMS,
                ErrorKind::Cycle,
                format!("parameter cycle: {}", names.join(" -> ")),
            )
            .with_span(span)
            .with_hint("a parameter cannot refer to itself, directly or through others"));
        }
        let links = self.chain.len();
        let depth = match self.memoised(index) {
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
                if slot >= self.memo.len() {
                    self.memo.resize_with(slot + 1, || None);
                }
                self.memo[slot] = Some(Resolved { value, depth, next });
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
            Layer::PARAMS,
            ErrorKind::Limit,
            format!(
                "parameter chain is longer than {} links: {}",
                self.limits.param_links,
                names.join(" -> ")
            ),
        )
        .with_span(span)
        .with_hint(format!(
            "shorten the chain, or {}",
            crate::raise_hint("param_links")
        )))
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
