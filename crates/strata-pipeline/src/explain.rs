use serde_json::Value;
use strata_core::{Error, Layer, Limits, RenderOptions, Rendered, Scope};

use crate::{Chain, Template};

/// A document as it stands after one stage of a chain.
#[derive(Debug, Clone, PartialEq)]
pub struct StageOutput {
    /// 1-based stage number within the chain.
    pub stage: usize,
    /// The layer that ran at this stage.
    pub layer: Layer,
    /// The document after this stage (later layers' placeholders still as written).
    pub value: Rendered<'static>,
}

/// Renders `value` after every stage of `chain`: stage k is the chain's first k layers.
pub fn explain(
    value: &Value,
    chain: &Chain,
    limits: &Limits,
    scope: &Scope<'_>,
    options: &RenderOptions,
) -> Result<Vec<StageOutput>, Error> {
    (1..=chain.stages().len())
        .map(|k| {
            let template = Template::compile(value, &chain.prefix(k), limits)?;
            let out = template.render(scope, options)?;
            Ok(StageOutput {
                stage: k,
                layer: chain.stages()[k - 1].layer(),
                value: out.value.into_owned(),
            })
        })
        .collect()
}
