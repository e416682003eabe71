use std::fmt;

/// The part of strata that reports a diagnostic: one of the four layers, or the request itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Layer {
    /// Layer E: `${NAME}` environment expansion.
    Env,
    /// Layer P: `{name}` runtime parameters.
    Params,
    /// Layer C: `${path}` context interpolation.
    Context,
    /// Layer I: `{input:key}` directive inputs.
    Inputs,
    /// The request or document around the templates (parsing, options, limits).
    Request,
}

impl Layer {
    /// The name used in messages and the batch protocol.
    pub fn name(self) -> &'static str {
        match self {
            Layer::Env => "env",
            Layer::Params => "params",
            Layer::Context => "context",
            Layer::Inputs => "inputs",
            Layer::Request => "request",
        }
    }

    /// Parses a layer name as written on the command line or in a batch request.
    pub fn from_name(name: &str) -> Option<Layer> {
        match name {
            "env" => Some(Layer::Env),
            "params" => Some(Layer::Params),
            "context" => Some(Layer::Context),
            "inputs" => Some(Layer::Inputs),
            _ => None,
        }
    }
}

impl fmt::Display for Layer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}
