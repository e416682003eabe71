//! Shared pieces of the fuzz targets: a hostile scope, chains picked by a byte, and stub tool
//! runners for the directive and graph loaders (nothing is ever spawned while fuzzing).

use serde_json::{json, Map, Value};
use strata_core::{EnvMap, Error, ErrorKind, Layer, Limits, RenderOptions, Scope};
use strata_pipeline::{Chain, Template};
use strata_tools::{CallOptions, RunResult, ToolRunner};

/// Text holding every layer's syntax, used as data everywhere.
pub const EVIL: &str =
    "${HOME} {tool_path} {input:x} ${state.x} $${ {{p}} ${A:-d} {{input:x}} `id`";

/// The data every fuzzed template is rendered against.
pub struct Data {
    /// Layer E's variables (`SECRET` is secret).
    pub env: EnvMap,
    /// Runtime parameters.
    pub runtime: Map<String, Value>,
    /// Caller parameters.
    pub params: Map<String, Value>,
    /// The context root.
    pub context: Value,
    /// Directive inputs.
    pub inputs: Map<String, Value>,
}

fn map(v: Value) -> Map<String, Value> {
    match v {
        Value::Object(m) => m,
        _ => Map::new(),
    }
}

impl Data {
    /// Hostile values under the names templates are likely to use.
    pub fn new() -> Data {
        let mut env = EnvMap::default();
        env.set("A", "a", false);
        env.set("B", "", false);
        env.set("HOME", "/home/u", false);
        env.set("EVIL", EVIL, false);
        env.set("SECRET", "s3cr3t", true);
        Data {
            env,
            runtime: map(json!({"tool_path": "/t/x.yaml", "tool_dir": "/t", "params_json": "{}"})),
            params: map(
                json!({"a": EVIL, "n": 3, "l": [1, "x", {"k": null}], "o": {"a": {"b": [true]}}}),
            ),
            context: json!({
                "state": {"x": EVIL, "n": 5, "f": 2.5, "l": [1, 2, 3], "o": {"a b": {"c": "d"}}, "t": true, "z": null},
                "inputs": {"x": EVIL, "n": 1},
                "result": {"success": true, "data": {"words": 3}},
            }),
            inputs: map(json!({"x": EVIL, "n": 7, "l": ["a"], "z": null})),
        }
    }

    /// The scope over this data.
    pub fn scope(&self) -> Scope<'_> {
        Scope {
            env: &self.env,
            runtime_params: &self.runtime,
            caller_params: &self.params,
            context: &self.context,
            inputs: &self.inputs,
        }
    }
}

impl Default for Data {
    fn default() -> Self {
        Data::new()
    }
}

/// A chain chosen by one byte: the documented chains, every layer alone, and orders that
/// repeat layers.
pub fn chain_of(b: u8) -> Chain {
    const I: Layer = Layer::INPUTS;
    const C: Layer = Layer::CONTEXT;
    const E: Layer = Layer::ENV;
    const P: Layer = Layer::PARAMS;
    let all = [I, C, E, P];
    let layers: Vec<Layer> = match b % 8 {
        0 => vec![I, C, E, P],
        1 => vec![E, P, E, P],
        2 => vec![P, E, C, I],
        3 => vec![C, I, P, E],
        _ => {
            // Three to six layers from the bits of b.
            let n = 3 + (b as usize >> 3) % 4;
            (0..n).map(|i| all[(b as usize >> i) % 4]).collect()
        }
    };
    Chain::of(&layers)
}

/// Compiles and renders `doc` through `chain`, strict and not, small limits and default ones.
/// Errors are expected; panics, hangs and memory blow-ups are findings, and so is any
/// difference the secret's value makes to what may be shown: the redacted output, the
/// warnings and the errors are compared between two renders whose secrets differ.
pub fn render_all(doc: &Value, chain: &Chain) {
    let data = Data::new();
    let mut other = Data::new();
    other.env.set("SECRET", "XXXXXX", true);
    let small = Limits {
        template_bytes: 1 << 16,
        placeholders_per_string: 64,
        template_bytes_per_document: 1 << 17,
        placeholders_per_document: 256,
        default_depth: 4,
        output_bytes_per_string: 1 << 16,
        output_bytes_per_config: 1 << 18,
        param_links: 3,
        yaml_nodes: 10_000,
        document_bytes: 1 << 18,
    };
    for limits in [Limits::default(), small] {
        let Ok(t) = Template::compile(doc, chain, &limits) else {
            continue;
        };
        let _ = t.references();
        for strict in [false, true] {
            let options = RenderOptions::strict_if(strict);
            let shown = |data: &Data| match t.render(&data.scope(), &options) {
                Ok(out) => Ok((
                    out.value.to_redacted_json(),
                    out.warnings
                        .iter()
                        .map(|w| w.to_string())
                        .collect::<Vec<_>>(),
                    out.value.into_json(),
                )),
                Err(e) => Err(e.to_string()),
            };
            let a = shown(&data);
            let b = shown(&other);
            match (&a, &b) {
                (Ok((ra, wa, plain)), Ok((rb, wb, _))) => {
                    assert_eq!(ra, rb, "the redacted output depends on the secret");
                    assert_eq!(wa, wb, "the warnings depend on the secret");
                    if t.is_const() {
                        assert_eq!(plain, doc, "a constant template must render to itself");
                    }
                }
                (Err(ea), Err(eb)) => assert_eq!(ea, eb, "the error depends on the secret"),
                _ => panic!("the secret's value decides success: {a:?} / {b:?}"),
            }
        }
    }
}

/// Renders one string through one layer.
pub fn render_str(s: &str, layer: Layer) {
    render_all(&Value::String(s.to_string()), &Chain::of(&[layer]));
}

/// Tools for the directive and graph loaders: every id exists and prints a canned result
/// holding other layers' syntax and the parameters it was given.
pub struct StubTools;

impl ToolRunner for StubTools {
    fn has_tool(&self, id: &str) -> bool {
        !id.is_empty() && !id.contains("..")
    }

    fn unknown_tool(&self, id: &str) -> Error {
        Error::new(
            Layer::REQUEST,
            ErrorKind::UnknownTool,
            format!("unknown tool `{id}`"),
        )
    }

    fn run(
        &self,
        _id: &str,
        params: &Map<String, Value>,
        _options: &CallOptions,
    ) -> Result<RunResult, Error> {
        let result = json!({"words": 3, "text": "${SECRET} {input:x}", "params": params});
        Ok(RunResult::ok(result.to_string()))
    }
}

/// Small limits for loaders, so that fuzzed documents stay cheap.
pub fn loader_limits() -> Limits {
    Limits {
        yaml_nodes: 100_000,
        ..Limits::default()
    }
}
