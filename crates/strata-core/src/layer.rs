use std::fmt;

/// The part of strata a diagnostic comes from: one of the four interpolation layers, the
/// request or document around them, or a front-end of its own (`Layer::new("plan")`).
///
/// An open set: a new front-end names itself without editing this crate. The chain of stages
/// a document goes through is a list of [`crate::syntax::Syntax`]es, not of layers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Layer(&'static str);

impl Layer {
    /// Layer E: `${NAME}` environment expansion.
    pub const ENV: Layer = Layer("env");
    /// Layer P: `{name}` runtime parameters.
    pub const PARAMS: Layer = Layer("params");
    /// Layer C: `${path}` context interpolation.
    pub const CONTEXT: Layer = Layer("context");
    /// Layer I: `{input:key}` directive inputs.
    pub const INPUTS: Layer = Layer("inputs");
    /// The request or document around the templates (parsing, options, limits, files).
    pub const REQUEST: Layer = Layer("request");

    /// A layer (or front-end) called `name`: a lower-case word used in messages and JSON.
    pub const fn new(name: &'static str) -> Layer {
        Layer(name)
    }

    /// The name used in messages and the batch protocol.
    pub fn name(self) -> &'static str {
        self.0
    }
}

impl fmt::Display for Layer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.0)
    }
}
