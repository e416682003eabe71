//! A small harness: a scope built step by step, rendered through any chain.
#![allow(dead_code)]

use serde_json::{Map, Value};
use strata_core::{EnvMap, Error, Layer, Limits, RenderOptions, Scope};
use strata_pipeline::{Chain, Template};

/// The four layers, short.
pub const C: Layer = Layer::CONTEXT;
pub const E: Layer = Layer::ENV;
pub const I: Layer = Layer::INPUTS;
pub const P: Layer = Layer::PARAMS;

/// Everything a render needs, built fluently.
#[derive(Default)]
pub struct Case {
    pub env: EnvMap,
    pub runtime: Map<String, Value>,
    pub params: Map<String, Value>,
    pub context: Map<String, Value>,
    pub inputs: Map<String, Value>,
    pub strict: bool,
    pub limits: Limits,
}

/// A rendered document: the plain JSON, the redacted JSON and the warnings as text.
#[derive(Debug)]
pub struct Out {
    pub value: Value,
    pub redacted: Value,
    pub warnings: Vec<String>,
}

pub fn case() -> Case {
    Case::default()
}

impl Case {
    pub fn env(mut self, k: &str, v: &str) -> Self {
        self.env.set(k, v, false);
        self
    }
    pub fn secret(mut self, k: &str, v: &str) -> Self {
        self.env.set(k, v, true);
        self
    }
    pub fn runtime(mut self, k: &str, v: Value) -> Self {
        self.runtime.insert(k.into(), v);
        self
    }
    pub fn param(mut self, k: &str, v: Value) -> Self {
        self.params.insert(k.into(), v);
        self
    }
    pub fn ctx(mut self, k: &str, v: Value) -> Self {
        self.context.insert(k.into(), v);
        self
    }
    pub fn input(mut self, k: &str, v: Value) -> Self {
        self.inputs.insert(k.into(), v);
        self
    }
    pub fn strict(mut self) -> Self {
        self.strict = true;
        self
    }
    pub fn limits(mut self, f: impl FnOnce(&mut Limits)) -> Self {
        f(&mut self.limits);
        self
    }

    /// Renders `template` through `layers`.
    pub fn render(&self, layers: &[Layer], template: &Value) -> Result<Out, Error> {
        let context = Value::Object(self.context.clone());
        let scope = Scope {
            env: &self.env,
            runtime_params: &self.runtime,
            caller_params: &self.params,
            context: &context,
            inputs: &self.inputs,
        };
        let t = Template::compile(template, &Chain::of(layers), &self.limits)?;
        let out = t.render(&scope, &RenderOptions::strict_if(self.strict))?;
        Ok(Out {
            redacted: out.value.to_redacted_json(),
            value: out.value.into_json(),
            warnings: out.warnings.iter().map(|w| w.to_string()).collect(),
        })
    }

    /// Renders one string through `layers` and returns the value; panics on error.
    pub fn one(&self, layers: &[Layer], s: &str) -> Value {
        match self.render(layers, &Value::String(s.into())) {
            Ok(out) => out.value,
            Err(e) => panic!("{s:?} failed: {e}"),
        }
    }

    /// Renders one string through `layers` and returns the error text; panics on success.
    pub fn err(&self, layers: &[Layer], s: &str) -> String {
        match self.render(layers, &Value::String(s.into())) {
            Ok(out) => panic!("{s:?} rendered {:?}", out.value),
            Err(e) => e.to_string(),
        }
    }

    /// Renders one string through `layers` and returns its warnings.
    pub fn warnings(&self, layers: &[Layer], s: &str) -> Vec<String> {
        self.render(layers, &Value::String(s.into()))
            .unwrap_or_else(|e| panic!("{s:?} failed: {e}"))
            .warnings
    }
}

/// The full documented chain (stages 1–4).
pub const FULL: [Layer; 4] = [I, C, E, P];
