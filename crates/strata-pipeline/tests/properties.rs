//! Property tests of SPEC §0–§1 over generated templates, data and chains (issue 7):
//!
//! * no input panics any layer, any chain order, `explain` or the batch protocol;
//! * the no-rescan promise: a value from any data source (env, caller and runtime parameters,
//!   context, inputs, config keys) appears byte for byte wherever it was substituted,
//!   whatever syntax it holds — checked exactly on templates of known shape, and as a
//!   metamorphic relation on arbitrary templates (render with the hostile values, render with
//!   inert markers, and the two agree once the markers are swapped for the values; warnings
//!   and errors agree as they are, so no value leaks into them);
//! * a template with no placeholders renders to itself;
//! * whole-value placeholders of layers P, C and I round-trip every JSON value;
//! * `$${`, `{{name}}` and `{{input:key}}` always yield their literal text;
//! * rendering is deterministic and does not depend on the order of the scope's maps.
//!
//! The case count defaults to proptest's 256 per property; `PROPTEST_CASES` raises it.

use proptest::prelude::*;
use proptest::test_runner::Config;
use serde_json::{json, Map, Value};
use strata_core::{EnvMap, Layer, Limits, RenderOptions, Scope};
use strata_pipeline::{batch, explain, Chain, Template};

const C: Layer = Layer::CONTEXT;
const E: Layer = Layer::ENV;
const I: Layer = Layer::INPUTS;
const P: Layer = Layer::PARAMS;

// ---------------------------------------------------------------------------------------------
// Generators
// ---------------------------------------------------------------------------------------------

/// Names every generated scope defines; generated placeholders use them (and some unknown
/// ones, and the config keys `k1` and `k2` of generated documents).
const ENV_NAMES: [&str; 3] = ["A", "B", "_X1"];
const PARAM_NAMES: [&str; 3] = ["a", "b", "p"];
const RUNTIME_NAMES: [&str; 2] = ["tool_path", "tool_dir"];
const STATE_KEYS: [&str; 3] = ["a", "b", "x"];
const INPUT_KEYS: [&str; 3] = ["a", "b", "x"];

fn layer() -> impl Strategy<Value = Layer> {
    prop_oneof![Just(E), Just(P), Just(C), Just(I)]
}

/// Any chain: one to six stages, layers repeated or missing (the tool pipeline runs E, P, E, P).
fn chain() -> impl Strategy<Value = Vec<Layer>> {
    prop::collection::vec(layer(), 1..=6)
}

/// Every order of the four layers.
fn full_order() -> impl Strategy<Value = Vec<Layer>> {
    Just(vec![I, C, E, P]).prop_shuffle()
}

/// Text full of every layer's syntax, valid or broken.
fn syntax_fragment() -> BoxedStrategy<String> {
    prop_oneof![
        "[a-zA-Z0-9 _.:|?!+*/-]{0,6}",
        prop::sample::select(vec![
            "${",
            "}",
            "{",
            "$",
            "$${",
            "{{",
            "}}",
            "${}",
            "${ }",
            "{input:",
            "{input:}",
            "?",
            "??",
            ":-",
            ":?",
            ":+",
            "-",
            "+",
            "|",
            ":",
            "\"",
            "'",
            "[",
            "]",
            "\\",
            "\n",
            "\u{0}",
            "é",
            "💥",
            "{{input:x}}",
            "{{p}}",
            "${9X}",
            "${Foo}",
            "$HOME",
            "{\"j\": 1}",
        ])
        .prop_map(str::to_string),
        // layer E, with and without operators and nested words
        (
            prop::sample::select(vec!["A", "B", "_X1", "UNSET", "HOME"]),
            prop::sample::select(vec!["", ":-", "-", ":+", "+", ":?", "?"]),
            "[a-z {}$]{0,4}",
        )
            .prop_map(|(n, op, w)| if op.is_empty() {
                format!("${{{n}}}")
            } else {
                format!("${{{n}{op}{w}}}")
            }),
        // layer P
        prop::sample::select(vec![
            "{a}",
            "{b}",
            "{p}",
            "{k1}",
            "{k2}",
            "{tool_path}",
            "{tool_dir}",
            "{nope}",
            "{t}"
        ])
        .prop_map(str::to_string),
        // layer C: paths and fallbacks
        (
            prop::sample::select(vec![
                "state.a",
                "state.b",
                "state.x",
                "state.nope",
                "inputs.a",
                "inputs.x",
                "state",
                "nope.a",
                "state[\"a\"]",
                "state.a ?? 'f'",
                "state.nope ?? state.b",
                "exists(state.a)",
                "state.nope ?? 1"
            ]),
            prop::bool::ANY,
        )
            .prop_map(|(p, pad)| if pad {
                format!("${{ {p} }}")
            } else {
                format!("${{{p}}}")
            }),
        // layer I
        (
            prop::sample::select(vec!["a", "b", "x", "nope"]),
            prop::sample::select(vec!["", "?", ":", "|"]),
            "[a-z:|{}]{0,4}",
        )
            .prop_map(|(k, op, d)| match op {
                "" | "?" => format!("{{input:{k}{op}}}"),
                _ => format!("{{input:{k}{op}{d}}}"),
            }),
    ]
    .boxed()
}

/// A template: a run of fragments, or any string at all.
fn template() -> BoxedStrategy<String> {
    prop_oneof![
        3 => prop::collection::vec(syntax_fragment(), 0..10).prop_map(|v| v.concat()),
        1 => any::<String>(),
    ]
    .boxed()
}

/// A hostile value: the same syntax, shell metacharacters, or any string.
fn hostile() -> BoxedStrategy<String> {
    prop_oneof![
        3 => prop::collection::vec(syntax_fragment(), 0..6).prop_map(|v| v.concat()),
        1 => prop::sample::select(vec![
            "$(rm -rf /)", "`id`", "; ls", "| cat /etc/passwd", "&& echo pwned", "'\"", "\\",
        ])
        .prop_map(str::to_string),
        1 => any::<String>(),
    ]
    .boxed()
}

/// Any JSON value (objects keep their key order).
fn json_value() -> impl Strategy<Value = Value> {
    json_with(hostile())
}

/// Any JSON value whose strings (keys included) come from `strings`.
fn json_with(strings: BoxedStrategy<String>) -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(|n| json!(n)),
        any::<u64>().prop_map(|n| json!(n)),
        any::<f64>()
            .prop_filter("finite", |f| f.is_finite())
            .prop_map(|f| json!(f)),
        strings.clone().prop_map(Value::String),
    ];
    leaf.prop_recursive(4, 32, 6, move |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            prop::collection::vec((strings.clone(), inner), 0..6)
                .prop_map(|kv| Value::Object(kv.into_iter().collect::<Map<_, _>>())),
        ]
    })
}

/// A document: arbitrary structure whose strings are templates.
fn document() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<i64>().prop_map(|n| json!(n)),
        any::<bool>().prop_map(Value::Bool),
        template().prop_map(Value::String),
    ];
    leaf.prop_recursive(3, 24, 5, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..5).prop_map(Value::Array),
            prop::collection::vec(
                (
                    prop::sample::select(vec!["t", "k1", "k2", "x", "{a}"]),
                    inner
                ),
                0..5
            )
            .prop_map(|kv| Value::Object(
                kv.into_iter()
                    .map(|(k, v)| (k.to_string(), v))
                    .collect::<Map<_, _>>()
            )),
        ]
    })
}

// ---------------------------------------------------------------------------------------------
// Scopes
// ---------------------------------------------------------------------------------------------

/// Every value a scope substitutes, one per data source and name.
#[derive(Debug, Clone)]
struct Data {
    env: Vec<(String, String, bool)>,
    params: Vec<(String, Value)>,
    runtime: Vec<(String, Value)>,
    state: Vec<(String, Value)>,
    inputs: Vec<(String, Value)>,
    /// Puts the context's `other` namespace before `state`.
    other_first: bool,
}

/// The owned parts of a [`Scope`].
struct Owned {
    env: EnvMap,
    params: Map<String, Value>,
    runtime: Map<String, Value>,
    context: Value,
    inputs: Map<String, Value>,
}

impl Owned {
    fn scope(&self) -> Scope<'_> {
        Scope {
            env: &self.env,
            runtime_params: &self.runtime,
            caller_params: &self.params,
            context: &self.context,
            inputs: &self.inputs,
        }
    }
}

impl Data {
    fn owned(&self) -> Owned {
        let mut env = EnvMap::default();
        for (k, v, secret) in &self.env {
            env.set(k.clone(), v.clone(), *secret);
        }
        let map = |kv: &[(String, Value)]| kv.iter().cloned().collect::<Map<_, _>>();
        Owned {
            env,
            params: map(&self.params),
            runtime: map(&self.runtime),
            context: if self.other_first {
                json!({"other": {"a": 1}, "state": Value::Object(map(&self.state))})
            } else {
                json!({"state": Value::Object(map(&self.state)), "other": {"a": 1}})
            },
            inputs: map(&self.inputs),
        }
    }

    /// The same data with every string value replaced by `f(value, secret)`.
    fn map_strings(&self, mut f: impl FnMut(&str, bool) -> String) -> Data {
        let env = self
            .env
            .iter()
            .map(|(k, v, s)| (k.clone(), f(v, *s), *s))
            .collect();
        let mut g = |kv: &[(String, Value)]| -> Vec<(String, Value)> {
            kv.iter()
                .map(|(k, v)| {
                    let v = match v {
                        Value::String(s) => Value::String(f(s, false)),
                        other => other.clone(),
                    };
                    (k.clone(), v)
                })
                .collect()
        };
        Data {
            env,
            params: g(&self.params),
            runtime: g(&self.runtime),
            state: g(&self.state),
            inputs: g(&self.inputs),
            other_first: self.other_first,
        }
    }
}

fn named_strings(names: &'static [&'static str]) -> impl Strategy<Value = Vec<(String, Value)>> {
    prop::collection::vec(hostile(), names.len()).prop_map(move |vals| {
        names
            .iter()
            .zip(vals)
            .map(|(k, v)| (k.to_string(), Value::String(v)))
            .collect()
    })
}

/// Hostile string data under every generated name.
fn data() -> impl Strategy<Value = Data> {
    (
        prop::collection::vec((hostile(), any::<bool>()), ENV_NAMES.len()),
        named_strings(&PARAM_NAMES),
        named_strings(&RUNTIME_NAMES),
        named_strings(&STATE_KEYS),
        named_strings(&INPUT_KEYS),
    )
        .prop_map(|(env, params, runtime, state, inputs)| Data {
            env: ENV_NAMES
                .iter()
                .zip(env)
                .map(|(k, (v, s))| (k.to_string(), v, s))
                .collect(),
            params,
            runtime,
            state,
            inputs,
            other_first: false,
        })
}

/// A marker standing for the i-th value: private-use characters no generated template or
/// value holds, so it cannot be taken for syntax, and distinct markers never overlap.
fn marker(i: usize) -> String {
    format!("\u{E000}{i}\u{E001}")
}

const LIMITS_NOTE: &str = "values stay far below every output limit";

/// Renders a document through `chain` against `data`: the plain value, the redacted value
/// and the warnings, or the error text.
fn render(doc: &Value, chain: &[Layer], data: &Data, strict: bool) -> Result<Rendered, String> {
    let owned = data.owned();
    let t =
        Template::compile(doc, &Chain::of(chain), &Limits::default()).map_err(|e| e.to_string())?;
    let out = t
        .render(&owned.scope(), &RenderOptions::strict_if(strict))
        .map_err(|e| e.to_string())?;
    Ok(Rendered {
        redacted: out.value.to_redacted_json(),
        value: out.value.into_json(),
        warnings: out.warnings.iter().map(|w| w.to_string()).collect(),
    })
}

#[derive(Debug, PartialEq)]
struct Rendered {
    value: Value,
    redacted: Value,
    warnings: Vec<String>,
}

/// Replaces text in every string of a JSON value (map keys too: they are never templated,
/// so they hold no markers).
fn replace_all(v: &Value, pairs: &[(String, String)]) -> Value {
    match v {
        Value::String(s) => {
            let mut s = s.clone();
            for (from, to) in pairs {
                if !from.is_empty() && s.contains(from.as_str()) {
                    s = s.replace(from.as_str(), to);
                }
            }
            Value::String(s)
        }
        Value::Array(items) => Value::Array(items.iter().map(|x| replace_all(x, pairs)).collect()),
        Value::Object(m) => Value::Object(
            m.iter()
                .map(|(k, x)| (k.clone(), replace_all(x, pairs)))
                .collect(),
        ),
        other => other.clone(),
    }
}

fn replace_text(s: &str, pairs: &[(String, String)]) -> String {
    match replace_all(&Value::String(s.to_string()), pairs) {
        Value::String(s) => s,
        _ => unreachable!("a string stays a string"),
    }
}

fn has_marker_chars(s: &str) -> bool {
    s.contains(['\u{E000}', '\u{E001}'])
}

fn any_string(v: &Value, f: &dyn Fn(&str) -> bool) -> bool {
    match v {
        Value::String(s) => f(s),
        Value::Array(items) => items.iter().any(|x| any_string(x, f)),
        Value::Object(m) => m.iter().any(|(k, x)| f(k) || any_string(x, f)),
        _ => false,
    }
}

fn config() -> Config {
    Config {
        failure_persistence: None,
        ..Config::default()
    }
}

// ---------------------------------------------------------------------------------------------
// Properties
// ---------------------------------------------------------------------------------------------

proptest! {
    #![proptest_config(config())]

    /// No string panics any chain (compile and render, strict or not), nor `explain`.
    #[test]
    fn no_string_panics_any_chain(s in template(), chain in chain(), data in data(), strict in any::<bool>()) {
        let doc = json!({"t": s.clone(), "k1": s, "k2": "{k1}"});
        let _ = render(&doc, &chain, &data, strict);
        let owned = data.owned();
        let _ = explain(&doc, &Chain::of(&chain), &Limits::default(), &owned.scope(), &RenderOptions::strict_if(strict));
    }

    /// No document panics the full chain, whatever its shape.
    #[test]
    fn no_document_panics_the_pipeline(doc in document(), chain in chain(), data in data(), strict in any::<bool>()) {
        let _ = render(&doc, &chain, &data, strict);
    }

    /// No line panics the batch protocol; every line gets exactly one JSON reply, the same
    /// whether it is served (read in one pass) or read alone.
    #[test]
    fn no_line_panics_the_batch_protocol(doc in document(), data in data(), layers in chain(), junk in any::<String>()) {
        let owned = data.owned();
        let env: Map<String, Value> = data.env.iter().map(|(k, v, _)| (k.clone(), json!(v))).collect();
        let names: Vec<&str> = layers.iter().map(|l| l.name()).collect();
        let request = json!({
            "template": doc, "layers": names, "env": env, "params": owned.params,
            "context": owned.context, "inputs": owned.inputs,
        });
        for line in [request.to_string(), junk] {
            let reply = batch::handle_line(&line, &Limits::default());
            prop_assert!(reply["ok"].is_boolean(), "{reply}");
            // Served, the line is read in one pass; its reply is the one it gets alone.
            if !line.contains(['\n', '\r']) && !line.trim().is_empty() {
                let mut served = Vec::new();
                batch::serve(line.as_bytes(), &mut served, &Limits::default()).unwrap();
                prop_assert_eq!(String::from_utf8(served).unwrap(), format!("{reply}\n"));
            }
        }
    }

    /// Values substituted into a template of known shape appear byte for byte, through every
    /// order of the four layers.
    #[test]
    fn substituted_values_appear_byte_for_byte(
        pieces in prop::collection::vec((0usize..6, "[a-zA-Z0-9 .,;:!?=+*/()-]{0,5}"), 1..8),
        data in data(),
        order in full_order(),
    ) {
        let placeholders = ["${A}", "{a}", "{tool_path}", "${state.a}", "{input:a}", "{k1}"];
        let value = |i: usize| -> String {
            let text = |v: &Value| v.as_str().unwrap_or_default().to_string();
            match i {
                0 => data.env[0].1.clone(),
                1 => text(&data.params[0].1),
                2 => text(&data.runtime[0].1),
                3 => text(&data.state[0].1),
                4 => text(&data.inputs[0].1),
                _ => data.env[1].1.clone(),
            }
        };
        let mut template = String::new();
        let mut expected = String::new();
        for (i, lit) in &pieces {
            template.push_str(placeholders[*i]);
            template.push_str(lit);
            expected.push_str(&value(*i));
            expected.push_str(lit);
        }
        // k1 carries env B's value into layer P as a config key.
        let doc = json!({"t": template, "k1": "${B}"});
        let out = render(&doc, &order, &data, false).expect(LIMITS_NOTE);
        prop_assert_eq!(&out.value["t"], &json!(expected));
    }

    /// The no-rescan promise on arbitrary templates: rendering with hostile values equals
    /// rendering with inert markers and then swapping each marker for its value. Warnings
    /// and errors are identical, so they never quote a value; the redacted output shows
    /// secrets as `***` whatever they hold.
    #[test]
    fn data_is_never_rescanned(
        t in template(),
        k1 in template(),
        chain in chain(),
        data in data(),
        strict in any::<bool>(),
    ) {
        prop_assume!(!has_marker_chars(&t) && !has_marker_chars(&k1));
        // `${state}` renders the whole namespace as JSON, where values are escaped: the
        // markers would not map back byte for byte.
        let whole_namespace = |s: &str| s.contains("${state}") || s.contains("${ state }");
        prop_assume!(!whole_namespace(&t) && !whole_namespace(&k1));
        let doc = json!({"t": t, "k1": k1, "k2": "${B}"});
        // Every non-empty value gets its own marker; `shown` pairs are those of values that
        // are not secret (the redacted output and the errors may show them).
        let mut pairs: Vec<(String, String)> = Vec::new();
        let mut shown: Vec<(String, String)> = Vec::new();
        let inert = data.map_strings(|v, secret| {
            if v.is_empty() {
                return String::new();
            }
            let m = marker(pairs.len());
            pairs.push((m.clone(), v.to_string()));
            if !secret {
                shown.push((m.clone(), v.to_string()));
            }
            m
        });
        let hidden: Vec<&str> = pairs
            .iter()
            .filter(|p| !shown.contains(p))
            .map(|p| p.0.as_str())
            .collect();
        let real = render(&doc, &chain, &data, strict);
        let marked = render(&doc, &chain, &inert, strict);
        match (real, marked) {
            (Ok(real), Ok(marked)) => {
                prop_assert_eq!(&real.value, &replace_all(&marked.value, &pairs));
                prop_assert_eq!(&real.warnings, &marked.warnings);
                let leaked = any_string(&marked.redacted, &|s: &str| hidden.iter().any(|m| s.contains(m)));
                prop_assert!(!leaked, "a secret shows in {}", marked.redacted);
                prop_assert_eq!(&real.redacted, &replace_all(&marked.redacted, &shown));
            }
            (Err(real), Err(marked)) => {
                prop_assert!(!hidden.iter().any(|m| marked.contains(m)), "a secret shows in {}", marked);
                prop_assert_eq!(real, replace_text(&marked, &shown));
            }
            (real, marked) => prop_assert!(false, "real {real:?} but marked {marked:?}"),
        }
    }

    /// A template with no placeholders renders to itself, whatever braces and dollars it holds.
    #[test]
    fn a_template_without_placeholders_is_the_identity(
        words in prop::collection::vec(prop_oneof![
            "[^${}]{0,8}",
            prop::sample::select(vec![
                "$", "}", "{ x }", "{a.b}", "{\"json\": 1}", "{tool-path}", "{}", "{ }", "$HOME",
                "${9X}", "${Foo}", "{-}", "{1}", "{input-x}", "$(id)", "`id`", "}}", "{ {",
            ]).prop_map(str::to_string),
        ], 0..10),
        chain in chain(),
        data in data(),
    ) {
        // A space after each word keeps neighbours from forming syntax (`$` + `{a.b}`).
        let s: String = words.iter().map(|w| format!("{w} ")).collect();
        let doc = json!({"t": s, "list": [s, 1, null, {"n": s}]});
        let out = render(&doc, &chain, &data, true).expect("no placeholder, nothing to fail");
        prop_assert_eq!(&out.value, &doc);
        prop_assert!(out.warnings.is_empty());
        let t = Template::compile(&doc, &Chain::of(&chain), &Limits::default()).unwrap();
        prop_assert!(t.is_const(), "{doc}");
    }

    /// A document of values without `$` or `{` is returned unchanged, keys and all.
    #[test]
    fn a_json_tree_without_placeholders_is_the_identity(
        v in json_with(prop_oneof!["[^${]{0,8}", any::<String>().prop_map(|s| s.replace(['$', '{'], ""))].boxed()),
        chain in chain(),
    ) {
        let out = render(&v, &chain, &data_none(), true).expect("nothing to fail");
        prop_assert_eq!(out.value, v);
    }

    /// Whole-value placeholders of P (caller and runtime), C and I return every JSON value
    /// with its type, through every chain that holds their layer, in any order.
    #[test]
    fn whole_values_round_trip(v in json_value(), order in full_order(), rest in chain()) {
        let mut data = data_none();
        data.params.push(("v".into(), v.clone()));
        data.runtime.push(("rv".into(), v.clone()));
        data.state.push(("v".into(), v.clone()));
        data.inputs.push(("v".into(), v.clone()));
        let doc = json!({"p": "{v}", "r": "{rv}", "c": "${state.v}", "i": "{input:v}", "ii": "${inputs.v}"});
        let out = render(&doc, &order, &data, true).expect("every value is present");
        prop_assert_eq!(&out.value, &json!({"p": v, "r": v, "c": v, "i": v, "ii": v}));
        // A chain holding some layers: each whole placeholder of a layer it holds round-trips.
        let mut chain = rest.clone();
        chain.extend(&order);
        let out = render(&doc, &chain, &data, true).expect("every value is present");
        prop_assert_eq!(&out.value["p"], &v);
        prop_assert_eq!(&out.value["c"], &v);
        prop_assert_eq!(&out.value["i"], &v);
    }

    /// Whole-value placeholders also carry values through config keys (a key whose value is
    /// itself a whole placeholder keeps the type).
    #[test]
    fn whole_values_round_trip_through_config_keys(v in json_value(), order in full_order()) {
        let mut data = data_none();
        data.params.push(("v".into(), v.clone()));
        let doc = json!({"k": "{v}", "x": "{k}", "y": ["{k}"]});
        let out = render(&doc, &order, &data, true).expect("every value is present");
        prop_assert_eq!(&out.value, &json!({"k": v, "x": v, "y": [v]}));
    }

    /// `$${`, `{{name}}` and `{{input:key}}` yield their literal text, next to anything, in
    /// every order of the four layers; the escaped text is data, never scanned again.
    #[test]
    fn escapes_yield_their_literal_text(
        pieces in prop::collection::vec(prop_oneof![
            "[a-zA-Z0-9 .,;:!?=+*/()-]{0,5}".prop_map(|s| (s.clone(), s)),
            "[A-Za-z_][A-Za-z0-9_]{0,5}".prop_map(|n| (format!("{{{{{n}}}}}"), format!("{{{n}}}"))),
            "[A-Za-z0-9_]{1,5}".prop_map(|k| (format!("{{{{input:{k}}}}}"), format!("{{input:{k}}}"))),
            "[A-Z_][A-Z0-9_]{0,4}".prop_map(|n| (format!("$${{{n}}}"), format!("${{{n}}}"))),
            "[a-z][a-z.]{0,5}".prop_map(|p| (format!("$${{{p}}}"), format!("${{{p}}}"))),
            Just(("$${".to_string(), "${".to_string())),
        ], 0..8),
        order in full_order(),
        data in data(),
    ) {
        let template: String = pieces.iter().map(|p| p.0.as_str()).collect();
        let expected: String = pieces.iter().map(|p| p.1.as_str()).collect();
        let out = render(&json!({"t": template}), &order, &data, true)
            .map_err(|e| TestCaseError::fail(format!("{template:?}: {e}")))?;
        prop_assert_eq!(&out.value["t"], &json!(expected), "{:?}", template);
    }

    /// Rendering twice, or with the scope's maps built in another order, gives the same
    /// output, warnings and errors.
    #[test]
    fn rendering_is_deterministic_and_ignores_map_order(
        doc in document(),
        chain in chain(),
        data in data(),
        strict in any::<bool>(),
        seed in any::<u64>(),
    ) {
        let first = render(&doc, &chain, &data, strict);
        prop_assert_eq!(&first, &render(&doc, &chain, &data, strict));
        let shuffled = shuffled(&data, seed);
        prop_assert_eq!(&first, &render(&doc, &chain, &shuffled, strict));
        // One compiled template rendered twice agrees with itself too.
        let owned = data.owned();
        if let Ok(t) = Template::compile(&doc, &Chain::of(&chain), &Limits::default()) {
            let a = t.render(&owned.scope(), &RenderOptions::strict_if(strict)).map(|o| o.value.into_json()).map_err(|e| e.to_string());
            let b = t.render(&owned.scope(), &RenderOptions::strict_if(strict)).map(|o| o.value.into_json()).map_err(|e| e.to_string());
            prop_assert_eq!(a, b);
        }
    }
}

/// A scope with no values at all.
fn data_none() -> Data {
    Data {
        env: Vec::new(),
        params: Vec::new(),
        runtime: Vec::new(),
        state: Vec::new(),
        inputs: Vec::new(),
        other_first: false,
    }
}

/// The same data with every map of the scope in another order (a deterministic shuffle).
/// The entries of a value (the keys of `state`) are data and keep their order: `${state}`
/// renders them as written.
fn shuffled(data: &Data, seed: u64) -> Data {
    fn mix<T: Clone>(items: &[T], seed: u64) -> Vec<T> {
        let mut v = items.to_vec();
        let mut s = seed | 1;
        for i in (1..v.len()).rev() {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            v.swap(i, (s % (i as u64 + 1)) as usize);
        }
        v
    }
    Data {
        env: mix(&data.env, seed),
        params: mix(&data.params, seed.rotate_left(8)),
        runtime: mix(&data.runtime, seed.rotate_left(16)),
        state: data.state.clone(),
        inputs: mix(&data.inputs, seed.rotate_left(32)),
        other_first: seed & 1 == 1,
    }
}
