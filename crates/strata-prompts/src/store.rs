//! The loaded tree: namespaces, templates and components, each template compiled once into a
//! minijinja environment (a strict and a lenient view sharing the compiled templates), with
//! what each template reads found statically.

use std::collections::{BTreeSet, HashMap};
use std::sync::Arc;

use indexmap::IndexMap;
use minijinja::Environment;
use sha2::{Digest, Sha256};
use strata_core::{Error, ErrorKind, Undefined};
use strata_jinja::{environment, error_position, set_undefined, to_error, JinjaLimits};

use crate::load::{Def, What, COMPONENTS};
use crate::place::Place;
use crate::LAYER;

/// A hash map with foldhash: names are short, and SipHash would cost more than the lookup.
pub(crate) type FastMap<K, V> = HashMap<K, V, foldhash::fast::RandomState>;

/// Bounds on loading and rendering prompts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PromptLimits {
    /// Largest template (or dict file), in bytes.
    pub template_bytes: usize,
    /// Most variants one render may produce (the product of versioned components).
    pub variants: usize,
    /// Fuel, recursion and output bytes of each render (the output bounded by the project's
    /// `limits.output_bytes_per_string`).
    pub jinja: JinjaLimits,
    /// Deepest chain of components one render may follow (a template reads `a`, which reads
    /// `b`, …): each is a render nested in the one that reads it, on the same stack.
    pub component_depth: usize,
    /// Most bytes of all the templates of the tree together, aliases counted (the project's
    /// `limits.template_bytes_per_document`).
    pub tree_bytes: usize,
}

impl Default for PromptLimits {
    fn default() -> Self {
        PromptLimits::from_limits(&strata_core::Limits::default())
    }
}

/// The deepest chain of components a render follows: far below what the smallest stack strata
/// renders on holds (a chain of 100 renders in 2 MiB; the depth reached before it failed was
/// about 2,000 on 8 MiB).
pub const COMPONENT_DEPTH: usize = 100;

impl PromptLimits {
    /// The prompt limits of a project whose limits are `limits` (the largest template is
    /// its `template_bytes`).
    pub fn from_limits(limits: &strata_core::Limits) -> Self {
        PromptLimits {
            template_bytes: limits.template_bytes,
            variants: 1000,
            jinja: JinjaLimits::from_limits(limits),
            component_depth: COMPONENT_DEPTH,
            tree_bytes: limits.template_bytes_per_document,
        }
    }
}

/// What a compiled template is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Role {
    /// A template of the tree, found by lookup.
    Template,
    /// One version of a component (its index in [`Store::comps`]).
    Component(usize),
    /// The configured default template.
    Default,
}

/// One compiled template.
#[derive(Debug)]
pub(crate) struct Tmpl {
    /// Its id, which is also its name in the environment (`main/BrowseLink.enterprise`,
    /// `main/components/tone.formal`).
    pub id: String,
    pub source: Arc<str>,
    pub place: Place,
    /// `place` as shown (`prompts/main/BrowseLink.j2`), made once.
    pub file: String,
    /// SHA-256 of the source, in hex.
    pub hash: String,
    /// The top-level names it reads, sorted (loop variables and `set` names excluded).
    pub reads: Vec<String>,
    /// The namespace it belongs to.
    pub space: usize,
    pub role: Role,
}

/// One namespace.
#[derive(Debug, Default)]
pub(crate) struct Space {
    /// `""` for the root, `main`, `action_agent/main`.
    pub path: String,
    pub parent: Option<usize>,
    pub children: FastMap<String, usize>,
    /// Its templates by stem (`BrowseLink`, `BrowseLink.enterprise`).
    pub stems: FastMap<String, usize>,
    /// The components its templates see: its own and its ancestors' (the nearest wins), in
    /// declaration order, nearest namespace first.
    pub visible: Arc<IndexMap<String, usize>>,
}

/// One component: a plain template, or several versions in declaration order.
#[derive(Debug)]
pub(crate) struct Comp {
    pub name: String,
    pub space: usize,
    /// `(None, t)` for a plain component; `(Some(version), t)` for each version.
    pub versions: Vec<(Option<String>, usize)>,
}

impl Comp {
    /// True when the component has versions.
    pub fn versioned(&self) -> bool {
        self.versions.first().is_some_and(|v| v.0.is_some())
    }
}

/// Everything loaded, shared by every manager `switch` makes.
#[derive(Debug)]
pub(crate) struct Store {
    pub spaces: Vec<Space>,
    pub templates: Vec<Tmpl>,
    pub comps: Vec<Comp>,
    /// Every compiled template by id.
    pub by_id: FastMap<String, usize>,
    pub default_template: Option<usize>,
    /// minijinja's semi-strict view.
    pub strict: Environment<'static>,
    /// The lenient view (same compiled templates).
    pub lenient: Environment<'static>,
    /// The environment's global names (`range`, `dict`, …): not feed variables.
    pub globals: Vec<String>,
    /// Per template: the versioned components its variants range over, in declaration order.
    pub product: Vec<Vec<usize>>,
    /// The name of every template of every namespace, without its version, in order.
    pub names: BTreeSet<String>,
    pub limits: PromptLimits,
}

/// The id a template has in the environment.
fn template_id(space: &str, stem: &str) -> String {
    if space.is_empty() {
        stem.to_string()
    } else {
        format!("{space}/{stem}")
    }
}

/// The id of a component version.
fn component_id(space: &str, name: &str, version: Option<&str>) -> String {
    let base = template_id(space, &format!("{COMPONENTS}/{name}"));
    match version {
        Some(v) => format!("{base}.{v}"),
        None => base,
    }
}

/// The SHA-256 of `text`, in hex.
pub(crate) fn sha256(text: &str) -> String {
    let digest = Sha256::digest(text.as_bytes());
    let mut out = String::with_capacity(64);
    for b in digest {
        out.push_str(&format!("{b:02x}"));
    }
    out
}

/// The id shown for the configured default template.
pub(crate) const DEFAULT_TEMPLATE: &str = "<default template>";

/// A minijinja error met while compiling or rendering `t`, located in its file.
pub(crate) fn jinja_error(err: &minijinja::Error, t: &Tmpl) -> Error {
    let location = match error_position(err, &t.source) {
        Some((line, column)) => t.place.at(line, column),
        None => t.place.at(err.line().unwrap_or(1), 1),
    };
    to_error(err, LAYER, None, 0)
        .map_message(|m| format!("template `{}`: {m}", t.id))
        .at_location(location)
}

struct Builder {
    spaces: Vec<Space>,
    templates: Vec<Tmpl>,
    comps: Vec<Comp>,
    by_id: FastMap<String, usize>,
    /// Components by namespace and name.
    comp_ids: FastMap<(usize, String), usize>,
    env: Environment<'static>,
    errors: Vec<Error>,
}

impl Builder {
    fn space(&mut self, path: &[String]) -> usize {
        let mut at = 0;
        for seg in path {
            at = match self.spaces[at].children.get(seg) {
                Some(&i) => i,
                None => {
                    let i = self.spaces.len();
                    let parent_path = &self.spaces[at].path;
                    let full = template_id(parent_path, seg);
                    self.spaces.push(Space {
                        path: full,
                        parent: Some(at),
                        ..Space::default()
                    });
                    self.spaces[at].children.insert(seg.clone(), i);
                    i
                }
            };
        }
        at
    }

    /// Compiles `source` as template `id`; `None` (and an error) when it does not compile.
    fn compile(&mut self, id: String, def: Def, space: usize, role: Role) -> Option<usize> {
        if let Some(&first) = self.by_id.get(&id) {
            let first = &self.templates[first].place;
            let what = match role {
                Role::Component(_) => "component",
                _ => "template",
            };
            let e = Error::new(
                LAYER,
                ErrorKind::DuplicateId,
                format!(
                    "{what} `{id}` is defined twice: in {first} and in {}",
                    def.place
                ),
            )
            .with_hint("remove one of them")
            .at_location(def.place.start());
            self.errors.push(e);
            return None;
        }
        let mut t = Tmpl {
            hash: sha256(&def.source),
            id: id.clone(),
            source: def.source.into(),
            file: def.place.to_string(),
            place: def.place,
            reads: Vec::new(),
            space,
            role,
        };
        // Compiled once here to check it and list what it reads, then dropped: a compiled
        // template costs about 10 KB whatever its size, so the environment compiles one
        // again only when a render asks for it (its loader), and a tree of thousands of
        // templates holds their sources only.
        match self.env.template_from_named_str(&id, &t.source) {
            Ok(compiled) => {
                let reads: BTreeSet<String> =
                    compiled.undeclared_variables(false).into_iter().collect();
                t.reads = reads.into_iter().collect();
            }
            Err(err) => {
                self.errors.push(jinja_error(&err, &t));
                return None;
            }
        }
        let i = self.templates.len();
        self.templates.push(t);
        self.by_id.insert(id, i);
        Some(i)
    }

    fn add(&mut self, def: Def) {
        let space = self.space(&def.space);
        let path = self.spaces[space].path.clone();
        match def.what.clone() {
            What::Template(stem) => {
                if let Some(t) = self.compile(template_id(&path, &stem), def, space, Role::Template)
                {
                    self.spaces[space].stems.insert(stem, t);
                }
            }
            What::Component { name, version } => {
                let existing = self.comp_ids.get(&(space, name.clone())).copied();
                // A component whose earlier definitions all failed to compile (their errors
                // are reported) has no version to compare with.
                let compared = existing.filter(|&c| !self.comps[c].versions.is_empty());
                if let Some(c) = compared {
                    if self.comps[c].versioned() != version.is_some() {
                        let first = &self.templates[self.comps[c].versions[0].1].place;
                        self.errors.push(
                            Error::new(
                                LAYER,
                                ErrorKind::DuplicateId,
                                format!(
                                    "component `{}` is both plain and versioned: in {first} and in {}",
                                    component_id(&path, &name, None),
                                    def.place
                                ),
                            )
                            .with_hint("give every definition of the component a version, or keep one plain definition")
                            .at_location(def.place.start()),
                        );
                        return;
                    }
                }
                let c = existing.unwrap_or_else(|| {
                    self.comps.push(Comp {
                        name: name.clone(),
                        space,
                        versions: Vec::new(),
                    });
                    self.comp_ids
                        .insert((space, name.clone()), self.comps.len() - 1);
                    self.comps.len() - 1
                });
                let id = component_id(&path, &name, version.as_deref());
                if let Some(t) = self.compile(id, def, space, Role::Component(c)) {
                    self.comps[c].versions.push((version, t));
                }
            }
        }
    }

    /// Fills every namespace's visible components, parents before children.
    fn visibility(&mut self) {
        for s in 0..self.spaces.len() {
            let mut visible: IndexMap<String, usize> = IndexMap::new();
            let mut at = Some(s);
            while let Some(i) = at {
                for (c, comp) in self.comps.iter().enumerate() {
                    if comp.space == i && !comp.versions.is_empty() {
                        visible.entry(comp.name.clone()).or_insert(c);
                    }
                }
                at = self.spaces[i].parent;
            }
            self.spaces[s].visible = Arc::new(visible);
        }
    }

    /// Components that read each other in a cycle, each cycle reported once. A depth-first
    /// walk per namespace that holds components (names resolve as that namespace sees them),
    /// with an explicit stack: linear in components and reads, whatever the chains' depth.
    fn cycles(&mut self) {
        let mut reported: BTreeSet<Vec<usize>> = BTreeSet::new();
        let n = self.comps.len();
        // What each component reads, once.
        let reads: Vec<Vec<&str>> = self
            .comps
            .iter()
            .map(|comp| {
                let names: BTreeSet<&str> = comp
                    .versions
                    .iter()
                    .flat_map(|(_, t)| self.templates[*t].reads.iter().map(String::as_str))
                    .collect();
                names.into_iter().collect()
            })
            .collect();
        let mut spaces: Vec<usize> = self.comps.iter().map(|c| c.space).collect();
        spaces.sort_unstable();
        spaces.dedup();
        let mut found: Vec<Vec<usize>> = Vec::new();
        for space in spaces {
            let visible = self.spaces[space].visible.clone();
            // 0: not seen, 1: on the walk's path, 2: done.
            let mut state = vec![0u8; n];
            let mut on_path: Vec<usize> = vec![usize::MAX; n];
            for start in 0..n {
                if self.comps[start].space != space || state[start] != 0 {
                    continue;
                }
                // (component, index of its next read)
                let mut path: Vec<(usize, usize)> = vec![(start, 0)];
                state[start] = 1;
                on_path[start] = 0;
                while let Some(&mut (c, ref mut next)) = path.last_mut() {
                    let Some(name) = reads[c].get(*next) else {
                        state[c] = 2;
                        path.pop();
                        continue;
                    };
                    *next += 1;
                    let Some(&to) = visible.get(*name) else {
                        continue;
                    };
                    match state[to] {
                        0 => {
                            state[to] = 1;
                            on_path[to] = path.len();
                            path.push((to, 0));
                        }
                        1 => {
                            let cycle: Vec<usize> =
                                path[on_path[to]..].iter().map(|&(c, _)| c).collect();
                            found.push(cycle);
                        }
                        _ => {}
                    }
                }
            }
        }
        // Each shown from its first component as declared, in declaration order.
        for cycle in &mut found {
            let first = (0..cycle.len()).min_by_key(|&i| cycle[i]).unwrap_or(0);
            cycle.rotate_left(first);
        }
        found.sort_by_key(|cycle| cycle[0]);
        for mut cycle in found {
            let mut key = cycle.clone();
            key.sort_unstable();
            if !reported.insert(key) {
                continue;
            }
            cycle.push(cycle[0]);
            let names: Vec<&str> = cycle.iter().map(|&c| self.comps[c].name.as_str()).collect();
            let t = &self.templates[self.comps[cycle[0]].versions[0].1];
            self.errors.push(
                Error::new(
                    LAYER,
                    ErrorKind::Cycle,
                    format!(
                        "components refer to each other in a cycle: {}",
                        names.join(" -> ")
                    ),
                )
                .with_hint("a component cannot use itself, directly or through others")
                .at_location(t.place.start()),
            );
        }
    }

    /// The versioned components template `t` ranges over: those it reads, directly or through
    /// the components it reads, in the order its namespace sees them.
    fn product(&self, t: usize) -> Vec<usize> {
        let tmpl = &self.templates[t];
        if tmpl.role != Role::Template && tmpl.role != Role::Default {
            return Vec::new();
        }
        let visible = &self.spaces[tmpl.space].visible;
        let mut seen: BTreeSet<&str> = BTreeSet::new();
        let mut stack: Vec<&str> = tmpl.reads.iter().map(String::as_str).collect();
        let mut found: BTreeSet<usize> = BTreeSet::new();
        while let Some(name) = stack.pop() {
            if !seen.insert(name) {
                continue;
            }
            if let Some((pos, _, &c)) = visible.get_full(name) {
                found.insert(pos);
                for (_, v) in &self.comps[c].versions {
                    stack.extend(self.templates[*v].reads.iter().map(String::as_str));
                }
            }
        }
        found
            .into_iter()
            .filter_map(|pos| visible.get_index(pos).map(|(_, &c)| c))
            .filter(|&c| self.comps[c].versioned())
            .collect()
    }
}

impl Store {
    /// Builds the store from the definitions found and the configured default template;
    /// problems are appended to `errors` and the rest is kept.
    pub(crate) fn build(
        defs: Vec<Def>,
        default_template: Option<(&str, &str)>,
        limits: PromptLimits,
        errors: &mut Vec<Error>,
    ) -> Store {
        let mut b = Builder {
            spaces: vec![Space::default()],
            templates: Vec::new(),
            comps: Vec::new(),
            by_id: FastMap::default(),
            comp_ids: FastMap::default(),
            env: environment(Undefined::Strict, limits.jinja),
            errors: Vec::new(),
        };
        for def in defs {
            b.add(def);
        }
        let default_template = default_template.and_then(|(source, file)| {
            let def = Def {
                space: Vec::new(),
                what: What::Template(DEFAULT_TEMPLATE.into()),
                source: source.to_string(),
                place: Place::given(file),
            };
            b.compile(DEFAULT_TEMPLATE.into(), def, 0, Role::Default)
        });
        b.visibility();
        b.cycles();
        let product = (0..b.templates.len()).map(|t| b.product(t)).collect();
        // The loader shares the templates' sources; a compile copies one when it is first used.
        let sources: FastMap<String, Arc<str>> = b
            .by_id
            .iter()
            .map(|(id, &t)| (id.clone(), Arc::clone(&b.templates[t].source)))
            .collect();
        b.env
            .set_loader(move |name| Ok(sources.get(name).map(|s| s.to_string())));
        let mut lenient = b.env.clone();
        set_undefined(&mut lenient, Undefined::Lenient);
        errors.append(&mut b.errors);
        let names = b
            .spaces
            .iter()
            .flat_map(|space| space.stems.keys())
            .map(|stem| crate::names::split_stem(stem).0.to_string())
            .collect();
        Store {
            names,
            globals: b.env.globals().map(|(k, _)| k.to_string()).collect(),
            spaces: b.spaces,
            templates: b.templates,
            comps: b.comps,
            by_id: b.by_id,
            default_template,
            strict: b.env,
            lenient,
            product,
            limits,
        }
    }

    /// The namespace at `path` (`""` is the root).
    pub(crate) fn space_at(&self, path: &str) -> Option<usize> {
        if path.is_empty() {
            return Some(0);
        }
        path.split('/')
            .try_fold(0, |at, seg| self.spaces[at].children.get(seg).copied())
    }

    /// The template of the tree called `id` (not a component).
    pub(crate) fn template(&self, id: &str) -> Option<usize> {
        self.by_id
            .get(id)
            .copied()
            .filter(|&t| self.templates[t].role == Role::Template)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::load::read_value;

    fn store(value: serde_json::Value) -> (Store, Vec<String>) {
        let found = read_value(&value, "t.yaml", &strata_core::Limits::default());
        let mut errors = found.errors;
        let s = Store::build(found.defs, None, PromptLimits::default(), &mut errors);
        (s, errors.iter().map(|e| e.message().to_string()).collect())
    }

    #[test]
    fn templates_compile_once_and_know_what_they_read() {
        let (s, errors) = store(serde_json::json!({
            "main": {"BrowseLink.enterprise": "{% for x in xs %}{{ x }}{{ y }}{% endfor %}{% set z = 1 %}{{ z }}"}
        }));
        assert!(errors.is_empty());
        let t = &s.templates[s.template("main/BrowseLink.enterprise").unwrap()];
        assert_eq!(t.reads, ["xs", "y"]);
        assert_eq!(
            t.hash,
            sha256("{% for x in xs %}{{ x }}{{ y }}{% endfor %}{% set z = 1 %}{{ z }}")
        );
        assert_eq!(s.space_at("main"), Some(1));
        assert_eq!(s.spaces[1].stems.len(), 1);
    }

    #[test]
    fn components_cycles_and_products_are_found() {
        let (s, errors) = store(serde_json::json!({
            "components": {"outer": "{{ tone }}"},
            "main": {
                "default": "{{ pre }} {{ outer }}",
                "components": {
                    "pre": [{"version": "a", "content": "A"}, {"version": "b", "content": "B"}],
                    "tone": [{"version": "x", "content": "X"}, {"version": "y", "content": "Y"}],
                    "p": "{{ q }}", "q": "{{ p }}"
                }
            }
        }));
        assert_eq!(
            errors,
            ["components refer to each other in a cycle: p -> q -> p"]
        );
        let t = s.template("main/default").unwrap();
        let names: Vec<&str> = s.product[t]
            .iter()
            .map(|&c| s.comps[c].name.as_str())
            .collect();
        assert_eq!(names, ["pre", "tone"]);
        let visible: Vec<&str> = s.spaces[s.space_at("main").unwrap()]
            .visible
            .keys()
            .map(String::as_str)
            .collect();
        assert_eq!(visible, ["pre", "tone", "p", "q", "outer"]);
    }

    #[test]
    fn duplicates_and_syntax_errors_are_reported_and_the_rest_kept() {
        let (s, errors) = store(serde_json::json!({
            "main": {"ok": "fine", "bad": "{% if %}", "components": {"c": "x"}},
        }));
        assert_eq!(errors, ["template `main/bad`: unexpected end of block"]);
        assert!(s.template("main/ok").is_some() && s.template("main/bad").is_none());
        let mut errors = Vec::new();
        let defs = [
            read_value(
                &serde_json::json!({"main": {"x": "1"}}),
                "a.yaml",
                &Default::default(),
            )
            .defs,
            read_value(
                &serde_json::json!({"main": {"x": "2"}}),
                "b.yaml",
                &Default::default(),
            )
            .defs,
        ]
        .concat();
        Store::build(defs, None, PromptLimits::default(), &mut errors);
        assert_eq!(errors[0].kind(), ErrorKind::DuplicateId);
        assert_eq!(
            errors[0].message(),
            "template `main/x` is defined twice: in a.yaml and in b.yaml"
        );
    }
}
