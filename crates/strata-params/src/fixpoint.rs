use std::borrow::Cow;
use std::cell::{Cell, OnceCell, RefCell};

use smallvec::SmallVec;
use strata_core::syntax::{Param, ParamLookup, RenderCx};
use strata_core::{
    map_get, Chunked, Error, ErrorKind, FieldPath, Layer, Limits, Node, RenderOptions, Rendered,
    Scope, Span, Warning,
};

/// Layer P's fixpoint for one compiled document: which of its top-level keys (config keys)
/// some `{name}` placeholder names. Those are rendered once per render, when first needed,
/// and memoised; chains of them are followed up to `limits.param_links` links, and a cycle
/// is an error naming it (`a -> b -> a`).
///
/// Made once per compiled document ([`Fixpoint::of`]); [`Fixpoint::render`] renders it.
#[derive(Debug, Clone, Default)]
pub struct Fixpoint {
    /// The top-level keys some `{name}` names, by their index in the document's map, in
    /// document order: a key's memo slot is its place here.
    memoised: Vec<usize>,
    /// The memo slots, in the order of their keys' names (to look a name up).
    by_name: Vec<usize>,
}

/// The compiled document a [`Fixpoint`] renders: its root node, the text its constants may
/// point into (empty for a document compiled from a value), and the limits of its render.
#[derive(Debug, Clone, Copy)]
pub struct Compiled<'t> {
    /// The root node (the document the fixpoint was made of).
    pub root: &'t Node,
    /// The text the document was read from.
    pub source: &'t str,
    /// The limits of the render.
    pub limits: &'t Limits,
}

impl Fixpoint {
    /// The fixpoint of compiled document `root`: a memo slot for every top-level key that some
    /// `{name}` placeholder anywhere in the document names (none when `root` is not a map).
    pub fn of(root: &Node) -> Fixpoint {
        let Node::Object(entries) = root else {
            return Fixpoint::default();
        };
        let mut named = Vec::new();
        root.param_names(&mut named);
        named.sort_unstable();
        named.dedup();
        let memoised: Vec<usize> = entries
            .iter()
            .enumerate()
            .filter(|(_, (key, _))| named.binary_search(&key.as_str()).is_ok())
            .map(|(index, _)| index)
            .collect();
        let mut by_name: Vec<usize> = (0..memoised.len()).collect();
        by_name.sort_unstable_by_key(|&slot| entries[memoised[slot]].0.as_str());
        Fixpoint { memoised, by_name }
    }

    /// The memo slot of the top-level key at `index`, when some `{name}` names it.
    fn slot_of(&self, index: usize) -> Option<usize> {
        self.memoised.binary_search(&index).ok()
    }

    /// The index and memo slot of the memoised top-level key `name` (among `config`, the
    /// document's entries).
    fn named(&self, config: &Chunked<(String, Node)>, name: &str) -> Option<(usize, usize)> {
        let at = self
            .by_name
            .binary_search_by(|&slot| config[self.memoised[slot]].0.as_str().cmp(name))
            .ok()?;
        let slot = self.by_name[at];
        Some((self.memoised[slot], slot))
    }

    /// Renders `doc` — the document this fixpoint was made of — against `scope`, and returns
    /// the result and the warnings.
    ///
    /// `{name}` looks up runtime parameters first, then the document's config keys, then the
    /// caller's parameters. The top-level entries of a map are rendered in order, except that
    /// a memoised key is rendered when a placeholder first needs it (through every layer of
    /// the chain, like any other value) and its value reused after that.
    pub fn render<'t>(
        &'t self,
        doc: Compiled<'t>,
        scope: &Scope<'t>,
        options: RenderOptions,
    ) -> Result<(Rendered<'t>, Vec<Warning>), Error> {
        let mut entries = Vec::with_capacity(match doc.root {
            Node::Object(config) => config.len(),
            _ => 0,
        });
        let mut whole = None;
        let (mut memo, warnings) = self.walk(doc, scope, options, &mut |key, piece| {
            let value = match piece {
                Piece::Done(value) => value,
                // Moved out of the memo below, once no later key can refer to it any more.
                Piece::Memoised(_) => Rendered::Array(Vec::new()),
            };
            match key {
                Some(key) => entries.push((Cow::Borrowed(key), value)),
                None => whole = Some(value),
            }
            Ok(())
        })?;
        if let Some(value) = whole {
            return Ok((value, warnings));
        }
        for (slot, &index) in self.memoised.iter().enumerate() {
            if let Some(done) = memo[slot].take() {
                entries[index].1 = done.value;
            }
        }
        Ok((Rendered::Object(entries), warnings))
    }

    /// Renders `doc` as [`Fixpoint::render`] does, handing `each` the rendered document a
    /// top-level entry at a time (its key, its value) as it is rendered, instead of
    /// gathering a tree: a caller that writes each entry out holds one at a time. A document
    /// that is not a map is handed over whole, without a key. Returns the warnings; an error
    /// of `each` stops the render.
    pub fn render_each<'t>(
        &'t self,
        doc: Compiled<'t>,
        scope: &Scope<'t>,
        options: RenderOptions,
        each: &mut EachEntry<'_, 't>,
    ) -> Result<Vec<Warning>, Error> {
        let (_, warnings) = self.walk(doc, scope, options, &mut |key, piece| match piece {
            Piece::Done(value) => each(key, &value),
            Piece::Memoised(value) => each(key, value),
        })?;
        Ok(warnings)
    }

    /// The render itself: each top-level entry (or the whole document, when it is not a map)
    /// goes to `each` in document order. Returns the memo of the config keys and the warnings.
    fn walk<'t>(
        &'t self,
        Compiled {
            root,
            source,
            limits,
        }: Compiled<'t>,
        scope: &Scope<'t>,
        options: RenderOptions,
        each: &mut EachPiece<'_, 't>,
    ) -> Result<(Memo<'t>, Vec<Warning>), Error> {
        let config: &'t Chunked<(String, Node)> = match root {
            Node::Object(entries) => entries,
            _ => &NO_CONFIG,
        };
        debug_assert!(
            self.memoised.last().is_none_or(|&last| last < config.len()),
            "a fixpoint of another document"
        );
        let resolver = Resolver {
            config,
            fixpoint: self,
            memo: (0..self.memoised.len()).map(|_| OnceCell::new()).collect(),
            chain: RefCell::new(SmallVec::new()),
            deepest: Cell::new(None),
        };
        let mut cx = RenderCx::new(scope, limits, options, &resolver, source);
        if config.is_empty() {
            let value = root.render_at(&mut cx, &FieldPath::root())?;
            each(None, Piece::Done(value))?;
            let warnings = cx.into_warnings();
            return Ok((resolver.memo, warnings));
        }
        let mut next_memoised = self.memoised.iter().copied().enumerate().peekable();
        for (index, (key, node)) in config.iter().enumerate() {
            if let Some((slot, _)) = next_memoised.next_if(|&(_, at)| at == index) {
                resolver.follow(&mut cx, index, slot, Span::new(0, 0))?;
                each(Some(key), Piece::Memoised(resolver.resolved(slot)))?;
                continue;
            }
            let value = if node.is_const() {
                cx.render_entry(key, node)?
            } else {
                // Still the start of any chain of keys its placeholders follow.
                resolver.chain.borrow_mut().push(index);
                let value = cx.render_entry(key, node);
                resolver.chain.borrow_mut().pop();
                value?
            };
            each(Some(key), Piece::Done(value))?;
        }
        let warnings = cx.into_warnings();
        Ok((resolver.memo, warnings))
    }
}

/// What receives a render a top-level entry at a time ([`Fixpoint::render_each`]): the
/// entry's key (none for a document that is not a map) and its rendered value.
pub type EachEntry<'e, 't> = dyn FnMut(Option<&'t str>, &Rendered<'t>) -> Result<(), Error> + 'e;

/// What receives the pieces of [`Fixpoint::walk`].
type EachPiece<'e, 't> = dyn FnMut(Option<&'t str>, Piece<'_, 't>) -> Result<(), Error> + 'e;

/// The rendered config keys of one render, by memo slot.
type Memo<'t> = Vec<OnceCell<Resolved<'t>>>;

/// One top-level value of a render, as [`Fixpoint::walk`] hands it over.
enum Piece<'a, 't> {
    /// Rendered for this entry alone.
    Done(Rendered<'t>),
    /// A memoised config key: later keys may still refer to it.
    Memoised(&'a Rendered<'t>),
}

/// The config keys of a document that is not a map.
static NO_CONFIG: Chunked<(String, Node)> = Chunked::new();

/// What is known about a config key once it has been rendered.
#[derive(Debug)]
struct Resolved<'t> {
    value: Rendered<'t>,
    /// Length of the longest chain of config-key references starting at this key (1 when the
    /// key refers to no other key).
    depth: usize,
    /// The key that longest chain continues with; its own `Resolved` holds the rest.
    next: Option<usize>,
}

/// Config keys on the chain being followed, kept without allocating (longer chains spill to
/// the heap).
const INLINE_CHAIN: usize = 8;

/// The fixpoint's state during one render: the memoised config keys and the chain being
/// followed. Lookups nest (a key renders its own placeholders while it is being followed), so
/// the state sits in cells and no borrow of it is held across a render.
struct Resolver<'t> {
    config: &'t Chunked<(String, Node)>,
    /// Which config keys are memoised, in which slot.
    fixpoint: &'t Fixpoint,
    /// Per memo slot, once its key has been followed. Never resized during a render, so a
    /// value stays where a lookup's `&Rendered` points.
    memo: Vec<OnceCell<Resolved<'t>>>,
    chain: RefCell<SmallVec<[usize; INLINE_CHAIN]>>,
    /// While a config key is being rendered: the longest chain found below it so far
    /// (its length, this key included, and the key it continues with).
    deepest: Cell<Option<(usize, Option<usize>)>>,
}

impl<'t> ParamLookup<'t> for Resolver<'t> {
    /// Runtime parameters first, then config keys, then caller parameters.
    fn param<'a>(
        &'a self,
        cx: &mut RenderCx<'t, '_>,
        name: &str,
        span: Span,
    ) -> Result<Option<Param<'a, 't>>, Error> {
        let scope = cx.scope;
        if let Some(v) = map_get(scope.runtime_params, name) {
            return Ok(Some(Param::Data(v)));
        }
        if let Some((index, slot)) = self.fixpoint.named(self.config, name) {
            self.follow(cx, index, slot, span)?;
            return Ok(Some(Param::Config(self.resolved(slot))));
        }
        Ok(scope.caller_params.namespace(name).map(Param::Data))
    }
}

impl<'t> Resolver<'t> {
    /// The value of the config key in memo `slot`, which [`Resolver::follow`] has rendered.
    fn resolved(&self, slot: usize) -> &Rendered<'t> {
        match self.memo[slot].get() {
            Some(done) => &done.value,
            None => unreachable!("memo slot {slot} is filled before it is read"),
        }
    }

    /// What is known about config key `index`, once it has been followed.
    fn memoised(&self, index: usize) -> Option<&Resolved<'t>> {
        let slot = self.fixpoint.slot_of(index)?;
        self.memo.get(slot).and_then(OnceCell::get)
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
    fn follow(
        &self,
        cx: &mut RenderCx<'t, '_>,
        index: usize,
        slot: usize,
        span: Span,
    ) -> Result<(), Error> {
        let (name, node) = &self.config[index];
        let cycle = self.chain.borrow().iter().position(|&k| k == index);
        if let Some(pos) = cycle {
            let mut names = self.names(&self.chain.borrow()[pos..]);
            names.push(name.clone());
            return Err(Error::new(
                Layer::PARAMS,
                ErrorKind::Cycle,
                format!("parameter cycle: {}", names.join(" -> ")),
            )
            .with_span(span)
            .with_hint("a parameter cannot refer to itself, directly or through others"));
        }
        let links = self.chain.borrow().len();
        let depth = match self.memoised(index) {
            Some(done) => {
                let depth = done.depth;
                self.check_links(cx.limits, links + depth - 1, index, span)?;
                depth
            }
            None => {
                self.check_links(cx.limits, links, index, span)?;
                self.chain.borrow_mut().push(index);
                let outer = self.deepest.replace(Some((1, None)));
                let result = cx.render_entry(name, node);
                self.chain.borrow_mut().pop();
                let (depth, next) = self.deepest.replace(outer).unwrap_or((1, None));
                let value = result?;
                // Empty: a key on the chain is a cycle above, so no nested lookup filled it.
                let filled = self.memo[slot].set(Resolved { value, depth, next });
                debug_assert!(filled.is_ok(), "memo slot {slot} filled twice");
                depth
            }
        };
        if let Some((longest, _)) = self.deepest.get() {
            if depth + 1 > longest {
                self.deepest.set(Some((depth + 1, Some(index))));
            }
        }
        Ok(())
    }

    /// Fails when following the chain from `index` takes the current chain past the link
    /// limit (`links` links in all).
    fn check_links(
        &self,
        limits: &Limits,
        links: usize,
        index: usize,
        span: Span,
    ) -> Result<(), Error> {
        if links <= limits.param_links {
            return Ok(());
        }
        let mut names = self.names(&self.chain.borrow());
        names.extend(self.chain_from(index));
        Err(Error::new(
            Layer::PARAMS,
            ErrorKind::Limit,
            format!(
                "parameter chain is longer than {} links: {}",
                limits.param_links,
                names.join(" -> ")
            ),
        )
        .with_span(span)
        .with_limit("param_links", limits.param_links, "shorten the chain, or"))
    }
}
