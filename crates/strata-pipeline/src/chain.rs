use std::fmt;

use strata_context::ContextSyntax;
use strata_core::{Layer, Syntax};
use strata_env::EnvSyntax;
use strata_inputs::InputSyntax;
use strata_params::ParamSyntax;

/// The layers a document goes through, in order (one stage per entry).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Chain(pub Vec<Layer>);

impl Chain {
    /// The documented chain up to dispatch and through the config passes (stages 1–4):
    /// inputs, context, env, params.
    pub fn full() -> Chain {
        Chain(vec![
            Layer::Inputs,
            Layer::Context,
            Layer::Env,
            Layer::Params,
        ])
    }

    /// Parses layer names (`inputs`, `context`, `env`, `params`) in the order given.
    pub fn from_names<S: AsRef<str>>(names: &[S]) -> Result<Chain, String> {
        names
            .iter()
            .map(|n| {
                Layer::from_name(n.as_ref()).ok_or_else(|| {
                    format!(
                        "unknown layer `{}`; the layers are inputs, context, env, params",
                        n.as_ref()
                    )
                })
            })
            .collect::<Result<Vec<_>, _>>()
            .map(Chain)
    }

    /// The first `n` stages.
    pub fn prefix(&self, n: usize) -> Chain {
        Chain(self.0[..n].to_vec())
    }
}

impl fmt::Display for Chain {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names: Vec<&str> = self.0.iter().map(|l| l.name()).collect();
        f.write_str(&names.join(" -> "))
    }
}

static ENV: EnvSyntax = EnvSyntax;
static PARAMS: ParamSyntax = ParamSyntax;
static CONTEXT: ContextSyntax = ContextSyntax;
static INPUTS: InputSyntax = InputSyntax;

/// The compile pass of a layer.
pub(crate) fn syntax(layer: Layer) -> &'static dyn Syntax {
    match layer {
        Layer::Env => &ENV,
        Layer::Params => &PARAMS,
        Layer::Context => &CONTEXT,
        Layer::Inputs | Layer::Request => &INPUTS,
    }
}
