use serde_json::Value;

use crate::{
    Error, FieldPath, Layer, Limits, Node, Origin, PathSeg, Rendered, Scope, Seq, Span, Warning,
};

/// What is known about a config key once it has been rendered.
#[derive(Debug, Clone)]
struct Resolved {
    value: Rendered,
    /// The longest chain of config-key references below this key, this key first.
    chain: Vec<String>,
}

/// A parameter as layer P found it.
#[derive(Debug, Clone)]
pub enum Param<'a> {
    /// A runtime or caller parameter: data.
    Data(&'a Value),
    /// A config key, rendered through the same chain.
    Config(Rendered),
}

/// The state of one render: the scope, the options, the warnings so far, and the bookkeeping
/// of config-key parameters (memoised values, the chain being followed).
pub struct RenderCx<'a> {
    /// What the layers substitute from.
    pub scope: &'a Scope<'a>,
    /// The limits in force.
    pub limits: &'a Limits,
    /// When true, a missing variable, path or input is an error instead of a warning.
    pub strict: bool,
    warnings: Vec<Warning>,
    path: FieldPath,
    config: &'a [(String, Node)],
    memo: Vec<Option<Resolved>>,
    chain: Vec<usize>,
    deepest: Vec<String>,
    total_bytes: usize,
}

impl<'a> RenderCx<'a> {
    /// A render over `scope`; `config` holds the document's top-level entries (layer P's config
    /// keys), empty when the document is not a map.
    pub fn new(
        scope: &'a Scope<'a>,
        limits: &'a Limits,
        strict: bool,
        config: &'a [(String, Node)],
    ) -> RenderCx<'a> {
        RenderCx {
            scope,
            limits,
            strict,
            warnings: Vec::new(),
            path: FieldPath::root(),
            config,
            memo: (0..config.len()).map(|_| None).collect(),
            chain: Vec::new(),
            deepest: Vec::new(),
            total_bytes: 0,
        }
    }

    /// The warnings collected so far.
    pub fn into_warnings(self) -> Vec<Warning> {
        self.warnings
    }

    /// Reports a missing value: a warning, or an error in strict mode.
    pub fn missing(&mut self, layer: Layer, message: String, span: Span) -> Result<(), Error> {
        if self.strict {
            return Err(Error::new(layer, message)
                .with_span(span)
                .with_hint("strict mode turns missing values into errors"));
        }
        self.warnings.push(Warning {
            layer,
            message,
            path: self.path.clone(),
            span: Some(span),
        });
        Ok(())
    }

    /// Fails when a rendered string has grown past the per-string limit.
    pub fn check_output(&self, len: usize, layer: Layer, span: Span) -> Result<(), Error> {
        if len > self.limits.output_bytes_per_string {
            return Err(Error::new(
                layer,
                format!(
                    "rendered string exceeds {} bytes",
                    self.limits.output_bytes_per_string
                ),
            )
            .with_span(span)
            .with_hint("raise the output-bytes-per-string limit if this is intended"));
        }
        Ok(())
    }

    /// Renders one string leaf at `path`, attaching the path to errors.
    pub fn render_leaf(&mut self, seq: &Seq, path: &FieldPath) -> Result<Rendered, Error> {
        let saved = std::mem::replace(&mut self.path, path.clone());
        let result = seq.render(self).map_err(|e| e.at_path(path));
        self.path = saved;
        let rendered = result?;
        if let Rendered::Text(t) = &rendered {
            self.total_bytes += t.text.len();
            if self.total_bytes > self.limits.output_bytes_per_config {
                return Err(Error::new(
                    Layer::Request,
                    format!(
                        "rendered document exceeds {} bytes",
                        self.limits.output_bytes_per_config
                    ),
                )
                .at_path(path)
                .with_hint("raise the output-bytes-per-config limit if this is intended"));
            }
        }
        Ok(rendered)
    }

    /// Renders the document's top-level entry `index` (a config key) as the start of a chain.
    pub fn render_config_entry(&mut self, index: usize) -> Result<Rendered, Error> {
        if let Some(done) = &self.memo[index] {
            return Ok(done.value.clone());
        }
        self.follow(index, Span::new(0, 0))
    }

    /// Looks a parameter up: runtime parameters first, then config keys, then caller
    /// parameters. `span` is the placeholder's, for chain errors.
    pub fn param(&mut self, name: &str, span: Span) -> Result<Option<Param<'a>>, Error> {
        if let Some(v) = self.scope.runtime_params.get(name) {
            return Ok(Some(Param::Data(v)));
        }
        if let Some(index) = self.config.iter().position(|(k, _)| k == name) {
            return self.follow(index, span).map(|r| Some(Param::Config(r)));
        }
        Ok(self.scope.caller_params.get(name).map(Param::Data))
    }

    fn names(&self, chain: &[usize]) -> Vec<String> {
        chain.iter().map(|&i| self.config[i].0.clone()).collect()
    }

    fn follow(&mut self, index: usize, span: Span) -> Result<Rendered, Error> {
        let config = self.config;
        let name = &config[index].0;
        if let Some(pos) = self.chain.iter().position(|&k| k == index) {
            let mut names = self.names(&self.chain[pos..]);
            names.push(name.clone());
            return Err(Error::new(
                Layer::Params,
                format!("parameter cycle: {}", names.join(" -> ")),
            )
            .with_span(span)
            .with_hint("a parameter cannot refer to itself, directly or through others"));
        }
        let links = self.chain.len();
        let (value, below) = match &self.memo[index] {
            Some(done) => {
                let (value, below) = (done.value.clone(), done.chain.clone());
                self.check_links(links + below.len() - 1, &below, span)?;
                (value, below)
            }
            None => {
                self.check_links(links, std::slice::from_ref(name), span)?;
                self.chain.push(index);
                let outer = std::mem::replace(&mut self.deepest, vec![name.clone()]);
                let path = FieldPath(vec![PathSeg::Key(name.clone())]);
                let result = config[index].1.render_at(self, &path);
                self.chain.pop();
                let below = std::mem::replace(&mut self.deepest, outer);
                let value = result?;
                self.memo[index] = Some(Resolved {
                    value: value.clone(),
                    chain: below.clone(),
                });
                (value, below)
            }
        };
        if let Some(parent) = self.deepest.first() {
            if below.len() + 1 > self.deepest.len() {
                let mut longer = vec![parent.clone()];
                longer.extend(below);
                self.deepest = longer;
            }
        }
        Ok(value)
    }

    /// Fails when following `below` from the current chain takes more than the link limit.
    fn check_links(&self, links: usize, below: &[String], span: Span) -> Result<(), Error> {
        if links <= self.limits.param_links {
            return Ok(());
        }
        let mut names = self.names(&self.chain);
        names.extend(below.iter().cloned());
        Err(Error::new(
            Layer::Params,
            format!(
                "parameter chain is longer than {} links: {}",
                self.limits.param_links,
                names.join(" -> ")
            ),
        )
        .with_span(span)
        .with_hint("shorten the chain or raise the param-links limit"))
    }
}

impl Origin {
    /// The origin of substituted data: secret when `secret`, data otherwise.
    pub fn of_data(secret: bool) -> Origin {
        if secret {
            Origin::Secret
        } else {
            Origin::Data
        }
    }
}
