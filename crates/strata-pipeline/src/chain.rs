use std::fmt;

use strata_context::ContextSyntax;
use strata_core::syntax::Syntax;
use strata_core::{Error, ErrorKind, Layer};
use strata_env::EnvSyntax;
use strata_inputs::InputSyntax;
use strata_params::ParamSyntax;

/// The stages a document goes through, in order: one compile pass ([`Syntax`]) each.
///
/// The four layers of SPEC §1 are built in ([`Chain::full`], [`Chain::of`]); a front-end
/// with a syntax of its own makes a chain with [`Chain::new`], without touching this crate.
#[derive(Clone)]
pub struct Chain(Vec<&'static dyn Syntax>);

static ENV: EnvSyntax = EnvSyntax;
static PARAMS: ParamSyntax = ParamSyntax;
static CONTEXT: ContextSyntax = ContextSyntax;
static INPUTS: InputSyntax = InputSyntax;

/// The four interpolation layers, in the order of the full chain.
pub static LAYERS: [&dyn Syntax; 4] = [&INPUTS, &CONTEXT, &ENV, &PARAMS];

impl Chain {
    /// A chain of the given stages.
    pub fn new(stages: Vec<&'static dyn Syntax>) -> Chain {
        Chain(stages)
    }

    /// The documented chain up to dispatch and through the config passes (stages 1–4):
    /// inputs, context, env, params.
    pub fn full() -> Chain {
        Chain(LAYERS.to_vec())
    }

    /// The chain of the given built-in layers, in the order given (a layer may repeat).
    ///
    /// # Panics
    /// When a layer is not one of the four built-in ones (a programming error).
    pub fn of(layers: &[Layer]) -> Chain {
        Chain(
            layers
                .iter()
                .map(|l| builtin(l.name()).unwrap_or_else(|| panic!("`{l}` is not a layer")))
                .collect(),
        )
    }

    /// Parses layer names (`inputs`, `context`, `env`, `params`) in the order given.
    pub fn from_names<S: AsRef<str>>(names: &[S]) -> Result<Chain, Error> {
        names
            .iter()
            .map(|n| {
                builtin(n.as_ref()).ok_or_else(|| {
                    Error::new(
                        Layer::REQUEST,
                        ErrorKind::UnknownName,
                        format!("unknown layer `{}`", strata_core::shown(n.as_ref())),
                    )
                    .with_hint("the layers are inputs, context, env, params")
                })
            })
            .collect::<Result<Vec<_>, _>>()
            .map(Chain)
    }

    /// The first `n` stages.
    pub fn prefix(&self, n: usize) -> Chain {
        Chain(self.0[..n].to_vec())
    }

    /// The stages' compile passes, in order.
    pub fn stages(&self) -> &[&'static dyn Syntax] {
        &self.0
    }

    /// The layer of each stage, in order.
    pub fn layers(&self) -> impl Iterator<Item = Layer> + '_ {
        self.0.iter().map(|s| s.layer())
    }
}

fn builtin(name: &str) -> Option<&'static dyn Syntax> {
    LAYERS.iter().copied().find(|s| s.layer().name() == name)
}

impl PartialEq for Chain {
    fn eq(&self, other: &Chain) -> bool {
        self.layers().eq(other.layers())
    }
}

impl Eq for Chain {}

impl fmt::Debug for Chain {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.layers()).finish()
    }
}

impl fmt::Display for Chain {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names: Vec<&str> = self.layers().map(|l| l.name()).collect();
        f.write_str(&names.join(" -> "))
    }
}
