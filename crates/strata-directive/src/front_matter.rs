use serde::Deserialize;
use serde_json::{Map, Value};

/// The type of a declared input.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[cfg_attr(feature = "schemas", derive(schemars::JsonSchema))]
#[serde(rename_all = "lowercase")]
pub enum InputType {
    /// Text, taken as given.
    String,
    /// A whole number (`--input n=5` arrives as `5`).
    Integer,
    /// Any number.
    Number,
    /// `true` or `false`.
    Boolean,
    /// A JSON list.
    Array,
    /// A JSON object.
    Object,
}

impl InputType {
    /// The name used in the front matter and in errors.
    pub fn name(self) -> &'static str {
        match self {
            InputType::String => "string",
            InputType::Integer => "integer",
            InputType::Number => "number",
            InputType::Boolean => "boolean",
            InputType::Array => "array",
            InputType::Object => "object",
        }
    }
}

/// A declared input.
#[derive(Debug, Clone, Deserialize)]
#[cfg_attr(feature = "schemas", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct InputSpec {
    /// The input's name (`[A-Za-z0-9_]+`).
    pub name: String,
    /// Its type.
    #[serde(rename = "type")]
    pub ty: InputType,
    /// Whether the caller must give it.
    #[serde(default)]
    pub required: bool,
    /// The value used when the caller does not give it.
    #[serde(default)]
    pub default: Option<Value>,
    /// What it is for.
    #[serde(default)]
    pub description: Option<String>,
}

/// An action: a tool call with parameters.
#[derive(Debug, Clone, Deserialize)]
#[cfg_attr(feature = "schemas", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct ActionSpec {
    /// The step id, used as `${steps.<id>.result}` by later actions.
    pub id: String,
    /// The tool id (a path under `tools/` without extension).
    pub tool: String,
    /// The tool's caller parameters (templates of stages 1 and 2).
    #[serde(default)]
    pub params: Map<String, Value>,
    /// Whether the directive goes on when this action fails.
    #[serde(default)]
    pub continue_on_error: bool,
}

/// A hook's action.
#[derive(Debug, Clone, Deserialize)]
#[cfg_attr(feature = "schemas", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct HookAction {
    /// The tool id.
    pub tool: String,
    /// The tool's parameters, templated with layer C against the event context.
    #[serde(default)]
    pub params: Map<String, Value>,
}

/// A hook: a tool call fired on an event. Directives, graphs and project hook files declare
/// hooks with these same keys.
#[derive(Debug, Clone, Deserialize)]
#[cfg_attr(feature = "schemas", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct HookSpec {
    /// The hook's id (a directive hook replaces a project hook with the same id).
    pub id: String,
    /// The event it fires on.
    pub event: String,
    /// When it fires (an expression, the structured form or a boolean); always when absent.
    #[serde(default)]
    pub when: Option<Value>,
    /// Another spelling of `when` (a hook has one or the other).
    #[serde(default)]
    pub condition: Option<Value>,
    /// What it runs.
    pub action: HookAction,
}

impl HookSpec {
    /// Its condition, under either spelling.
    pub fn condition(&self) -> Option<&Value> {
        self.when.as_ref().or(self.condition.as_ref())
    }
}

/// Reads the `hooks:` of the front matter as anything: the shared hook parser checks them
/// (with located errors and did-you-mean) once the front matter is read, and
/// `Directive::load` then fills the list in.
fn checked_later<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Vec<HookSpec>, D::Error> {
    serde::de::IgnoredAny::deserialize(d)?;
    Ok(Vec::new())
}

/// Directive limits.
#[derive(Debug, Clone, Default, Deserialize)]
#[cfg_attr(feature = "schemas", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct DirectiveLimits {
    /// Most actions that may run.
    #[serde(default)]
    pub turns: Option<u64>,
    /// Most seconds the whole directive may take.
    #[serde(default)]
    pub timeout: Option<f64>,
}

/// The front matter of a directive.
#[derive(Debug, Clone, Deserialize)]
#[cfg_attr(feature = "schemas", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct FrontMatter {
    /// The directive's name.
    pub name: String,
    /// What it does.
    #[serde(default)]
    pub description: Option<String>,
    /// Its version.
    #[serde(default)]
    pub version: Option<Value>,
    /// Declared inputs.
    #[serde(default)]
    pub inputs: Vec<InputSpec>,
    /// Free-form model settings (`{tier: fast}`), available as `${model…}`.
    #[serde(default)]
    pub model: Option<Value>,
    /// Limits, available as `${limits…}`.
    #[serde(default)]
    pub limits: DirectiveLimits,
    /// Ordered actions.
    #[serde(default)]
    pub actions: Vec<ActionSpec>,
    /// Hooks.
    #[serde(default, deserialize_with = "checked_later")]
    #[cfg_attr(feature = "schemas", schemars(with = "Vec<HookSpec>"))]
    pub hooks: Vec<HookSpec>,
    /// Canned responses: after the actions, the first candidate that can be rendered is
    /// the directive's reply.
    #[serde(default)]
    pub responses: Option<ResponsesSpec>,
}

/// The `responses:` section: canned-response candidates and the sources of their fields.
#[derive(Debug, Clone, Deserialize)]
#[cfg_attr(feature = "schemas", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct ResponsesSpec {
    /// The standard fields (`std.*`), templates of stages 1 and 2 rendered after the actions.
    #[serde(default)]
    pub std: StdSpec,
    /// The tool that fills `generative.*` fields (given `{template, field, context}`, it
    /// prints the field's value as JSON).
    #[serde(default)]
    pub generator: Option<String>,
    /// Candidate templates, tried in order.
    pub candidates: Vec<CandidateSpec>,
}

/// The standard fields a directive declares (`std.missing_params` is computed from the
/// actions).
#[derive(Debug, Clone, Default, Deserialize)]
#[cfg_attr(feature = "schemas", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct StdSpec {
    /// `std.customer.name`.
    #[serde(default)]
    pub customer: Option<PersonSpec>,
    /// `std.agent.name`.
    #[serde(default)]
    pub agent: Option<PersonSpec>,
    /// `std.variables.<name>`.
    #[serde(default)]
    pub variables: Map<String, Value>,
}

/// A customer or an agent.
#[derive(Debug, Clone, Deserialize)]
#[cfg_attr(feature = "schemas", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct PersonSpec {
    /// Their name (a template of stages 1 and 2).
    pub name: String,
}

/// A canned-response candidate.
#[derive(Debug, Clone, Deserialize)]
#[cfg_attr(feature = "schemas", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct CandidateSpec {
    /// A name for reports (`candidates[<n>]` when absent).
    #[serde(default)]
    pub id: Option<String>,
    /// When it applies (an expression, the structured form or a boolean); always when
    /// absent.
    #[serde(default)]
    pub condition: Option<Value>,
    /// The Jinja template; its fields come from `std`, the actions' tool fields and the
    /// generator.
    pub template: String,
}
