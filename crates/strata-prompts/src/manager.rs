//! The manager: built once from a tree (and dicts), switched to new settings without
//! touching the old one, and rendering by key.

use std::path::Path;
use std::sync::Arc;

use serde_json::{Map, Value};
use strata_core::{push_value_text, Error, ErrorData, ErrorKind, Location};

use crate::context::{lend_feed, Vars};
use crate::explain::{Candidate, Explain, UnknownKey, Variable};
use crate::load::{read_tree, read_value, Found};
use crate::lookup::{candidates, Overrides, Plan, Settings};
use crate::render::{redact, redact_error, Call, Job, Rendered, Variant};
use crate::store::{PromptLimits, Store, DEFAULT_TEMPLATE};
use crate::LAYER;

/// The directory of a project's prompt templates.
pub const PROMPTS_DIR: &str = "prompts";

/// Prompt templates chosen by key with hierarchical fallback (seed 002's TemplateManager).
///
/// Cheap to clone: the templates are shared, compiled once, by every manager [`switch`]
/// makes.
///
/// [`switch`]: PromptManager::switch
#[derive(Clone)]
pub struct PromptManager {
    store: Arc<Store>,
    settings: Settings,
    plan: Arc<Plan>,
    predefined: Arc<Vars>,
}

impl std::fmt::Debug for PromptManager {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PromptManager")
            .field("templates", &self.store.templates.len())
            .field("settings", &self.settings)
            .finish()
    }
}

/// Builds a [`PromptManager`] from trees, dicts and settings.
#[derive(Debug, Default)]
pub struct Builder {
    found: Found,
    /// The default template's source, and where it was read (shown in messages).
    default_template: Option<(String, String)>,
    settings: Settings,
    limits: PromptLimits,
}

impl Builder {
    /// Reads the tree at `dir`, shown in messages as `shown` (`prompts`).
    pub fn dir(mut self, dir: &Path, shown: &str) -> Builder {
        let mut found = read_tree(dir, shown, &self.core_limits());
        self.merge(&mut found);
        self
    }

    /// Adds the templates of a dict (`{main: {default: "…"}}`), placed at `name` in messages.
    pub fn dict(mut self, value: &Value, name: &str) -> Builder {
        let mut found = read_value(value, name, &self.core_limits());
        self.merge(&mut found);
        self
    }

    /// Sets the template used when nothing else matches.
    pub fn default_template(self, source: &str) -> Builder {
        self.default_template_from(source, DEFAULT_TEMPLATE)
    }

    /// Sets the template used when nothing else matches, read from the file `file` (named
    /// in the messages about it, its positions the file's).
    pub fn default_template_from(mut self, source: &str, file: &str) -> Builder {
        self.default_template = Some((source.to_string(), file.to_string()));
        self
    }

    /// Sets the settings.
    pub fn settings(mut self, settings: Settings) -> Builder {
        self.settings = settings;
        self
    }

    /// Sets the limits (before reading anything).
    pub fn limits(mut self, limits: PromptLimits) -> Builder {
        self.limits = limits;
        self
    }

    fn core_limits(&self) -> strata_core::Limits {
        strata_core::Limits {
            template_bytes: self.limits.template_bytes,
            template_bytes_per_document: self.limits.tree_bytes,
            ..strata_core::Limits::default()
        }
    }

    fn merge(&mut self, found: &mut Found) {
        self.found.defs.append(&mut found.defs);
        self.found.errors.append(&mut found.errors);
        self.found.files += found.files;
        self.found.bytes = self.found.bytes.saturating_add(found.bytes);
        if self.found.bytes > self.limits.tree_bytes
            && !self
                .found
                .errors
                .iter()
                .any(|e| e.kind() == ErrorKind::Limit)
        {
            self.found
                .errors
                .push(crate::load::tree_too_big(self.limits.tree_bytes));
        }
    }

    /// The manager, or the first problem met (in file order).
    pub fn build(self) -> Result<PromptManager, Error> {
        let loaded = self.build_all()?;
        match loaded.errors.into_iter().next() {
            Some(e) => Err(e),
            None => Ok(loaded.manager),
        }
    }

    /// The manager of everything that loaded, with every problem met (for checks). Fails only
    /// when the settings are invalid.
    pub fn build_all(self) -> Result<Loaded, Error> {
        self.settings.check()?;
        let mut errors = self.found.errors;
        let store = Store::build(
            self.found.defs,
            self.default_template
                .as_ref()
                .map(|(s, f)| (s.as_str(), f.as_str())),
            self.limits,
            &mut errors,
        );
        errors.sort_by_key(|e| e.location().map(|l| (l.file.clone(), l.line, l.column)));
        let store = Arc::new(store);
        Ok(Loaded {
            manager: PromptManager::with(store, self.settings),
            errors,
            files: self.found.files,
        })
    }
}

/// What [`Builder::build_all`] loaded.
#[derive(Debug)]
pub struct Loaded {
    /// The manager of every template that loaded.
    pub manager: PromptManager,
    /// Every problem, in file order.
    pub errors: Vec<Error>,
    /// How many files were read.
    pub files: usize,
}

/// A template as checks and listings see it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TemplateInfo {
    /// Its id (`main/BrowseLink.enterprise`, `main/components/tone.formal`).
    pub id: String,
    /// Its namespace (`main`; `""` for the root).
    pub namespace: String,
    /// Its name (`BrowseLink`, or the component's name).
    pub name: String,
    /// Its version, when it has one.
    pub version: Option<String>,
    /// True for a component.
    pub component: bool,
    /// Where it is defined.
    pub place: crate::Place,
    /// The top-level names it reads, sorted.
    pub reads: Vec<String>,
    /// Its content hash (SHA-256, hex).
    pub hash: String,
}

/// A namespace as `strata prompt list` shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Namespace {
    /// `main`, `action_agent/main`; `""` for the root.
    pub path: String,
    /// Its templates by name, sorted: `(name, versions)`, `None` standing for the
    /// unversioned template.
    pub names: Vec<(String, Vec<Option<String>>)>,
    /// Its own components, in declaration order: `(name, versions)` (empty when plain).
    pub components: Vec<(String, Vec<String>)>,
}

impl PromptManager {
    /// A builder.
    pub fn builder() -> Builder {
        Builder::default()
    }

    /// Loads `prompts/` of the project at `root` with default settings and the project's
    /// `limits`.
    pub fn load(root: &Path, limits: &strata_core::Limits) -> Result<PromptManager, Error> {
        let dir = root.join(PROMPTS_DIR);
        if !dir.is_dir() {
            return Err(Error::new(
                LAYER,
                ErrorKind::Io,
                format!("the project has no `{PROMPTS_DIR}/` directory"),
            )
            .with_hint("prompt templates live in prompts/<type>/<name>.j2 (see docs/prompts.md)"));
        }
        PromptManager::builder()
            .limits(PromptLimits::from_limits(limits))
            .dir(&dir, PROMPTS_DIR)
            .build()
    }

    fn with(store: Arc<Store>, settings: Settings) -> PromptManager {
        let plan = Arc::new(Plan::new(&store, &settings));
        let predefined = Arc::new(Vars::of(&settings.predefined));
        PromptManager {
            store,
            settings,
            plan,
            predefined,
        }
    }

    /// The settings.
    pub fn settings(&self) -> &Settings {
        &self.settings
    }

    /// A manager with `overrides` applied; this one is unchanged.
    pub fn switch(&self, overrides: &Overrides) -> Result<PromptManager, Error> {
        let settings = self.settings.with(overrides)?;
        Ok(PromptManager::with(self.store.clone(), settings))
    }

    /// The id of the template `key` resolves to, or `None` when nothing matches.
    pub fn resolve(&self, key: Option<&str>) -> Result<Option<&str>, Error> {
        Ok(self
            .plan
            .resolve(&self.store, key)?
            .map(|t| self.store.templates[t].id.as_str()))
    }

    /// The fallback chain of `key`: every template id its lookup tries, in order, through
    /// the one that wins (the last, when one does). A candidate no file defines is kept, so
    /// the chain says where a template would take precedence.
    pub fn fallback_chain(&self, key: Option<&str>) -> Result<Vec<String>, Error> {
        let winner = self.resolve(key)?.map(str::to_string);
        let mut chain = Vec::new();
        for id in candidates(&self.settings, key)? {
            let won = winner.as_deref() == Some(id.as_str());
            chain.push(id);
            if won {
                return Ok(chain);
            }
        }
        if self.store.default_template.is_some() {
            chain.push(DEFAULT_TEMPLATE.to_string());
        }
        Ok(chain)
    }

    /// Renders the template `call.key` resolves to. Feed and knowledge keys may be written
    /// in braces as seed 002 writes them (`{{ user_input }}`): they name the variable inside.
    pub fn render(&self, call: &Call<'_>) -> Result<Rendered, Error> {
        let feed = call
            .feed
            .map(|f| crate::feed::unbraced(f, "feed"))
            .transpose()?;
        let knowledge = call
            .knowledge
            .map(|k| crate::feed::unbraced(k, "knowledge"))
            .transpose()?;
        let call = Call {
            feed: feed.as_deref(),
            knowledge: knowledge.as_deref(),
            ..call.clone()
        };
        let call = &call;
        let secrets = self.secret_values(call);
        self.render_in(call, &secrets)
            .map_err(|e| redact_error(e, &secrets))
    }

    /// The key's template name when no namespace of the tree defines a template of that name
    /// (in any version): the lookup then falls back to a default, which is the design, but
    /// such a key is almost always a typo. `None` for no key, the default name, or a key
    /// that is not a valid key.
    pub fn unknown_key(&self, key: Option<&str>) -> Option<UnknownKey> {
        let parsed = crate::names::parse_key(key?).ok()?;
        let (name, _) = crate::names::split_stem(parsed.name);
        if name == self.settings.default_name || name == "default" {
            return None;
        }
        let names = &self.store.names;
        if names.contains(name) {
            return None;
        }
        let did_you_mean =
            strata_core::did_you_mean(name, names.iter().map(String::as_str)).map(str::to_string);
        Some(UnknownKey {
            name: name.to_string(),
            did_you_mean,
        })
    }

    fn render_in(&self, call: &Call<'_>, secrets: &[String]) -> Result<Rendered, Error> {
        let switched;
        let manager = if call.overrides.is_empty() {
            self
        } else {
            switched = self.switch(&call.overrides)?;
            &switched
        };
        let store = &manager.store;
        let Some(t) = manager.plan.resolve(store, call.key)? else {
            let tried = candidates(&manager.settings, call.key)?;
            let key = call.key.unwrap_or(&manager.settings.default_name);
            return Err(Error::new(
                LAYER,
                ErrorKind::TemplateNotFound,
                format!("no template for key `{key}`: tried {}", tried.join(", ")),
            )
            .with_hint(format!(
                "add one of them, or a `{}` template at the top of prompts/",
                manager.settings.default_name
            ))
            .with_data(ErrorData::Candidates(tried)));
        };
        let empty = Map::new();
        let feed = call.feed.unwrap_or(&empty);
        let merged;
        let feed = match call.knowledge {
            Some(k) => {
                merged = call.merge.apply(feed, k);
                &merged
            }
            None => feed,
        };
        // The renders read the feed in place, lent for their time.
        lend_feed(feed, |lent| manager.render_lent(call, t, lent, secrets))
    }

    /// Renders template `t` for `call`, its feed lent as `lent` (see [`lend_feed`]).
    fn render_lent(
        &self,
        call: &Call<'_>,
        t: usize,
        lent: u64,
        secrets: &[String],
    ) -> Result<Rendered, Error> {
        let store = &self.store;
        let job = Job {
            store,
            template: t,
            feed: lent,
            predefined: self.predefined.clone(),
        };
        if let Some(pin) = &call.hash {
            job.check_hash(pin)?;
        }
        let mut warnings = Vec::new();
        let mut notices = Vec::new();
        if let Some(u) = self.unknown_key(call.key) {
            let message = format!(
                "key `{}` fell back to `{}`: {}",
                call.key.unwrap_or_default(),
                store.templates[t].id,
                u.describe()
            );
            if call.undefined == strata_core::Undefined::Strict {
                return Err(
                    Error::new(LAYER, ErrorKind::TemplateNotFound, message).with_hint(
                        "under --strict a fallback is an error: name a template that exists",
                    ),
                );
            }
            notices.push(strata_core::Warning {
                layer: LAYER,
                message,
                path: strata_core::FieldPath::root(),
                span: None,
            });
        }
        let mut variants = Vec::new();
        for picks in job.variants(&call.pins)? {
            let versions = job.labels(&picks);
            let text = job.render(picks, call.undefined, &mut warnings)?;
            variants.push(Variant { versions, text });
        }
        for w in &mut warnings {
            w.message = redact(&w.message, secrets);
        }
        let tmpl = &store.templates[t];
        Ok(Rendered {
            template: tmpl.id.clone(),
            file: tmpl.file.clone(),
            hash: tmpl.hash.clone(),
            variants,
            warnings,
            notices,
            explain: call
                .explain
                .then(|| self.explain(call, t, secrets))
                .transpose()?,
        })
    }

    /// The string values of the call's secret variables.
    fn secret_values(&self, call: &Call<'_>) -> Vec<String> {
        let mut out = Vec::new();
        let sources = [call.feed, call.knowledge, Some(&self.settings.predefined)];
        for name in &call.secrets {
            for value in sources.iter().flatten().filter_map(|m| m.get(name)) {
                strata_core::for_each_leaf(value, &strata_core::FieldPath::root(), &mut |_, v| {
                    let mut text = String::new();
                    push_value_text(v, &mut text);
                    if !text.is_empty() {
                        out.push(text);
                    }
                });
            }
        }
        out.sort_by_key(|s| std::cmp::Reverse(s.len()));
        out
    }

    fn explain(&self, call: &Call<'_>, won: usize, secrets: &[String]) -> Result<Explain, Error> {
        let store = &self.store;
        let mut list: Vec<Candidate> = candidates(&self.settings, call.key)?
            .into_iter()
            .map(|id| Candidate {
                file: store
                    .template(&id)
                    .map(|t| store.templates[t].place.to_string()),
                id,
            })
            .collect();
        if let Some(d) = store.default_template {
            list.push(Candidate {
                id: DEFAULT_TEMPLATE.into(),
                file: Some(store.templates[d].place.to_string()),
            });
        }
        let winner = list
            .iter()
            .position(|c| c.file.is_some())
            .filter(|&i| list[i].id == store.templates[won].id);
        let s = &self.settings;
        let settings = format!(
            "type {}, root space {}, version {}, default name {}, merge {}",
            s.type_,
            s.root_space.as_deref().unwrap_or("none"),
            s.version.as_deref().unwrap_or("none"),
            s.default_name,
            call.merge.name()
        );
        let shown = |name: &str, v: &Value| {
            if call.secrets.iter().any(|n| n == name) {
                "***".to_string()
            } else {
                redact(&v.to_string(), secrets)
            }
        };
        let empty = Map::new();
        let feed = call.feed.unwrap_or(&empty);
        let knowledge = call.knowledge.unwrap_or(&empty);
        let mut variables = Vec::new();
        for (name, v) in feed {
            let source = if knowledge.contains_key(name) {
                "feed+knowledge"
            } else {
                "feed"
            };
            let value = knowledge
                .get(name)
                .map_or_else(|| v.clone(), |k| call.merge.combine(v, k));
            variables.push(Variable {
                name: name.clone(),
                source,
                shown: shown(name, &value),
            });
        }
        for (name, v) in knowledge.iter().filter(|(n, _)| !feed.contains_key(*n)) {
            variables.push(Variable {
                name: name.clone(),
                source: "knowledge",
                shown: shown(name, v),
            });
        }
        let visible = &store.spaces[store.templates[won].space].visible;
        for (name, &c) in visible.iter() {
            if variables.iter().any(|v| &v.name == name) {
                continue;
            }
            let comp = &store.comps[c];
            let versions: Vec<&str> = comp
                .versions
                .iter()
                .filter_map(|v| v.0.as_deref())
                .collect();
            let at = &store.templates[comp.versions[0].1].place;
            let shown = if versions.is_empty() {
                at.to_string()
            } else {
                format!("{at} (versions {})", versions.join(", "))
            };
            variables.push(Variable {
                name: name.clone(),
                source: "component",
                shown,
            });
        }
        for (name, v) in &self.settings.predefined {
            if !variables.iter().any(|x| &x.name == name) {
                variables.push(Variable {
                    name: name.clone(),
                    source: "predefined",
                    shown: shown(name, v),
                });
            }
        }
        Ok(Explain {
            key: call.key.map(str::to_string),
            settings,
            candidates: list,
            winner,
            variables,
            unknown_key: self.unknown_key(call.key),
        })
    }

    /// Every template and component, in load order.
    pub fn templates(&self) -> Vec<TemplateInfo> {
        let store = &self.store;
        store
            .templates
            .iter()
            .filter(|t| t.role != crate::store::Role::Default)
            .map(|t| {
                let namespace = store.spaces[t.space].path.clone();
                let (name, version, component) = match t.role {
                    crate::store::Role::Component(c) => {
                        let comp = &store.comps[c];
                        let version = comp
                            .versions
                            .iter()
                            .find(|v| store.templates[v.1].id == t.id)
                            .and_then(|v| v.0.clone());
                        (comp.name.clone(), version, true)
                    }
                    _ => {
                        let stem = t.id.rsplit('/').next().unwrap_or(&t.id);
                        let (name, version) = crate::names::split_stem(stem);
                        (name.to_string(), version.map(str::to_string), false)
                    }
                };
                TemplateInfo {
                    id: t.id.clone(),
                    namespace,
                    name,
                    version,
                    component,
                    place: t.place.clone(),
                    reads: t.reads.clone(),
                    hash: t.hash.clone(),
                }
            })
            .collect()
    }

    /// Every template name of every namespace (the keys a lookup is meant for: `BrowseLink`,
    /// `default`), sorted, each once.
    pub fn keys(&self) -> Vec<String> {
        let mut keys: Vec<String> = self
            .namespaces()
            .into_iter()
            .flat_map(|n| n.names.into_iter().map(|(name, _)| name))
            .collect();
        keys.sort();
        keys.dedup();
        keys
    }

    /// The namespaces that hold templates or components, sorted by path (the root first).
    pub fn namespaces(&self) -> Vec<Namespace> {
        let store = &self.store;
        let mut out: Vec<Namespace> = Vec::new();
        for (i, space) in store.spaces.iter().enumerate() {
            let mut names: Vec<(String, Vec<Option<String>>)> = Vec::new();
            let mut stems: Vec<&String> = space.stems.keys().collect();
            stems.sort();
            for stem in stems {
                let (name, version) = crate::names::split_stem(stem);
                match names.iter_mut().find(|(n, _)| n == name) {
                    Some((_, versions)) => versions.push(version.map(str::to_string)),
                    None => names.push((name.to_string(), vec![version.map(str::to_string)])),
                }
            }
            for (_, versions) in &mut names {
                versions.sort();
            }
            let components: Vec<(String, Vec<String>)> = store
                .comps
                .iter()
                .filter(|c| c.space == i && !c.versions.is_empty())
                .map(|c| {
                    (
                        c.name.clone(),
                        c.versions.iter().filter_map(|v| v.0.clone()).collect(),
                    )
                })
                .collect();
            if !names.is_empty() || !components.is_empty() {
                out.push(Namespace {
                    path: space.path.clone(),
                    names,
                    components,
                });
            }
        }
        out.sort_by(|a, b| a.path.cmp(&b.path));
        out
    }

    /// The names template `id` needs from a feed: what it and the components it uses read,
    /// less the components it sees, the predefined variables and minijinja's globals.
    pub fn needs(&self, id: &str) -> Vec<String> {
        let store = &self.store;
        let Some(&t) = store.by_id.get(id) else {
            return Vec::new();
        };
        let visible = &store.spaces[store.templates[t].space].visible;
        let mut stack: Vec<&str> = store.templates[t]
            .reads
            .iter()
            .map(String::as_str)
            .collect();
        let mut seen = std::collections::BTreeSet::new();
        let mut out = std::collections::BTreeSet::new();
        while let Some(name) = stack.pop() {
            if !seen.insert(name) {
                continue;
            }
            if let Some(&c) = visible.get(name) {
                for (_, v) in &store.comps[c].versions {
                    stack.extend(store.templates[*v].reads.iter().map(String::as_str));
                }
            } else if !self.settings.predefined.contains_key(name)
                && !store.globals.iter().any(|g| g == name)
            {
                out.insert(name.to_string());
            }
        }
        out.into_iter().collect()
    }

    /// Every template a lookup with these settings can reach whatever the key: the templates
    /// of type `type_` (default: the setting's) under the root space, its ancestors and the
    /// top, the top-level defaults, and the configured default template.
    pub fn reachable(&self, type_: Option<&str>) -> Vec<String> {
        let store = &self.store;
        let s = &self.settings;
        let type_ = type_.unwrap_or(&s.type_);
        let mut spaces: Vec<String> = Vec::new();
        let mut at = s.root_space.clone();
        while let Some(r) = at {
            spaces.push(format!("{r}/{type_}"));
            at = r.rsplit_once('/').map(|(p, _)| p.to_string());
        }
        spaces.push(type_.to_string());
        let mut out: Vec<String> = Vec::new();
        for path in &spaces {
            if let Some(i) = store.space_at(path) {
                let mut ids: Vec<String> = store.spaces[i]
                    .stems
                    .values()
                    .map(|&t| store.templates[t].id.clone())
                    .collect();
                ids.sort();
                out.extend(ids);
            }
        }
        for name in [
            Some(s.default_name.clone()),
            s.version
                .as_ref()
                .map(|v| format!("{}.{v}", s.default_name)),
        ]
        .into_iter()
        .flatten()
        {
            if store.template(&name).is_some() {
                out.push(name);
            }
        }
        if store.default_template.is_some() {
            out.push(DEFAULT_TEMPLATE.into());
        }
        out
    }

    /// The components template `id` sees, by name, each with its versions (empty when
    /// plain).
    pub fn components_of(&self, id: &str) -> Vec<(String, Vec<String>)> {
        let store = &self.store;
        let Some(&t) = store.by_id.get(id) else {
            return Vec::new();
        };
        store.spaces[store.templates[t].space]
            .visible
            .iter()
            .map(|(name, &c)| {
                (
                    name.clone(),
                    store.comps[c]
                        .versions
                        .iter()
                        .filter_map(|v| v.0.clone())
                        .collect(),
                )
            })
            .collect()
    }

    /// Where template `id` first reads `name` (its start when the read is not found).
    pub fn first_use(&self, id: &str, name: &str) -> Option<Location> {
        let t = &self.store.templates[*self.store.by_id.get(id)?];
        Some(match crate::scan::first_use(&t.source, name) {
            Some((line, column)) => t.place.at(line, column),
            None => t.place.start(),
        })
    }

    /// Every `{% include %}`, `{% import %}`, `{% from %}` and `{% extends %}` of a literal
    /// name that is not a loaded template: `(template id, name, where)`.
    pub fn unknown_includes(&self) -> Vec<(String, String, Location)> {
        let store = &self.store;
        let mut out = Vec::new();
        for t in &store.templates {
            for (name, line, column) in crate::scan::includes(&t.source) {
                if !store.by_id.contains_key(&name) {
                    out.push((t.id.clone(), name, t.place.at(line, column)));
                }
            }
        }
        out
    }

    /// True when a versioned template `namespace/name.version` overrides something: an
    /// unversioned `name` in its namespace or one a lookup through it falls back to.
    pub fn shadows_something(&self, namespace: &str, name: &str) -> bool {
        let store = &self.store;
        let has = |path: &str| {
            store
                .space_at(path)
                .is_some_and(|i| store.spaces[i].stems.contains_key(name))
        };
        let segs: Vec<&str> = if namespace.is_empty() {
            Vec::new()
        } else {
            namespace.split('/').collect()
        };
        let Some((type_, roots)) = segs.split_last() else {
            return has("");
        };
        (0..=roots.len()).rev().any(|i| {
            let mut path = roots[..i].join("/");
            if !path.is_empty() {
                path.push('/');
            }
            path.push_str(type_);
            has(&path)
        })
    }
}
